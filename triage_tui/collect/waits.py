"""What every blocked thread of the target waits on, and who would have to act: the wait-for edges.

Replaces the join an engineer does by hand with `cat /proc/PID/task/TID/syscall`, `ls -l /proc/PID/fd`,
`cat /proc/PID/fdinfo/FD`, `ss -xpn` / `ss -tanp`, `grep ADDR /proc/PID/maps` and `ps --ppid`. Nothing
is attached to and nothing paused: every read is a /proc file or a netlink dump (poll/select fd lists
are read from /proc/PID/mem, which needs the same access as /proc/PID/syscall and stops nothing).

Cost: only threads in S or D state are resolved; the fd tables (fd → "pipe:[N]") of the tree are
read once per refresh and only when some wait needs a holder; the socket dumps once, when a socket is
waited on; maps only for a futex on a shared mapping. A thread that ran on, an fd that closed, a
process that exited between two reads: that wait is skipped, never an exception.

Standard library only and Python 3.8-compatible: the SSH agent ships this module to the node.
"""

from __future__ import annotations

import os
import stat as stat_module
import time
from collections.abc import Sequence
from typing import NamedTuple, Optional

from ..model.unavailable import Unavailable
from ..model.snapshot import ProcessInfo
from ..model.waits import Wait, WaitSource
from ..parse.syscalls import Syscall, parse_syscall, signed
from .proc_table import ProcTable, read_bytes, read_text
from .socket_table import SocketEnd, SocketTable

READS = frozenset({"read", "readv", "pread64", "preadv", "preadv2", "recvfrom", "recvmsg", "recvmmsg"})
WRITES = frozenset({"write", "writev", "pwrite64", "sendto", "sendmsg", "sendfile", "splice"})
POLLS = frozenset({"poll", "ppoll"})
SELECTS = frozenset({"select", "pselect6"})
EPOLLS = frozenset({"epoll_wait", "epoll_pwait", "epoll_pwait2"})
SLEEPS = frozenset({"nanosleep", "clock_nanosleep"})
SIGNAL_WAITS = frozenset({"pause", "rt_sigsuspend", "rt_sigtimedwait"})
FUTEX_PRIVATE_FLAG = 128
MAX_POLL_FDS = 256
OUTSIDE_TTL_S = 10.0
MAX_PEERS = 64  # peers kept per wait: a socket inherited by 1,000 forks must not cost 1,000² in every face  # how long a scan of the processes outside the tree is reused  # a poll set larger than this is read in part (the first ones)
NO_ACCESS = Unavailable("/proc/PID/task/TID/syscall: permission denied (it needs ptrace read access)",
                        "run triage as the target's user or as root; check kernel.yama.ptrace_scope")


def _read_all(path: str) -> str:
    """A /proc file that may exceed one page (maps, mountinfo): read_text stops after the first read,
    and the kernel hands these out a page at a time."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


class _Holder(NamedTuple):
    pid: int
    fd: int


class _Resolved(NamedTuple):
    """One fd as a wait: kind, object, peers, detail and the TCP facts the engine reads."""

    kind: str
    object: str
    peers: tuple[int, ...] = ()
    detail: str = ""
    address: str = ""
    socket_state: str = ""
    not_accepted: bool = False
    path: str = ""
    fs_type: str = ""


class Carried(NamedTuple):
    """What one refresh read of a single-threaded process, kept for the next: a process that has
    provably not run since (its context-switch counts did not move) has the same system call and the
    same fd table, so they are not read again. Its peers are still resolved afresh every refresh."""

    starttime: int
    syscall: Optional[str]  # the syscall file as read (None: not read)
    links: Optional[dict[int, str]]  # fd → link target (None: not read)
    modes: dict[int, int]  # fd → O_ACCMODE, for the fds whose fdinfo was read
    waits: Optional[tuple[Wait, ...]] = None  # what it waited on (before the shared-futex notes)
    tree: frozenset = frozenset()  # the PIDs of that refresh


class _Refresh:
    """Per-refresh caches: fd tables, socket dumps, maps, mount tables (each read at most once)."""

    def __init__(self, pids: Sequence[int], table: Optional[ProcTable], proc: str,
                 carry: Optional[dict[int, Carried]] = None, unchanged: frozenset = frozenset(),
                 outside: Optional[tuple[float, dict[str, list[_Holder]]]] = None) -> None:
        self.pids = list(pids)
        self._modes: dict[int, dict[int, int]] = {}
        self._syscalls: dict[int, str] = {}
        self.tree = set(pids)
        self.table = table
        self.proc = proc
        self.sockets = SocketTable()
        self._links: dict[int, dict[int, str]] = {}
        self._owners: Optional[dict[str, list[_Holder]]] = None
        self._outside_scanned = False
        self.outside = outside  # (monotonic time, link → holders) of the last scan of other processes
        self._maps: dict[int, list[tuple[int, int, str, int, str, int, str]]] = {}
        self._mounts: dict[int, list[tuple[str, str]]] = {}
        self._ends: dict[tuple[str, bool], tuple[list[_Holder], list[_Holder]]] = {}
        self.reusable: dict[int, tuple[Wait, ...]] = {}
        self._kept: dict[int, Carried] = {}  # reused whole: carried on as the same object
        self.produced: dict[int, list[Wait]] = {}
        tree = frozenset(pids)
        # every Carried of one refresh holds the same tree: compare it once, not once per process
        same_tree = bool(carry) and next(iter(carry.values())).tree == tree  # type: ignore[union-attr]
        for pid in unchanged:  # the provably idle: what they showed last refresh is what they show now
            before = (carry or {}).get(pid)
            stat = table.stats.get(pid) if table is not None else None
            if before is None or stat is None or stat.starttime != before.starttime or stat.num_threads != 1:
                continue
            if before.links is not None:
                self._links[pid] = before.links
            if before.syscall is not None:
                self._syscalls[pid] = before.syscall
            self._modes[pid] = before.modes  # shared: only ever added to, and only with what is true now
            # Its whole wait stands as it was when nothing it depends on can have changed either: the
            # tree is the same set of processes (no new holder of an end, no child gone), every peer is
            # idle too, and no peer is outside the tree or beyond a TCP connection (those are re-read).
            if before.waits is not None and same_tree and all(
                    not w.peer_outside and not (w.address and not w.peer_pids)
                    and all(peer in unchanged for peer in w.peer_pids) for w in before.waits):
                self.reusable[pid] = before.waits
                self._kept[pid] = before
        self._sharers: dict[tuple[str, int], list[int]] = {}

    # -- fd tables
    def links(self, pid: int) -> dict[int, str]:
        """fd → link target ("pipe:[12]", "socket:[34]", "/path") of `pid` (`ls -l /proc/PID/fd`)."""
        got = self._links.get(pid)
        if got is None:
            got = {}
            base = f"{self.proc}/{pid}/fd"
            try:
                names = os.listdir(base)
            except OSError:
                names = []
            for name in names:
                try:
                    got[int(name)] = os.readlink(f"{base}/{name}")
                except (OSError, ValueError):
                    continue  # closed meanwhile
            self._links[pid] = got
        return got

    def owners(self, link: str) -> list[_Holder]:
        """Every process holding `link` open: the tree first; the rest of the machine only when the
        tree holds no other end (a peer outside the target: a store, a sibling job, an upstream)."""
        if self._owners is None:
            self._owners = {}
            for pid in self.pids:
                self._index(pid)
        return self._owners.get(link, [])

    def _index(self, pid: int) -> None:
        assert self._owners is not None
        for fd, target in self.links(pid).items():
            if target.startswith(("pipe:", "socket:")) or target.startswith("/"):
                self._owners.setdefault(target, []).append(_Holder(pid, fd))

    def scan_outside(self) -> None:
        """Index the fd tables of every other process (what `ss -p` and `lsof` walk): once per refresh,
        and from the previous scan while it is younger than OUTSIDE_TTL_S (a reader whose writer is
        outside the tree would otherwise walk the whole machine every refresh); a holder that exited
        meanwhile is then named for at most that long."""
        if self._outside_scanned:
            return
        self._outside_scanned = True
        self.owners("")  # the tree's index first
        assert self._owners is not None
        owners = self._owners
        now = time.monotonic()
        if self.outside is not None and now - self.outside[0] < OUTSIDE_TTL_S:
            index = self.outside[1]
        else:
            index = {}
            try:
                names = os.listdir(self.proc)
            except OSError:
                names = []
            for name in names:
                if name.isdecimal() and int(name) not in self.tree:
                    pid = int(name)
                    for fd, target in self.links(pid).items():
                        if target.startswith(("pipe:", "socket:")) or target.startswith("/"):
                            index.setdefault(target, []).append(_Holder(pid, fd))
            self.outside = (now, index)
        for target, holders in index.items():
            owners.setdefault(target, []).extend(h for h in holders if h.pid not in self.tree)

    def pipe_ends(self, link: str) -> tuple[list[_Holder], list[_Holder]]:
        """(holders of the read end, holders of the write end) of a pipe, worked out once per refresh
        (1,000 ranks reading one launcher pipe must not read 1,000 × 1,000 fdinfo files)."""
        key = (link, self._outside_scanned)
        got = self._ends.get(key)
        if got is None:
            holders = self.owners(link)
            modes = [(h, self.fd_mode(h.pid, h.fd)) for h in holders]
            got = ([h for h, m in modes if m in (0, 2)], [h for h, m in modes if m in (1, 2)])
            self._ends[key] = got
        return got

    def sharers(self, pid: int, dev: str, inode: int) -> list[int]:
        """The other processes of the tree mapping the file (dev, inode), found once per file."""
        key = (dev, inode)
        got = self._sharers.get(key)
        if got is None:
            got = [p for p in self.pids if any(m[4] == dev and m[5] == inode for m in self.maps(p))]
            self._sharers[key] = got
        return [p for p in got if p != pid]

    def fd_mode(self, pid: int, fd: int) -> int:
        """O_ACCMODE of the fd (0 read, 1 write, 2 both) from fdinfo's octal flags; -1 unreadable."""
        modes = self._modes.setdefault(pid, {})
        got = modes.get(fd)
        if got is not None:
            return got
        got = -1
        try:  # the fd link's own permission bits are its open mode (lr-x: read, l-wx: write): one lstat
            bits = os.lstat(f"{self.proc}/{pid}/fd/{fd}").st_mode & 0o600
            got = {0o400: 0, 0o200: 1, 0o600: 2}.get(bits, -1)
        except OSError:
            pass
        if got >= 0:
            modes[fd] = got
            return got
        try:
            for line in read_text(f"{self.proc}/{pid}/fdinfo/{fd}").splitlines():
                if line.startswith("flags:"):
                    got = int(line.split()[1], 8) & 3
                    break
        except (OSError, ValueError, IndexError):
            pass
        modes[fd] = got
        return got

    def syscall_text(self, pid: int, tid: int) -> str:
        """/proc/PID/task/TID/syscall (carried for a single-threaded process that has not run). Raises OSError."""
        if tid == pid and pid in self._syscalls:
            return self._syscalls[pid]
        text = read_bytes(f"{self.proc}/{pid}/task/{tid}/syscall").decode("ascii", "replace")
        if tid == pid:
            self._syscalls[pid] = text
        return text

    def keep(self) -> dict[int, Carried]:
        """What the next refresh may reuse: the single-threaded processes' reads of this one."""
        out: dict[int, Carried] = {}
        if self.table is None:
            return out
        tree = frozenset(self.pids)
        for pid in self.pids:
            kept = self._kept.get(pid)
            if kept is not None:
                out[pid] = kept._replace(tree=tree) if kept.tree is not tree else kept
                continue
            stat = self.table.stats.get(pid)
            if stat is None or stat.num_threads != 1:
                continue
            produced = self.produced.get(pid)
            out[pid] = Carried(stat.starttime, self._syscalls.get(pid), self._links.get(pid),
                               self._modes.get(pid, {}), tuple(produced) if produced is not None else None, tree)
        return out

    def fdinfo(self, pid: int, fd: int) -> str:
        try:
            return _read_all(f"{self.proc}/{pid}/fdinfo/{fd}")  # an epoll's can exceed a page
        except OSError:
            return ""

    # -- processes
    def name(self, pid: int) -> str:
        stat = self.table.stats.get(pid) if self.table is not None else None
        if stat is not None:
            return stat.comm
        try:
            return read_text(f"{self.proc}/{pid}/comm").strip()
        except OSError:
            return "?"

    def who(self, pid: int) -> str:
        outside = "" if pid in self.tree else ", outside the target"
        return f"PID {pid} ({self.name(pid)}{outside})"

    def state(self, pid: int) -> str:
        stat = self.table.stats.get(pid) if self.table is not None else None
        if stat is not None:
            return stat.state
        try:
            return read_text(f"{self.proc}/{pid}/stat").rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            return ""

    def children(self, pid: int) -> list[int]:
        if self.table is not None:
            return list(self.table.children.get(pid, ()))
        out = []
        for name in os.listdir(self.proc):
            if name.isdecimal():
                try:
                    rest = read_text(f"{self.proc}/{name}/stat").rpartition(")")[2].split()
                except OSError:
                    continue
                if len(rest) > 1 and rest[1] == str(pid):
                    out.append(int(name))
        return sorted(out)

    # -- maps and mounts
    def maps(self, pid: int) -> list[tuple[int, int, str, int, str, int, str]]:
        """(start, end, perms, offset, dev, inode, path) of every mapping of `pid`."""
        got = self._maps.get(pid)
        if got is None:
            got = []
            try:
                text = _read_all(f"{self.proc}/{pid}/maps")
            except OSError:
                text = ""
            for line in text.splitlines():
                parts = line.split(None, 5)
                if len(parts) < 5:
                    continue
                start, _, end = parts[0].partition("-")
                try:
                    got.append((int(start, 16), int(end, 16), parts[1], int(parts[2], 16), parts[3], int(parts[4]),
                                parts[5].strip() if len(parts) > 5 else ""))
                except ValueError:
                    continue
            self._maps[pid] = got
        return got

    def fs_type(self, pid: int, path: str) -> str:
        """The type of the filesystem `path` lies on, from the process's own mount table."""
        mounts = self._mounts.get(pid)
        if mounts is None:
            mounts = []
            try:
                for line in _read_all(f"{self.proc}/{pid}/mountinfo").splitlines():
                    left, _, right = line.partition(" - ")
                    fields = left.split()
                    if len(fields) >= 5 and right:
                        point = fields[4].replace("\\040", " ")
                        mounts.append((point, right.split()[0]))
            except OSError:
                pass
            self._mounts[pid] = mounts
        best, kind = "", ""
        for point, fs in mounts:
            inside = path == point or path.startswith(point.rstrip("/") + "/")
            if inside and len(point) >= len(best):
                best, kind = point, fs
        return kind


def _threads(refresh: _Refresh, pid: int) -> list[tuple[int, str]]:
    """(tid, state) of every thread of `pid`; the main thread first. A single-threaded process's
    state comes from this tick's table (no extra read)."""
    stat = refresh.table.stats.get(pid) if refresh.table is not None else None
    if stat is not None and stat.num_threads == 1:
        return [(pid, stat.state)]
    out = []
    try:
        tids = sorted(int(t) for t in os.listdir(f"{refresh.proc}/{pid}/task") if t.isdecimal())
    except OSError:
        return []
    for tid in tids:
        try:
            rest = read_text(f"{refresh.proc}/{pid}/task/{tid}/stat").rpartition(")")[2].split()
        except OSError:
            continue  # the thread ended between the listing and the read
        if rest:
            out.append((tid, rest[0]))
    out.sort(key=lambda t: t[0] != pid)
    return out


def _read_mem(refresh: _Refresh, pid: int, address: int, size: int) -> Optional[bytes]:
    """`size` bytes of the target's memory at `address` (/proc/PID/mem: no attach, no stop); None if unreadable."""
    if address == 0 or size <= 0:
        return None
    try:
        fd = os.open(f"{refresh.proc}/{pid}/mem", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.pread(fd, size, address)
        return data if len(data) == size else None
    except (OSError, OverflowError):
        return None
    finally:
        os.close(fd)


def _poll_fds(refresh: _Refresh, pid: int, call: Syscall) -> Optional[list[int]]:
    """The fds of a poll/ppoll (struct pollfd {int fd; short events, revents;}) or a select's read and
    write sets (fd_set bitmaps); [] for a pure timeout; None when the memory cannot be read."""
    import struct

    if call.name in POLLS:
        count = min(call.args[1], MAX_POLL_FDS)
        if count == 0:
            return []
        data = _read_mem(refresh, pid, call.args[0], 8 * count)
        if data is None:
            return None
        fds = [struct.unpack_from("=i", data, 8 * i)[0] for i in range(count)]
        return [fd for fd in fds if fd >= 0]
    nfds = min(signed(call.args[0], 32), 1024)
    if nfds <= 0 or (call.args[1] == 0 and call.args[2] == 0):
        return []
    size = (nfds + 63) // 64 * 8
    out: list[int] = []
    for pointer in (call.args[1], call.args[2]):
        if pointer == 0:
            continue
        data = _read_mem(refresh, pid, pointer, size)
        if data is None:
            return None
        bits = int.from_bytes(data, "little")
        out += [fd for fd in range(nfds) if bits >> fd & 1]
    return sorted(set(out))


def _epoll_fds(refresh: _Refresh, pid: int, epfd: int) -> Optional[list[int]]:
    """The fds an epoll instance watches: the `tfd:` lines of /proc/PID/fdinfo/EPFD."""
    text = refresh.fdinfo(pid, epfd)
    if not text:
        return None
    out = []
    for line in text.splitlines():
        if line.startswith("tfd:"):
            try:
                out.append(int(line.split()[1]))
            except (IndexError, ValueError):
                continue
    return out


def _holders_text(refresh: _Refresh, holders: Sequence[_Holder], end: str) -> str:
    by_pid: dict[int, list[int]] = {}
    for h in holders:
        by_pid.setdefault(h.pid, []).append(h.fd)
    parts = [f"{refresh.who(pid)} fd {', '.join(str(f) for f in fds[:4])}" for pid, fds in list(by_pid.items())[:6]]
    more = f" and {len(by_pid) - 6} more processes" if len(by_pid) > 6 else ""
    return f"{end} held by " + "; ".join(parts) + more


def _pipe(refresh: _Refresh, pid: int, fd: int, link: str, writing: bool) -> _Resolved:
    """A pipe (or FIFO): the reader waits on the holders of the write end, a writer on the readers."""
    readers, writers = refresh.pipe_ends(link)
    ends = readers if writing else writers
    if not [h for h in ends if h.pid != pid]:
        refresh.scan_outside()
        readers, writers = refresh.pipe_ends(link)
        ends = readers if writing else writers
    ends = [h for h in ends if (h.pid, h.fd) != (pid, fd)]
    end = "read end" if writing else "write end"
    others = [h for h in ends if h.pid != pid]
    own = [h for h in ends if h.pid == pid]
    peers = tuple(sorted({h.pid for h in others}))
    if others:
        detail = _holders_text(refresh, others, end)
        if own:
            detail += f"; this process holds the {end} too (fd {', '.join(str(h.fd) for h in own)})"
    elif own:
        detail = (f"the only {end} is this process's own fd {', '.join(str(h.fd) for h in own)}: "
                  f"{'nobody will read' if writing else 'no EOF will come and no one else writes'}")
    else:
        detail = f"no {end} is open in any process readable here"
    verb = "writes" if writing else "reads"
    return _Resolved("pipe", link, peers, f"{verb} {link}: {detail}")


def _socket(refresh: _Refresh, pid: int, fd: int, link: str, accepting: bool) -> _Resolved:
    try:
        inode = int(link[len("socket:["):-1])
    except ValueError:
        return _Resolved("unknown", link)
    end = refresh.sockets.find(inode)
    if end is None:
        why = refresh.sockets.error or "not in this network namespace's socket tables (netlink, TCP, UDP, unix)"
        return _Resolved("unknown", link, detail=f"{link}: {why}")
    if end.proto == "unix":
        return _unix(refresh, pid, link, end, accepting)
    return _inet(refresh, pid, link, end, accepting)


def _unix(refresh: _Refresh, pid: int, link: str, end: SocketEnd, accepting: bool) -> _Resolved:
    name = f" {end.local}" if end.local else ""
    if end.state == "LISTEN" or accepting:
        return _Resolved("unix", f"{link}{name}",
                         detail=f"accepts connections on unix {end.kind}{name or ' ' + link} (waits on clients)")
    if not end.peer_inode:
        return _Resolved("unix", f"{link}{name}", detail=f"unix {end.kind}{name} with no peer (unconnected)")
    peer_link = f"socket:[{end.peer_inode}]"
    holders = refresh.owners(peer_link)
    if not holders:
        refresh.scan_outside()
        holders = refresh.owners(peer_link)
    others = [h for h in holders if h.pid != pid]
    peers = tuple(sorted({h.pid for h in others}))
    queued = f", {end.rqueue} bytes unread" if end.rqueue else ""
    if others:
        detail = f"unix {end.kind}{name}: peer {peer_link} " + _holders_text(refresh, others, "")[1:]
    elif holders:
        detail = f"unix {end.kind}{name}: the peer {peer_link} is held by this process itself"
    else:
        detail = f"unix {end.kind}{name}: the peer {peer_link} is held by no process readable here"
    return _Resolved("unix", f"{link}{name}", peers, detail + queued)


def _is_loopback(address: str) -> bool:
    host = address.rpartition(":")[0]
    return host.startswith("127.") or host == "[::1]"


def _inet(refresh: _Refresh, pid: int, link: str, end: SocketEnd, accepting: bool) -> _Resolved:
    if end.state == "LISTEN" or accepting:
        queued = f", {end.rqueue} waiting to be accepted" if end.rqueue else ""
        return _Resolved(end.proto, f"{end.proto} {end.local}",
                         detail=f"accepts connections on {end.local} (waits on clients{queued})",
                         socket_state=end.state)
    what = f"{end.proto} {end.local} → {end.remote}"
    queues = f" (recv-q {end.rqueue}, send-q {end.wqueue})" if end.rqueue or end.wqueue else ""
    if end.proto == "udp" and end.remote.endswith(":0"):
        return _Resolved("udp", f"udp {end.local}", detail=f"udp {end.local}: datagrams from anyone{queues}",
                         socket_state=end.state)
    server = refresh.sockets.server_side(end) if end.proto == "tcp" else None
    if server is not None and server.inode == 0 and server.state in ("ESTABLISHED", "SYN_RECV"):
        listener = refresh.sockets.listener(end.remote)
        owners = refresh.owners(f"socket:[{listener.inode}]") if listener is not None else []
        if listener is not None and not owners:
            refresh.scan_outside()
            owners = refresh.owners(f"socket:[{listener.inode}]")
        peers = tuple(sorted({h.pid for h in owners}))
        who = ", ".join(refresh.who(p) for p in peers) or "a process not readable here"
        return _Resolved("tcp", what, peers,
                         f"{what}: the connection sits in the accept queue of the listener on {end.remote} "
                         f"({who}), which never accepted it{queues}",
                         address=end.remote, socket_state=end.state, not_accepted=True)
    if server is not None and server.inode:
        owners = refresh.owners(f"socket:[{server.inode}]")
        if not owners:
            refresh.scan_outside()
            owners = refresh.owners(f"socket:[{server.inode}]")
        peers = tuple(sorted({h.pid for h in owners if h.pid != pid}))
        who = ", ".join(refresh.who(p) for p in peers) or "no process readable here"
        state = f" [{end.state}]" if end.state != "ESTABLISHED" else ""
        return _Resolved(end.proto, what, peers, f"{what}{state}: the other end is held by {who}{queues}",
                         address=end.remote, socket_state=end.state)
    where = "on this machine, other end not found" if _is_loopback(end.remote) else "remote"
    state = {"SYN_SENT": ": connecting, no answer yet", "CLOSE_WAIT": ": the peer closed its end"}.get(end.state, "")
    return _Resolved(end.proto, what, (), f"{what} ({where}){state}{queues}", address=end.remote,
                     socket_state=end.state)


def _file(refresh: _Refresh, pid: int, fd: int, link: str) -> _Resolved:
    pos = ""
    for line in refresh.fdinfo(pid, fd).splitlines():
        if line.startswith("pos:"):
            pos = line.split()[1]
            break
    fs = refresh.fs_type(pid, link) if link.startswith("/") else ""
    at = f" at offset {pos}" if pos else ""
    on = f" on {fs}" if fs else ""
    return _Resolved("file", link, (), f"{link}{at}{on}", path=link, fs_type=fs)


def resolve_fd(refresh: _Refresh, pid: int, fd: int, syscall: str) -> Optional[_Resolved]:
    """What `fd` of `pid` is, as a wait; None when it closed meanwhile."""
    link = refresh.links(pid).get(fd)
    if link is None:
        try:
            link = os.readlink(f"{refresh.proc}/{pid}/fd/{fd}")
        except OSError:
            return None
    writing = syscall in WRITES
    if link.startswith("pipe:"):
        return _pipe(refresh, pid, fd, link, writing)
    if link.startswith("socket:"):
        return _socket(refresh, pid, fd, link, syscall in ("accept", "accept4"))
    if link.startswith("anon_inode:"):
        what = link[len("anon_inode:"):].strip("[]")
        if what == "eventfd":
            return _Resolved("eventfd", f"eventfd (fd {fd})",
                             detail="eventfd: woken by whoever shares it (a thread, or a process it was passed to)")
        if what == "eventpoll":
            return _Resolved("epoll", f"epoll (fd {fd})")
        if what == "timerfd":
            return _Resolved("sleep", f"timerfd (fd {fd})", detail="a timer")
        if what == "signalfd":
            return _Resolved("unknown", f"signalfd (fd {fd})", detail="waits for a signal")
        return _Resolved("unknown", link)
    if link.startswith("/"):
        try:
            if stat_module.S_ISFIFO(os.stat(f"{refresh.proc}/{pid}/fd/{fd}").st_mode):
                return _pipe(refresh, pid, fd, link, writing)
        except OSError:
            return None
        return _file(refresh, pid, fd, link)
    return _Resolved("unknown", link)


def _merge(refresh: _Refresh, pid: int, fds: Sequence[int], syscall: str, kind: str) -> Optional[_Resolved]:
    """A wait on several fds (poll, select, epoll): the peers of all, the TCP facts of the first."""
    parts: list[tuple[int, _Resolved]] = []
    for fd in fds:
        got = resolve_fd(refresh, pid, fd, "read")
        if got is not None:
            parts.append((fd, got))
    if not parts:
        return None
    if len(parts) == 1 and kind != "epoll":
        return parts[0][1]
    peers = tuple(sorted({p for _, r in parts for p in r.peers}))
    first_net = next((r for _, r in parts if r.address), None)
    objects = ", ".join(f"fd {fd} {r.object}" for fd, r in parts[:6]) + (" …" if len(parts) > 6 else "")
    details = "; ".join(r.detail for _, r in parts if r.detail)
    main = kind if kind == "epoll" else next((r.kind for _, r in parts if r.peers or r.address), parts[0][1].kind)
    return _Resolved(main, f"{syscall} on {len(parts)} fds: {objects}", peers, details,
                     address=first_net.address if first_net else "",
                     socket_state=first_net.socket_state if first_net else "",
                     not_accepted=any(r.not_accepted for _, r in parts))


def _child(refresh: _Refresh, pid: int, call: Syscall) -> _Resolved:
    """wait4(pid, …) / waitid(idtype, id, …): the children it waits for, with their states."""
    if call.name == "wait4":
        which = signed(call.args[0], 32)
        wanted = [which] if which > 0 else refresh.children(pid)
        label = f"child PID {which}" if which > 0 else "any child"
    else:
        idtype, ident = call.args[0], signed(call.args[1], 32)
        wanted = [ident] if idtype == 1 else refresh.children(pid)
        label = f"child PID {ident}" if idtype == 1 else "any child"
    states = []
    for child in wanted:
        state = refresh.state(child)
        note = {"T": " stopped: it exits only once continued", "t": " stopped by a tracer",
                "Z": " a zombie"}.get(state, "")
        states.append(f"{refresh.who(child)} {state or 'gone'}{note}")
    detail = f"waits for {label}: " + ("; ".join(states) if states else "it has no children")
    return _Resolved("child", label, tuple(wanted), detail)


def _futex(refresh: _Refresh, pid: int, call: Syscall) -> tuple[_Resolved, str]:
    """The mapping the futex word lies in: private (an in-process lock) or a shared file (a
    cross-process primitive, joined with every process of the tree that maps the same file)."""
    address, op = call.args[0], call.args[1]
    private = _Resolved("futex", f"in-process lock at {address:#x}", (),
                        "an in-process lock or condition (the stacks say which)")
    if op & FUTEX_PRIVATE_FLAG:
        return private, ""
    for start, end, perms, offset, dev, inode, path in refresh.maps(pid):
        if start <= address < end:
            if perms[3:4] != "s" or inode == 0:
                return private, ""
            key = f"{dev}:{inode}+{offset + address - start:#x}"
            sharers = refresh.sharers(pid, dev, inode)
            name = path or f"{dev}:{inode}"
            who = ", ".join(refresh.who(p) for p in sharers) or "no other process of the target"
            return _Resolved("futex", f"{name}+{offset + address - start:#x}", tuple(sharers),
                             f"a cross-process primitive in {name} (a semaphore, a barrier, a shared lock), "
                             f"mapped also by {who}", path=path), key
    return private, ""


def _resolve(refresh: _Refresh, pid: int, call: Syscall) -> tuple[_Resolved, Optional[int], str]:
    """The wait of one thread in `call`: (resolved, fd waited on, shared futex key)."""
    name = call.name
    if name in READS or name in WRITES or name in ("accept", "accept4", "connect", "flock"):
        fd = signed(call.args[0], 32)
        got = resolve_fd(refresh, pid, fd, name)
        if got is None:
            return _Resolved("unknown", f"fd {fd}", detail=f"{name} on fd {fd}, which closed meanwhile"), fd, ""
        if name == "flock":
            got = got._replace(kind="file", detail=f"waits for a file lock (flock) on {got.object}")
        return got, fd, ""
    if name == "fcntl" and call.args[1] in (7, 38):  # F_SETLKW, F_OFD_SETLKW
        fd = signed(call.args[0], 32)
        got = resolve_fd(refresh, pid, fd, name)
        target = got.object if got is not None else f"fd {fd}"
        return _Resolved("file", target, (), f"waits for a record lock (fcntl) on {target}"), fd, ""
    if name in POLLS or name in SELECTS:
        fds = _poll_fds(refresh, pid, call)
        if fds is None:
            return _Resolved("unknown", name, (), f"{name}: its fd list is unreadable (/proc/PID/mem)"), None, ""
        if not fds:
            return _Resolved("sleep", name, (), f"{name} with no fds: a timed sleep"), None, ""
        got = _merge(refresh, pid, fds, name, "")
        if got is None:
            return _Resolved("unknown", name, (), f"{name} on fds that closed meanwhile"), None, ""
        return got, fds[0], ""
    if name in EPOLLS:
        epfd = signed(call.args[0], 32)
        fds = _epoll_fds(refresh, pid, epfd)
        if fds is None:
            return _Resolved("epoll", f"epoll fd {epfd}", (), "its watch list is unreadable"), epfd, ""
        if not fds:
            return _Resolved("epoll", f"epoll fd {epfd}", (), "watches no fds: a timed sleep"), epfd, ""
        got = _merge(refresh, pid, fds, name, "epoll")
        if got is None:
            return _Resolved("epoll", f"epoll fd {epfd}", (), "its fds closed meanwhile"), epfd, ""
        return got._replace(object=f"epoll fd {epfd}: {got.object}"), epfd, ""
    if name in ("wait4", "waitid"):
        return _child(refresh, pid, call), None, ""
    if name == "futex":
        got, key = _futex(refresh, pid, call)
        return got, None, key
    if name in SLEEPS:
        return _Resolved("sleep", name, (), "sleeps (a poll loop or a back-off, not a wait on anyone)"), None, ""
    if name in SIGNAL_WAITS:
        return _Resolved("unknown", name, (), "waits for a signal"), None, ""
    return _Resolved("unknown", name, (), f"in {name}"), None, ""


def _kernel_stack(refresh: _Refresh, pid: int, tid: int) -> tuple[str, ...]:
    try:
        text = read_text(f"{refresh.proc}/{pid}/task/{tid}/stack")
    except OSError:
        return ()
    out = []
    for line in text.splitlines():
        frame = line.split("] ", 1)[-1].split("+0x", 1)[0].strip()
        if frame:
            out.append(frame)
    return tuple(out)


def collect_waits(pids: Sequence[int], table: Optional[ProcTable] = None, proc: str = "/proc",
                  machine: Optional[str] = None) -> tuple[tuple[Wait, ...], WaitSource]:
    """The waits of every blocked thread of `pids` (their running main threads as `running`)."""
    waits, source, _, _ = _collect(pids, table, proc, machine, None, frozenset())
    return waits, source


def _collect(pids: Sequence[int], table: Optional[ProcTable], proc: str, machine: Optional[str],
             carry: Optional[dict[int, Carried]], unchanged: frozenset,
             outside: Optional[tuple[float, dict[str, list[_Holder]]]] = None
             ) -> tuple[tuple[Wait, ...], WaitSource, dict[int, Carried], Optional[tuple[float, dict[str, list[_Holder]]]]]:
    """collect_waits; `carry` (from the previous refresh) and `unchanged` (PIDs that provably did not run
    since) let it skip the syscall and fd-table reads of idle single-threaded processes."""
    started = time.perf_counter()
    refresh = _Refresh(pids, table, proc, carry, unchanged, outside)
    waits: list[Wait] = []
    blocked = 0
    for pid in pids:
        reused = refresh.reusable.get(pid)
        if reused is not None:
            waits.extend(reused)
            refresh.produced[pid] = list(reused)
            blocked += len(reused)
            continue
        first = len(waits)
        in_process_locks: list[int] = []
        for tid, state in _threads(refresh, pid):
            if state == "R":
                if tid == pid:
                    waits.append(Wait(pid=pid, tid=tid, kind="running", object="on CPU", state="R"))
                continue
            if state in ("T", "t"):
                if tid == pid:
                    waits.append(Wait(pid=pid, tid=tid, kind="unknown", object="stopped", state=state,
                                      detail="stopped (SIGSTOP or a tracer): it runs again only once continued"))
                continue
            if state not in ("S", "D"):
                continue
            blocked += 1
            try:
                text = refresh.syscall_text(pid, tid)
            except PermissionError:
                if tid == pid:
                    waits.append(Wait(pid=pid, tid=tid, kind="unknown", object="?", state=state, error=NO_ACCESS,
                                      detail=str(NO_ACCESS)))
                continue
            except OSError:
                continue  # the thread exited
            call = parse_syscall(text, machine)
            if call is None and state == "D" and not text.startswith("running"):
                # uninterruptible outside a system call: a page fault (a mapped file on a slow
                # filesystem, swap) or a kernel wait; the kernel stack says which where readable
                stack = _kernel_stack(refresh, pid, tid)
                waits.append(Wait(pid=pid, tid=tid, kind="unknown", object="D state outside a system call",
                                  detail="uninterruptible, not in a system call: a page fault on a mapped file "
                                         "or swap, or a kernel wait" + (f" (in {stack[0]})" if stack else ""),
                                  state=state, kernel_stack=stack))
                continue
            if call is None:
                continue  # it ran on (or sleeps outside a system call): nothing to resolve
            try:
                got, fd, key = _resolve(refresh, pid, call)
            except OSError:
                continue  # its process exited mid-resolution
            if got.kind == "futex" and not key and tid != pid:
                in_process_locks.append(tid)
                continue
            stack = _kernel_stack(refresh, pid, tid) if state == "D" else ()
            beyond = tuple(p for p in got.peers[:MAX_PEERS] if p not in refresh.tree)
            waits.append(Wait(pid=pid, tid=tid, kind=got.kind, object=got.object, peer_pids=got.peers[:MAX_PEERS],
                              peers_more=max(0, len(got.peers) - MAX_PEERS),
                              detail=got.detail, syscall=call.name, state=state, fd=fd, address=got.address,
                              socket_state=got.socket_state, not_accepted=got.not_accepted, peer_outside=beyond,
                              path=got.path, fs_type=got.fs_type, shared_key=key, kernel_stack=stack))
        if in_process_locks:
            waits.append(Wait(pid=pid, tid=in_process_locks[0], kind="futex", object="in-process locks",
                              detail=f"{len(in_process_locks)} other threads on in-process locks or conditions",
                              syscall="futex", state="S", threads=len(in_process_locks)))
        refresh.produced[pid] = waits[first:]
    _note_shared_waiters(waits)
    kept = refresh.keep()
    ms = (time.perf_counter() - started) * 1000
    error = Unavailable(refresh.sockets.error) if refresh.sockets.error else None
    return tuple(waits), WaitSource(blocked_threads=blocked, duration_ms=ms, error=error), kept, refresh.outside


def unchanged_since_last(rows: Sequence[ProcessInfo]) -> frozenset:
    """PIDs of single-threaded processes that provably have not run since the previous refresh: both
    context-switch counts unchanged (ProcessCollector's deltas, read or proved by it)."""
    return frozenset(p.pid for p in rows if not p.exited and p.threads == 1 and p.state in ("S", "D")
                     and p.ctx_voluntary_delta == 0 and p.ctx_involuntary_delta == 0)


class WaitCollector:
    """collect_waits with memory: idle single-threaded processes are not re-read (see Carried)."""

    def __init__(self) -> None:
        self._carry: dict[int, Carried] = {}
        self._outside: Optional[tuple[float, dict[str, list[_Holder]]]] = None

    def collect(self, pids: Sequence[int], table: Optional[ProcTable], unchanged: frozenset = frozenset()
                ) -> tuple[tuple[Wait, ...], WaitSource]:
        carry, self._carry = self._carry, {}  # a refresh that raises leaves nothing stale to reuse
        waits, source, self._carry, self._outside = _collect(pids, table, "/proc", None, carry, unchanged,
                                                             self._outside)
        return waits, source


def _note_shared_waiters(waits: list[Wait]) -> None:
    """A shared futex's detail says which sharers wait on the same word (they cannot be the ones to post it)."""
    on_key: dict[str, set] = {}
    for w in waits:
        if w.shared_key:
            on_key.setdefault(w.shared_key, set()).add(w.pid)
    for i, w in enumerate(waits):
        if not w.shared_key:
            continue
        also = sorted(p for p in on_key[w.shared_key] if p != w.pid)
        if also and "; also waiting on the same word" not in w.detail:
            extra = "; also waiting on the same word: " + ", ".join(f"PID {p}" for p in also)
            waits[i] = Wait(**{**w.__dict__, "detail": w.detail + extra})

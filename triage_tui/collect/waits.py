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
MAX_POLL_FDS = 256  # a poll set larger than this is read in part (the first ones)
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


class _Refresh:
    """Per-refresh caches: fd tables, socket dumps, maps, mount tables (each read at most once)."""

    def __init__(self, pids: Sequence[int], table: Optional[ProcTable], proc: str) -> None:
        self.pids = list(pids)
        self.tree = set(pids)
        self.table = table
        self.proc = proc
        self.sockets = SocketTable()
        self._links: dict[int, dict[int, str]] = {}
        self._owners: Optional[dict[str, list[_Holder]]] = None
        self._outside_scanned = False
        self._maps: dict[int, list[tuple[int, int, str, int, str, int, str]]] = {}
        self._mounts: dict[int, list[tuple[str, str]]] = {}

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
        """Index the fd tables of every other process once (what `ss -p` and `lsof` walk)."""
        if self._outside_scanned:
            return
        self._outside_scanned = True
        self.owners("")
        try:
            names = os.listdir(self.proc)
        except OSError:
            return
        for name in names:
            if name.isdecimal() and int(name) not in self.tree:
                self._index(int(name))

    def fd_mode(self, pid: int, fd: int) -> int:
        """O_ACCMODE of the fd (0 read, 1 write, 2 both) from fdinfo's octal flags; -1 unreadable."""
        try:
            for line in read_text(f"{self.proc}/{pid}/fdinfo/{fd}").splitlines():
                if line.startswith("flags:"):
                    return int(line.split()[1], 8) & 3
        except (OSError, ValueError, IndexError):
            pass
        return -1

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
    parts = [f"{refresh.who(pid)} fd {', '.join(str(f) for f in fds)}" for pid, fds in by_pid.items()]
    return f"{end} held by " + "; ".join(parts)


def _pipe(refresh: _Refresh, pid: int, fd: int, link: str, writing: bool) -> _Resolved:
    """A pipe (or FIFO): the reader waits on the holders of the write end, a writer on the readers."""
    holders = refresh.owners(link)
    want = (0, 2) if writing else (1, 2)
    ends = [h for h in holders if (h.pid, h.fd) != (pid, fd) and refresh.fd_mode(h.pid, h.fd) in want]
    if not [h for h in ends if h.pid != pid]:
        refresh.scan_outside()
        holders = refresh.owners(link)
        ends = [h for h in holders if (h.pid, h.fd) != (pid, fd) and refresh.fd_mode(h.pid, h.fd) in want]
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
            sharers = []
            for other in refresh.pids:
                if other == pid:
                    continue
                if any(m[4] == dev and m[5] == inode for m in refresh.maps(other)):
                    sharers.append(other)
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
    started = time.perf_counter()
    refresh = _Refresh(pids, table, proc)
    waits: list[Wait] = []
    blocked = 0
    for pid in pids:
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
                text = read_bytes(f"{proc}/{pid}/task/{tid}/syscall").decode("ascii", "replace")
            except PermissionError:
                if tid == pid:
                    waits.append(Wait(pid=pid, tid=tid, kind="unknown", object="?", state=state, error=NO_ACCESS,
                                      detail=str(NO_ACCESS)))
                continue
            except OSError:
                continue  # the thread exited
            call = parse_syscall(text, machine)
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
            outside = tuple(p for p in got.peers if p not in refresh.tree)
            waits.append(Wait(pid=pid, tid=tid, kind=got.kind, object=got.object, peer_pids=got.peers,
                              detail=got.detail, syscall=call.name, state=state, fd=fd, address=got.address,
                              socket_state=got.socket_state, not_accepted=got.not_accepted, peer_outside=outside,
                              path=got.path, fs_type=got.fs_type, shared_key=key, kernel_stack=stack))
        if in_process_locks:
            waits.append(Wait(pid=pid, tid=in_process_locks[0], kind="futex", object="in-process locks",
                              detail=f"{len(in_process_locks)} other threads on in-process locks or conditions",
                              syscall="futex", state="S", threads=len(in_process_locks)))
    _note_shared_waiters(waits)
    ms = (time.perf_counter() - started) * 1000
    error = Unavailable(refresh.sockets.error) if refresh.sockets.error else None
    return tuple(waits), WaitSource(blocked_threads=blocked, duration_ms=ms, error=error)


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
        if also:
            extra = "; also waiting on the same word: " + ", ".join(f"PID {p}" for p in also)
            waits[i] = Wait(**{**w.__dict__, "detail": w.detail + extra})

"""What one refresh of the wait-for graph reads of /proc, each file at most once, and what carries over.

The fd tables (`ls -l /proc/PID/fd`), open modes (`cat /proc/PID/fdinfo/FD`), the socket dumps (`ss -xpn`,
`ss -tanp`), maps (`cat /proc/PID/maps`) and mount tables of the tree, read lazily and kept for the refresh; the
rest of the machine's fd tables only when a peer lies outside the tree. A process that provably has not run
since the last refresh carries its reads (`Carried`) instead of reading them again.

Standard library only and Python 3.8-compatible: the SSH agent ships this module to the node.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import NamedTuple, Optional

from ..model.waits import Wait
from .proc_table import ProcTable, read_bytes, read_seq_text, read_text
from .socket_table import SocketTable

OUTSIDE_TTL_S = 10.0  # how long a scan of the processes outside the tree is reused
EVENTFD_SCAN = 512  # eventfd fdinfo files read per refresh at most, to find who shares one


class FdHolder(NamedTuple):
    """One open fd of one process: who holds an end."""

    pid: int
    fd: int




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
    # its one wait was worked out from the system call's text alone (a sleep, a signal wait, a private futex,
    # a call not resolved further): the same text, read again, is the same wait (waits.py, _from_call_alone)
    from_text: bool = False



class WaitReads:
    """Per-refresh caches: fd tables, socket dumps, maps, mount tables (each read at most once)."""

    def __init__(self, pids: Sequence[int], table: Optional[ProcTable], proc: str,
                 carry: Optional[dict[int, Carried]] = None, unchanged: frozenset = frozenset(),
                 outside: Optional[tuple[float, dict[str, list[FdHolder]]]] = None) -> None:
        self.pids = list(pids)
        self._modes: dict[int, dict[int, int]] = {}
        self._syscalls: dict[int, str] = {}
        self.tree = set(pids)
        self.table = table
        self.proc = proc
        self.sockets = SocketTable()
        self._links: dict[int, dict[int, str]] = {}
        self._owners: Optional[dict[str, list[FdHolder]]] = None
        self._outside_scanned = False
        self.outside = outside  # (monotonic time, link → holders) of the last scan of other processes
        self._maps: dict[int, list[tuple[int, int, str, int, str, int, str]]] = {}
        self._mounts: dict[int, list[tuple[str, str]]] = {}
        self._ends: dict[tuple[str, bool], tuple[list[FdHolder], list[FdHolder]]] = {}
        self.reusable: dict[int, tuple[Wait, ...]] = {}
        self._carry = carry if carry is not None else {}
        self.from_text: set[int] = set()  # single-threaded PIDs whose wait this refresh came from its text alone
        self._kept: dict[int, Carried] = {}  # reused whole: carried on as the same object
        self.produced: dict[int, list[Wait]] = {}
        tree = frozenset(pids)
        # every Carried of one refresh holds the same tree: compare it once, not once per process
        old_tree = next(iter(carry.values())).tree if carry else None
        same_tree = old_tree == tree
        # the tree every Carried of this refresh holds: last refresh's very set while it is the same set, so that
        # what keep() carries on unchanged stays the same object
        self._tree: frozenset = old_tree if same_tree and old_tree is not None else tree
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
        self._eventfd_ids: dict[tuple[int, int], Optional[int]] = {}

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

    def owners(self, link: str) -> list[FdHolder]:
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
                self._owners.setdefault(target, []).append(FdHolder(pid, fd))

    def eventfd_id(self, pid: int, fd: int) -> Optional[int]:
        """The kernel's id of the eventfd behind `fd` (fdinfo's `eventfd-id:`, Linux 5.15+); None if unknown."""
        key = (pid, fd)
        if key not in self._eventfd_ids:
            found = None
            for line in self.fdinfo(pid, fd).splitlines():
                if line.startswith("eventfd-id:"):
                    try:
                        found = int(line.split()[1])
                    except (IndexError, ValueError):
                        pass
                    break
            self._eventfd_ids[key] = found
        return self._eventfd_ids[key]

    def eventfd_holders(self, pid: int, fd: int) -> Optional[list[FdHolder]]:
        """Every fd of the tree open on the same eventfd as `fd` of `pid` (an eventfd shows only as
        "anon_inode:[eventfd]": the id in fdinfo tells them apart); None when the kernel gives no id.
        At most EVENTFD_SCAN fdinfo files are read per refresh."""
        wanted = self.eventfd_id(pid, fd)
        if wanted is None:
            return None
        out = []
        for other in self.pids:
            for other_fd, target in self.links(other).items():
                if target != "anon_inode:[eventfd]":
                    continue
                if (other, other_fd) not in self._eventfd_ids and len(self._eventfd_ids) >= EVENTFD_SCAN:
                    continue
                if self.eventfd_id(other, other_fd) == wanted:
                    out.append(FdHolder(other, other_fd))
        return out

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
                            index.setdefault(target, []).append(FdHolder(pid, fd))
            self.outside = (now, index)
        for target, holders in index.items():
            owners.setdefault(target, []).extend(h for h in holders if h.pid not in self.tree)

    def pipe_ends(self, link: str) -> tuple[list[FdHolder], list[FdHolder]]:
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
        # the main thread's is also /proc/PID/syscall (the same task): one directory fewer to look up, measured
        # 8.9 -> 5.1 ms for 1,000 processes
        path = f"{self.proc}/{pid}/syscall" if tid == pid else f"{self.proc}/{pid}/task/{tid}/syscall"
        text = read_bytes(path).decode("ascii", "replace")
        if tid == pid:
            self._syscalls[pid] = text
        return text

    def same_wait_from_text(self, pid: int, state: str, text: str) -> Optional[Wait]:
        """Last refresh's wait of a single-threaded process that ran since, when it is in the same system call
        with the same arguments (the syscall file's text, just read again, byte for byte: number, arguments,
        stack and program counters) in the same sleeping state, and that wait was worked out from the text
        alone: the very Wait a resolution would build again (equal field by field). None otherwise."""
        before = self._carry.get(pid)
        if before is None or not before.from_text or before.syscall != text or not before.waits:
            return None
        stat = self.table.stats.get(pid) if self.table is not None else None
        if stat is None or stat.starttime != before.starttime or stat.num_threads != 1:
            return None
        wait = before.waits[0]
        return wait if len(before.waits) == 1 and wait.state == state == "S" and wait.tid == pid else None

    def keep(self) -> dict[int, Carried]:
        """What the next refresh may reuse: the single-threaded processes' reads of this one."""
        out: dict[int, Carried] = {}
        if self.table is None:
            return out
        tree = self._tree
        carry, syscalls, links, modes, from_text = self._carry, self._syscalls, self._links, self._modes, self.from_text
        for pid in self.pids:
            kept = self._kept.get(pid)
            if kept is not None:
                out[pid] = kept._replace(tree=tree) if kept.tree is not tree else kept
                continue
            stat = self.table.stats.get(pid)
            if stat is None or stat.num_threads != 1:
                continue
            produced = self.produced.get(pid)
            before = carry.get(pid)
            if (before is not None and pid in from_text and before.from_text and before.tree is tree
                    and before.starttime == stat.starttime and before.links is None and pid not in links
                    and not before.modes and pid not in modes and produced is not None and len(produced) == 1
                    and before.waits is not None and len(before.waits) == 1 and produced[0] is before.waits[0]
                    and before.syscall == syscalls.get(pid)):
                # it ran and sleeps again in the same call, its wait last refresh's object (same_wait_from_text),
                # nothing else read of it: what this refresh would carry is last refresh's Carried, field for
                # field, so that very object (a thousand fewer tuples a refresh when every process wakes)
                out[pid] = before
                continue
            out[pid] = Carried(stat.starttime, syscalls.get(pid), links.get(pid), modes.get(pid, {}),
                               tuple(produced) if produced is not None else None, tree, pid in from_text)
        return out

    def fdinfo(self, pid: int, fd: int) -> str:
        try:
            return read_seq_text(f"{self.proc}/{pid}/fdinfo/{fd}")  # an epoll's can exceed a page
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
                text = read_seq_text(f"{self.proc}/{pid}/maps")
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
                for line in read_seq_text(f"{self.proc}/{pid}/mountinfo").splitlines():
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

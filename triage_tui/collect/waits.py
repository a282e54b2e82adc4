"""What every blocked thread of the target waits on, and who would have to act: the wait-for edges.

Replaces the join an engineer does by hand with `cat /proc/PID/task/TID/syscall`, `ls -l /proc/PID/fd`,
`cat /proc/PID/fdinfo/FD`, `ss -xpn` / `ss -tanp`, `grep ADDR /proc/PID/maps` and `ps --ppid`. Nothing
is attached to and nothing paused: every read is a /proc file or a netlink dump (poll/select fd lists
are read from /proc/PID/mem, which needs the same access as /proc/PID/syscall and stops nothing).

Cost: only threads in S or D state are resolved; the fd tables (fd → "pipe:[N]") of the tree are
read once per refresh and only when some wait needs a holder; the socket dumps once, when a socket is
waited on; maps only for a futex on a shared mapping. A thread that ran on, an fd that closed, a
process that exited between two reads: that wait is skipped, never an exception.

This module turns a system call into a wait (and runs the refresh); `fd_waits` says what a waited-on fd is and
who holds its other end; `wait_reads` holds what one refresh read.

Standard library only and Python 3.8-compatible: the SSH agent ships this module to the node.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from typing import Optional

from ..model.snapshot import ProcessInfo
from ..model.unavailable import Unavailable
from ..model.waits import Wait, WaitSource
from ..parse.syscalls import Syscall, parse_syscall, signed
from .fd_waits import WRITES, WaitTarget, merge_fds, resolve_fd
from .proc_table import ProcTable, read_text
from .wait_reads import Carried, FdHolder, WaitReads

READS = frozenset({"read", "readv", "pread64", "preadv", "preadv2", "recvfrom", "recvmsg", "recvmmsg"})
POLLS = frozenset({"poll", "ppoll"})
SELECTS = frozenset({"select", "pselect6"})
EPOLLS = frozenset({"epoll_wait", "epoll_pwait", "epoll_pwait2"})
SLEEPS = frozenset({"nanosleep", "clock_nanosleep"})
SIGNAL_WAITS = frozenset({"pause", "rt_sigsuspend", "rt_sigtimedwait"})
FUTEX_PRIVATE_FLAG = 128
MAX_POLL_FDS = 256  # a poll set larger than this is read in part (the first ones)
MAX_PEERS = 64  # peers kept per wait: a socket inherited by 1,000 forks must not cost 1,000² in every face
NO_ACCESS = Unavailable("/proc/PID/task/TID/syscall: permission denied (it needs ptrace read access)",
                        "run triage as the target's user or as root; check kernel.yama.ptrace_scope")


def _threads(refresh: WaitReads, pid: int) -> list[tuple[int, str]]:
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


def _read_mem(refresh: WaitReads, pid: int, address: int, size: int) -> Optional[bytes]:
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


def _poll_fds(refresh: WaitReads, pid: int, call: Syscall) -> Optional[list[int]]:
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


def _epoll_fds(refresh: WaitReads, pid: int, epfd: int) -> Optional[list[int]]:
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



def _child(refresh: WaitReads, pid: int, call: Syscall) -> WaitTarget:
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
    return WaitTarget("child", label, tuple(wanted), detail)


def _futex(refresh: WaitReads, pid: int, call: Syscall) -> tuple[WaitTarget, str]:
    """The mapping the futex word lies in: private (an in-process lock) or a shared file (a
    cross-process primitive, joined with every process of the tree that maps the same file)."""
    address, op = call.args[0], call.args[1]
    private = WaitTarget("futex", f"in-process lock at {address:#x}", (),
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
            return WaitTarget("futex", f"{name}+{offset + address - start:#x}", tuple(sharers),
                             f"a cross-process primitive in {name} (a semaphore, a barrier, a shared lock), "
                             f"mapped also by {who}", path=path), key
    return private, ""


_RESOLVED_FURTHER = READS | WRITES | POLLS | SELECTS | EPOLLS | frozenset(
    {"accept", "accept4", "connect", "flock", "fcntl", "wait4", "waitid", "futex"})


def _from_call_alone(call: Syscall) -> bool:
    """Whether _resolve works this call's wait out from its name and arguments alone, reading nothing else (no
    fd table, socket, memory, maps or child): a sleep, a signal wait, a private futex, a call it does not
    resolve further. Then the same text is the same wait (WaitReads.same_wait_from_text)."""
    name = call.name
    if name == "futex":
        return bool(call.args[1] & FUTEX_PRIVATE_FLAG)
    return name in SLEEPS or name in SIGNAL_WAITS or name not in _RESOLVED_FURTHER


def _resolve(refresh: WaitReads, pid: int, call: Syscall) -> tuple[WaitTarget, Optional[int], str]:
    """The wait of one thread in `call`: (resolved, fd waited on, shared futex key)."""
    name = call.name
    if name in READS or name in WRITES or name in ("accept", "accept4", "connect", "flock"):
        fd = signed(call.args[0], 32)
        got = resolve_fd(refresh, pid, fd, name)
        if got is None:
            return WaitTarget("unknown", f"fd {fd}", detail=f"{name} on fd {fd}, which closed meanwhile"), fd, ""
        if name == "flock":
            got = got._replace(kind="file", detail=f"waits for a file lock (flock) on {got.object}")
        return got, fd, ""
    if name == "fcntl" and call.args[1] in (7, 38):  # F_SETLKW, F_OFD_SETLKW
        fd = signed(call.args[0], 32)
        got = resolve_fd(refresh, pid, fd, name)
        target = got.object if got is not None else f"fd {fd}"
        return WaitTarget("file", target, (), f"waits for a record lock (fcntl) on {target}"), fd, ""
    if name in POLLS or name in SELECTS:
        fds = _poll_fds(refresh, pid, call)
        if fds is None:
            return WaitTarget("unknown", name, (), f"{name}: its fd list is unreadable (/proc/PID/mem)"), None, ""
        if not fds:
            return WaitTarget("sleep", name, (), f"{name} with no fds: a timed sleep"), None, ""
        got = merge_fds(refresh, pid, fds, name, "")
        if got is None:
            return WaitTarget("unknown", name, (), f"{name} on fds that closed meanwhile"), None, ""
        return got, fds[0], ""
    if name in EPOLLS:
        epfd = signed(call.args[0], 32)
        fds = _epoll_fds(refresh, pid, epfd)
        if fds is None:
            return WaitTarget("epoll", f"epoll fd {epfd}", (), "its watch list is unreadable"), epfd, ""
        if not fds:
            return WaitTarget("epoll", f"epoll fd {epfd}", (), "watches no fds: a timed sleep"), epfd, ""
        got = merge_fds(refresh, pid, fds, name, "epoll")
        if got is None:
            return WaitTarget("epoll", f"epoll fd {epfd}", (), "its fds closed meanwhile"), epfd, ""
        return got._replace(object=f"epoll fd {epfd}: {got.object}"), epfd, ""
    if name in ("wait4", "waitid"):
        return _child(refresh, pid, call), None, ""
    if name == "futex":
        got, key = _futex(refresh, pid, call)
        return got, None, key
    if name in SLEEPS:
        return WaitTarget("sleep", name, (), "sleeps (a poll loop or a back-off, not a wait on anyone)"), None, ""
    if name in SIGNAL_WAITS:
        return WaitTarget("unknown", name, (), "waits for a signal"), None, ""
    return WaitTarget("unknown", name, (), f"in {name}"), None, ""


def _kernel_stack(refresh: WaitReads, pid: int, tid: int) -> tuple[str, ...]:
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
    waits, source, _, _, _ = _collect(pids, table, proc, machine, None, frozenset())
    return waits, source


def _collect(pids: Sequence[int], table: Optional[ProcTable], proc: str, machine: Optional[str],
             carry: Optional[dict[int, Carried]], unchanged: frozenset,
             outside: Optional[tuple[float, dict[str, list[FdHolder]]]] = None
             ) -> tuple[tuple[Wait, ...], WaitSource, dict[int, Carried],
                        Optional[tuple[float, dict[str, list[FdHolder]]]], bool]:
    """collect_waits; `carry` (from the previous refresh) and `unchanged` (PIDs that provably did not run
    since) let it skip the syscall and fd-table reads of idle single-threaded processes. The last value:
    whether every process's waits were last refresh's, reused whole."""
    started = time.perf_counter()
    refresh = WaitReads(pids, table, proc, carry, unchanged, outside)
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
            if tid == pid and state == "S":
                same = refresh.same_wait_from_text(pid, state, text)
                if same is not None:  # ran, and sleeps again in the same call with the same arguments
                    refresh.from_text.add(pid)
                    waits.append(same)
                    continue
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
            if tid == pid and state == "S" and _from_call_alone(call):
                refresh.from_text.add(pid)
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
    all_reused = len(refresh.reusable) == len(pids)
    return (tuple(waits), WaitSource(blocked_threads=blocked, duration_ms=ms, error=error), kept, refresh.outside,
            all_reused)


def unchanged_since_last(rows: Sequence[ProcessInfo]) -> frozenset:
    """PIDs of single-threaded processes that provably have not run since the previous refresh: both
    context-switch counts unchanged (ProcessCollector's deltas, read or proved by it)."""
    return frozenset(p.pid for p in rows if not p.exited and p.threads == 1 and p.state in ("S", "D")
                     and p.ctx_voluntary_delta == 0 and p.ctx_involuntary_delta == 0)


class WaitCollector:
    """collect_waits with memory: idle single-threaded processes are not re-read (see Carried)."""

    def __init__(self) -> None:
        self._carry: dict[int, Carried] = {}
        self._outside: Optional[tuple[float, dict[str, list[FdHolder]]]] = None
        # the last refresh when every wait in it was last refresh's, reused whole: (its PIDs, its unchanged
        # PIDs, its waits, its source)
        self._whole: Optional[tuple[tuple[int, ...], frozenset, tuple[Wait, ...], WaitSource]] = None

    def collect(self, pids: Sequence[int], table: Optional[ProcTable], unchanged: frozenset = frozenset()
                ) -> tuple[tuple[Wait, ...], WaitSource]:
        started = time.perf_counter()
        key = tuple(pids)
        whole = self._whole
        if whole is not None and whole[0] == key and whole[1] == unchanged:
            # the same tree, every process of it still provably not run, and last refresh reused every
            # process's waits: this refresh would reuse them all again (and note the same shared waiters)
            ms = (time.perf_counter() - started) * 1000
            return whole[2], dataclasses.replace(whole[3], duration_ms=ms)
        carry, self._carry = self._carry, {}  # a refresh that raises leaves nothing stale to reuse
        self._whole = None
        waits, source, self._carry, self._outside, all_reused = _collect(pids, table, "/proc", None, carry,
                                                                         unchanged, self._outside)
        if all_reused and unchanged.issuperset(key):
            self._whole = (key, unchanged, waits, source)
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

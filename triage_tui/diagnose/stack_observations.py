"""Observations from stack captures: where each rank is, who is odd, who waits on what."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Optional

from ..model.diagnosis import Observation
from ..model.snapshot import Snapshot
from ..model.stacks import StackCapture, StackGroup
from .figures import fmt_s
from .roles import helper_role, replacements
from .stack_reading import groups_of
from .vocabulary import register

# wait kinds of a main thread that mean "this rank is somewhere specific", per observation id
_KIND_OBS = {
    "compile": ("stacks-compile", "compiling (JIT / autotune / build)"),
    "device-sync": ("stacks-device-sync", "waiting on the GPU (device synchronize)"),
    "file-io": ("stacks-file-io", "reading files"),
    "running": ("stacks-running", "running Python code"),
    "rendezvous": ("stacks-rendezvous", "waiting at rendezvous (TCPStore / connect)"),
    "subprocess": ("stacks-subprocess", "waiting for a child process"),
}


def _obs(oid: str, text: str, at: float, pids: Sequence[int] = (), **figures: object) -> Observation:
    clean = {k: v for k, v in figures.items() if isinstance(v, (int, float, str))}
    return Observation(id=register(oid), text=text, source="stacks", at=at, figures=clean, pids=tuple(pids))


def _main_groups(capture: StackCapture, groups: Sequence[StackGroup]) -> dict[int, StackGroup]:
    """pid -> the group of its main thread (the thread named MainThread, else the first)."""
    out: dict[int, StackGroup] = {}
    for proc in capture.processes:
        if not proc.threads:
            continue
        named = [t for t in proc.threads if t.name == "MainThread"]
        main = named[0] if named else proc.threads[0]
        for g in groups:
            if (proc.pid, main.tid) in g.members:
                out[proc.pid] = g
                break
    return out


def _ranks(pids: Sequence[int], snapshot: Optional[Snapshot]) -> list[int]:
    """Captured PIDs that are peers: minus launchers (a PID that is the parent of another captured PID) and
    helpers (resource tracker, compilers, compile workers: see roles.py) and replacements (a worker started
    after its siblings differs because it is new: it is not the odd one out)."""
    if snapshot is None:
        return list(pids)
    helpers = {p.pid for p in snapshot.processes if helper_role(p)} | {r.pid for r in replacements(snapshot.processes)}
    parents = {p.ppid for p in snapshot.processes if p.pid in pids and p.pid not in helpers}
    ranks = [pid for pid in pids if pid not in parents and pid not in helpers]
    return ranks or [pid for pid in pids if pid not in helpers] or list(pids)


def stack_observations(capture: StackCapture, snapshot: Optional[Snapshot] = None,
                       previous: Optional[StackCapture] = None, live: bool = True) -> list[Observation]:
    """live: a capture of the whole process (a pasted dump may hold only the threads its author kept, so a
    single thread on a lock there is no proof that no other thread exists)."""
    at = capture.taken_at
    groups = groups_of(capture)
    main = _main_groups(capture, groups)
    out: list[Observation] = []
    if not main:
        failed = [p for p in capture.processes if p.error is not None]
        first_error = failed[0].error if failed else None
        if first_error is not None:
            out.append(_obs("stacks-failed", f"stacks could not be read for {len(failed)} process(es): "
                            f"{first_error.reason}", at, [p.pid for p in failed]))
        return out
    ranks = _ranks(sorted(main), snapshot)
    out.append(_obs("stacks-captured", f"stacks of {len(main)} processes captured ({len(groups)} distinct stacks)",
                    at, sorted(main), processes=len(main), groups=len(groups)))
    rank_groups = {pid: main[pid] for pid in ranks if pid in main}
    if len(rank_groups) >= 2:
        out.append(_obs("stacks-several-ranks", f"{len(rank_groups)} ranks in the capture", at, sorted(rank_groups),
                        processes=len(main)))
    frames = Counter(g.wait_frame for g in rank_groups.values())
    kinds = Counter(g.wait_kind for g in rank_groups.values())
    if len(rank_groups) >= 2 and kinds.get("collective", 0) == len(rank_groups):
        if len(frames) == 1:
            frame = next(iter(frames))
            out.append(_obs("stacks-same-collective", f"all {len(rank_groups)} ranks wait in the same collective: {frame}",
                            at, sorted(rank_groups), frame=frame, ranks=len(rank_groups)))
        else:
            where = "; ".join(f"{n} in {f}" for f, n in frames.most_common())
            out.append(_obs("stacks-different-collectives", f"ranks wait in different collectives: {where}", at,
                            sorted(rank_groups), collectives=len(frames)))
    odd = _odd_rank(groups, rank_groups)
    if odd is not None:
        pid, group, majority = odd
        frame = _where(group)
        kind = "" if group.wait_kind == "unknown" else f"{group.wait_kind} "
        leaves = f", leaving the others' stack at {group.departs_at}" if group.departs_at else ""
        others = f"; the other {len(rank_groups) - 1} wait in {majority.wait_frame}" if majority else ""
        out.append(_obs("stacks-odd-rank", f"PID {pid} is elsewhere: {kind}in {frame}{leaves}{others}", at, [pid],
                        pid=pid, kind=group.wait_kind, frame=frame, departs=group.departs_at))
        if group.wait_kind in ("compile", "device-sync", "running", "file-io"):
            out.append(_obs(f"stacks-odd-{group.wait_kind}", f"the odd rank PID {pid} is in {group.wait_kind}: {frame}",
                            at, [pid], pid=pid, frame=frame))
    locks = [g for g in groups if g.wait_kind == "lock"]
    lock_threads = sum(len(g.members) for g in locks)
    if lock_threads >= 2:
        where = "; ".join(f"{len(g.members)} in {_where(g)}" for g in locks[:3])
        out.append(_obs("stacks-lock-wait", f"{lock_threads} threads wait to acquire locks: {where}", at,
                        sorted({p for g in locks for p in g.pids}), threads=lock_threads))
    elif lock_threads == 1:
        out.append(_obs("stacks-one-lock-wait", f"one thread waits on a lock: {locks[0].wait_frame}", at, locks[0].pids))
    else:
        out.append(_obs("stacks-no-lock", "no thread waits on a lock", at))
    for proc in capture.processes if live else ():  # a thread lock waited on where no other thread exists
        if len(proc.threads) == 1 and any((proc.pid, proc.threads[0].tid) in g.members for g in locks) \
                and not _cross_process_lock(proc.threads[0]):
            frame = next(g.wait_frame for g in locks if (proc.pid, proc.threads[0].tid) in g.members)
            out.append(_obs("stacks-orphan-lock", f"PID {proc.pid}'s only thread waits on a lock ({frame}): no thread "
                            "of that process can release it (a lock inherited held across fork)", at, [proc.pid],
                            pid=proc.pid, frame=frame))
    main_kinds = Counter(g.wait_kind for g in main.values())
    for kind, (oid, text) in _KIND_OBS.items():
        if main_kinds.get(kind):
            example = next(g for g in main.values() if g.wait_kind == kind)
            pids = sorted(pid for pid, g in main.items() if g.wait_kind == kind)
            out.append(_obs(oid, f"{len(pids)} main thread(s) {text}: {example.wait_frame}", at, pids, frame=example.wait_frame))
    netfs = sorted({t.pid for proc in capture.processes for t in proc.threads if _netfs_rpc(t.kernel_stack)})
    if netfs:
        frame = next(_netfs_rpc(t.kernel_stack) for proc in capture.processes for t in proc.threads
                     if _netfs_rpc(t.kernel_stack))
        out.append(_obs("stacks-netfs-rpc", f"{len(netfs)} process(es) wait in a network filesystem's RPC in the "
                        f"kernel: {frame}", at, netfs, frame=frame))
    unchanged = _unchanged_for(capture, groups, previous)
    if unchanged is not None:
        out.append(_obs("stacks-unchanged", f"stacks unchanged between two captures {fmt_s(unchanged)} apart", at,
                        seconds=round(unchanged, 1)))
    return out


# A kernel stack's frames that are a network filesystem client waiting for its server: Lustre's RPC layer (ptlrpc) and
# client modules (mdc_ metadata, lmv_, osc_, llite's ll_), sunrpc's wait under NFS, NFS itself, ceph, cifs/smb.
# Innermost first as the kernel prints them; the RPC wait is the first such frame.
_NETFS_RPC = re.compile(r"^(ptlrpc_\w*wait|rpc_wait_bit_killable|__rpc_execute|nfs\w*|nfs4_\w*|mdc_\w+|lmv_\w+|"
                        r"osc_\w+|ceph_\w+|cifs_\w+|smb2_\w+)$")


def _netfs_rpc(kernel_stack: Sequence[str]) -> str:
    """The first frame of a kernel stack that is a network filesystem's RPC wait, or ''."""
    return next((name for name in kernel_stack if _NETFS_RPC.match(name)), "")


def _bootstrap(file: str) -> bool:
    """The interpreter's own machinery (runpy, threading, importlib, multiprocessing's process start-up),
    never site-packages: torch, vLLM and SGLang frames are the framework a caller is looked for in."""
    if file.startswith("<frozen") or "site-packages/" in file or "dist-packages/" in file:
        return file.startswith("<frozen")
    return "/lib/python" in file


def _cross_process_lock(thread) -> bool:
    """A multiprocessing lock (SemLock) can be released by another process: not an orphan."""
    inner = next((f for f in thread.frames if not f.native), None)
    return inner is not None and "multiprocessing/" in inner.file


def _where(group: StackGroup) -> str:
    """The wait frame and the program or framework frame that called it: `sleep (time) from init_drafter (w.py:120)`."""
    wait = group.wait_frame or group.departs_at
    caller = next((f for f in group.frames if not f.native and f.file and not _label(f).startswith(wait.split(" (")[0])
                   and not _bootstrap(f.file)), None)
    return f"{wait} from {_label(caller)}" if caller is not None and _label(caller) != wait else wait


def _label(f) -> str:
    return f"{f.function} ({f.file.rsplit('/', 1)[-1]}:{f.line})" if f.line else f"{f.function} ({f.file.rsplit('/', 1)[-1]})"


def _odd_rank(groups: Sequence[StackGroup], rank_groups: dict[int, StackGroup]):
    """(pid, its group, the majority group) when exactly one rank's main thread stands apart."""
    for g in groups:
        if g.odd_one_out and len(g.pids) == 1 and g.pids[0] in rank_groups:
            majority = Counter(id(x) for x in rank_groups.values()).most_common(1)
            big = next((x for x in rank_groups.values() if id(x) == majority[0][0]), None) if majority else None
            return g.pids[0], g, big if big is not g else None
    if len(rank_groups) >= 3:
        counts = Counter(g.key for g in rank_groups.values())
        (top_key, top_n), *rest = counts.most_common()
        if top_n == len(rank_groups) - 1:
            pid = next(p for p, g in rank_groups.items() if g.key != top_key)
            big = next(g for g in rank_groups.values() if g.key == top_key)
            return pid, rank_groups[pid], big
    return None


def _unchanged_for(capture: StackCapture, groups: Sequence[StackGroup], previous: Optional[StackCapture]) -> Optional[float]:
    marked = [g.unchanged_for_s for g in groups if g.unchanged_for_s is not None]
    if marked:
        return min(marked)
    if previous is None or previous.taken_at >= capture.taken_at:
        return None

    def signature(c: StackCapture) -> set:
        return {(t.pid, t.tid, tuple((f.function, f.file, f.line) for f in t.frames))
                for p in c.processes for t in p.threads}
    now, before = signature(capture), signature(previous)
    if now and now == before:
        return capture.taken_at - previous.taken_at
    return None

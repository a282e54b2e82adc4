"""Identical stacks across processes become one group; the group that leaves the majority is called out.

Pure functions over the model: no I/O.

The group key is the frame sequence of (function, file, line), locals and source text ignored. Lines are
part of the key: N ranks stuck at the same point have identical lines anyway, and a rank stopped at another
line of the same function (another all_reduce call in the same loop body) is exactly the mismatch to find.

Odd one out. Threads are compared within a role: the thread's name with digits blanked (MainThread,
"Thread-# (worker)") and its outermost frame (the program it runs: a launcher's `<module>` in
launch_server.py is not compared with a worker's `spawn_main`). In each role the group covering the most
processes is the majority when it covers more than half of that role's processes; every other group of the
role that covers fewer processes is odd, and `departs_at` names its first frame (outermost first) that differs
from the majority's stack. A helper thread present in every worker forms its own role and its own majority,
so it is never odd. Nor is the parent of the majority's processes: a launcher that forked its ranks runs
the same program but is not one of them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Optional

from ..model.stacks import Frame, ProcessStacks, StackCapture, StackGroup, ThreadStack
from .wait_kinds import classify_kernel, classify_thread, frame_label

FrameKey = tuple[str, str, int]


def _frame_key(frame: Frame) -> FrameKey:
    return (frame.function, frame.file, frame.line)


def stack_key(thread: ThreadStack) -> str:
    """The identity of a stack: its frames, innermost first; a kernel-only thread by its state and wait channel."""
    if thread.frames:
        return "\n".join(f"{f.function}|{f.file}|{f.line}" for f in thread.frames)
    return f"kernel|{thread.kernel_state}|{thread.kernel_wchan}|{thread.kernel_syscall.split(' ')[0]}"


def _entry_frame(frames: Sequence[Frame]) -> Optional[Frame]:
    """The outermost frame that says which program runs: `python -m` puts runpy's frames above every
    program alike, so they are skipped."""
    for frame in reversed(frames):
        if not frame.native and "runpy" not in frame.file:
            return frame
    return frames[-1] if frames else None


def _role(thread: ThreadStack) -> str:
    name = re.sub(r"\d+", "#", thread.name or "")
    outer = _entry_frame(thread.frames)
    return f"{name}|{outer.function}|{outer.file}" if outer is not None else f"{name}|kernel"


def _classified(thread: ThreadStack) -> ThreadStack:
    if thread.wait_kind != "unknown":
        return thread
    if not thread.frames:
        kind = classify_kernel(thread.kernel_wchan, thread.kernel_state, thread.kernel_syscall)
        where = thread.kernel_wchan or thread.kernel_syscall
        if kind == "unknown":
            # a pasted /proc/PID/stack: the wait channel may be a helper (rpc_wait_bit_killable) whose caller
            # names the wait (nfs4_...); the first frame, innermost first, that a kernel rule knows
            for name in thread.kernel_stack:
                by_frame = classify_kernel(name, thread.kernel_state)
                if by_frame != "unknown":
                    kind, where = by_frame, name
                    break
        return dataclasses.replace(thread, wait_kind=kind, wait_frame=where)
    kind, frame = classify_thread(thread.frames, thread.status)
    if kind == "unknown" and thread.kernel_state:
        # No frame says it (no source file to read, a C extension): the kernel still knows where it sleeps.
        by_kernel = classify_kernel(thread.kernel_wchan, thread.kernel_state, thread.kernel_syscall)
        if by_kernel != "unknown":
            where = thread.kernel_syscall or thread.kernel_wchan
            return dataclasses.replace(thread, wait_kind=by_kernel, wait_frame=f"{frame} [kernel: {where}]")
    return dataclasses.replace(thread, wait_kind=kind, wait_frame=frame)


def _departs_at(odd: Sequence[Frame], majority: Sequence[Frame]) -> str:
    """The first frame, outermost first, where `odd` leaves `majority`."""
    a, b = list(reversed(odd)), list(reversed(majority))
    for i, frame in enumerate(a):
        if i >= len(b) or _frame_key(frame) != _frame_key(b[i]):
            return frame_label(frame)
    # `odd` is a prefix of the majority's stack: it stopped short, at its innermost frame.
    return frame_label(a[-1]) if a else ""


def group_stacks(processes: Sequence[ProcessStacks]) -> tuple[StackGroup, ...]:
    """Group identical thread stacks across processes, largest first, the odd ones marked."""
    members: dict[str, list[ThreadStack]] = {}
    for process in processes:
        for thread in process.threads:
            members.setdefault(stack_key(thread), []).append(_classified(thread))

    groups: list[StackGroup] = []
    roles: dict[str, list[int]] = {}  # role → indexes into groups
    for key, threads in members.items():
        first = threads[0]
        pids = tuple(sorted({t.pid for t in threads}))
        groups.append(StackGroup(
            key=key,
            frames=first.frames,
            members=tuple(sorted((t.pid, t.tid) for t in threads)),
            pids=pids,
            wait_kind=first.wait_kind,
            wait_frame=first.wait_frame or first.kernel_wchan,
        ))
        if first.frames:
            roles.setdefault(_role(first), []).append(len(groups) - 1)

    parents = {p.pid: p.ppid for p in processes}
    for indexes in roles.values():
        if len(indexes) < 2:
            continue
        role_pids = {pid for i in indexes for pid in groups[i].pids}
        majority = max(indexes, key=lambda i: (len(groups[i].pids), len(groups[i].members)))
        size = len(groups[majority].pids)
        # A forked launcher runs the same program as its ranks but is not one: leave it out of the count.
        launchers = {parents.get(pid, 0) for pid in groups[majority].pids} & role_pids
        role_pids -= launchers
        if size * 2 <= len(role_pids):
            continue  # no majority to depart from
        for i in indexes:
            if set(groups[i].pids) <= launchers:
                continue
            if i != majority and len(groups[i].pids) < size:
                groups[i] = dataclasses.replace(
                    groups[i], odd_one_out=True, departs_at=_departs_at(groups[i].frames, groups[majority].frames)
                )

    # Largest first; among groups of one size the odd ones first, since they are what the reader looks for.
    groups.sort(key=lambda g: (-len(g.pids), -len(g.members), not g.odd_one_out, g.pids, g.key))
    return tuple(groups)


def with_groups(capture: StackCapture) -> StackCapture:
    """The capture with its threads classified and its groups computed."""
    processes = tuple(
        dataclasses.replace(p, threads=tuple(_classified(t) for t in p.threads)) for p in capture.processes
    )
    return dataclasses.replace(capture, processes=processes, groups=group_stacks(processes))


def compare_captures(earlier: StackCapture, later: StackCapture) -> StackCapture:
    """`later` with `unchanged_for_s` set on each group whose threads all had the same stack in `earlier`.

    Unchanged stacks between two looks separate "stuck" from "slow". A group already unchanged in `earlier`
    carries its age forward. Caveat: a busy loop sampled twice at the same line also looks unchanged; the
    CPU time between the looks tells them apart.
    """
    gap = later.taken_at - earlier.taken_at
    if gap < 0:
        return later
    before: dict[str, StackGroup] = {g.key: g for g in earlier.groups}
    out: list[StackGroup] = []
    for group in later.groups:
        old: Optional[StackGroup] = before.get(group.key)
        if old is not None and set(group.members) <= set(old.members):
            age = gap + (old.unchanged_for_s or 0.0)
            group = dataclasses.replace(group, unchanged_for_s=round(age, 3))
        out.append(group)
    return dataclasses.replace(later, groups=tuple(out))

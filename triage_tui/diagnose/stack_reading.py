"""Reading a stack capture for the engine: wait kinds and groups.

The real classifier and grouper belong to the stacks part (diagnose/wait_kinds.py and
diagnose/stack_groups.py). Until they are on this branch a small stand-in below keeps the engine
and `triage diagnose` working; once they land they are used automatically.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence

from ..model.stacks import Frame, ProcessStacks, StackCapture, StackGroup

try:  # the stacks part's table, when it has landed
    from .wait_kinds import classify_thread as _classify_thread  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on merge order
    _classify_thread = None
try:
    from .stack_groups import group_stacks as _group_stacks  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on merge order
    _group_stacks = None

# Stand-in classification: (kind, function pattern, file pattern); innermost matching frame wins.
_KINDS: tuple[tuple[str, str, str], ...] = (
    ("collective", r"all_reduce|all_gather|reduce_scatter|broadcast|barrier|all_to_all|alltoall|send|recv|wait", r"distributed|nccl|c10d"),
    ("rendezvous", r"TCPStore|_store_based_barrier|rendezvous|init_process_group|_create_c10d_store|get|wait", r"rendezvous|c10d|distributed_c10d|store"),
    ("device-sync", r"synchronize|cudaDeviceSynchronize|cudaStreamSynchronize|item|cpu|tolist", r"cuda|torch"),
    ("compile", r"compile|autotune|benchmark|codegen|load_inline|_jit_compile", r"triton|inductor|cpp_extension|nvrtc|jit"),
    ("lock", r"^acquire$|_acquire_lock|lock|__enter__", r"threading|lock|filelock|file_baton"),
    ("condition", r"^wait$|wait_for", r"threading"),
    ("queue", r"^get$|^put$", r"queue|multiprocessing"),
    ("subprocess", r"communicate|_wait|wait|poll|check_output|run", r"subprocess|popen"),
    ("rendezvous", r"create_connection|connect", r"socket|c10d|rendezvous"),
    ("socket", r"recv|accept|select|poll|epoll|read|serve_forever|connect", r"socket|selectors|socketserver|asyncio|ssl"),
    ("sleep", r"^sleep$|time\.sleep", r""),
    ("file-io", r"^read|readinto|readline|load_file|safe_open|mmap|open", r"safetensors|io|pickle|serialization|os"),
)


def classify(frames: Sequence[Frame], status: str = "unknown") -> tuple[str, str]:
    """(wait kind, the frame it came from) for one thread, innermost frame first."""
    if _classify_thread is not None:
        kind, frame = _classify_thread(frames, status)
        return kind, frame if isinstance(frame, str) else _frame_text(frame)
    for f in frames[:6]:
        for kind, func, file in _KINDS:
            if re.search(func, f.function) and (not file or re.search(file, f.file, re.I) or re.search(file, f.function, re.I)):
                return kind, _frame_text(f)
        if f.function == "sleep":
            return "sleep", _frame_text(f)
    if status == "active" and frames:
        return "running", _frame_text(frames[0])
    return "unknown", _frame_text(frames[0]) if frames else ""


def _frame_text(f: Frame | None) -> str:
    if f is None:
        return ""
    where = f"{f.file.rsplit('/', 1)[-1]}:{f.line}" if f.file else ""
    return f"{f.function} ({where})" if where else f.function


def groups_of(capture: StackCapture) -> tuple[StackGroup, ...]:
    """The capture's groups, grouping it here when the collector did not."""
    if capture.groups:
        return capture.groups
    return group_processes(capture.processes)


def group_processes(processes: Sequence[ProcessStacks]) -> tuple[StackGroup, ...]:
    if _group_stacks is not None:
        return tuple(_group_stacks(processes))
    by_key: dict[str, list] = defaultdict(list)
    frames_of: dict[str, tuple[Frame, ...]] = {}
    status_of: dict[str, str] = {}
    for proc in processes:
        for t in proc.threads:
            key = hashlib.sha1("|".join(f"{f.function}@{f.file}:{f.line}" for f in t.frames).encode()).hexdigest()[:12]
            by_key[key].append((t.pid, t.tid))
            frames_of[key] = t.frames
            status_of[key] = t.status
    groups = []
    for key, members in by_key.items():
        kind, frame = classify(frames_of[key], status_of[key])
        groups.append(StackGroup(key=key, frames=frames_of[key], members=tuple(members),
                                 pids=tuple(sorted({m[0] for m in members})), wait_kind=kind, wait_frame=frame))
    groups.sort(key=lambda g: -len(g.pids))
    return _mark_odd(tuple(groups), processes)


def _mark_odd(groups: tuple[StackGroup, ...], processes: Sequence[ProcessStacks]) -> tuple[StackGroup, ...]:
    """Main threads: when most processes share one stack and one process does not, that one is odd."""
    main = [g for g in groups if any(_is_main(processes, m) for m in g.members)]
    if len(processes) < 3 or not main or len(main[0].pids) < len(processes) - 1 or len(main[0].pids) < 2:
        return groups
    majority = main[0]
    out = []
    for g in groups:
        odd = g in main[1:] and len(g.pids) == 1 and g.pids[0] not in majority.pids
        departs = ""
        if odd:
            ref = list(reversed(majority.frames))
            for i, f in enumerate(reversed(g.frames)):
                if i >= len(ref) or ref[i].function != f.function:
                    departs = _frame_text(f)
                    break
        out.append(StackGroup(g.key, g.frames, g.members, g.pids, g.wait_kind, g.wait_frame, odd, departs,
                              g.unchanged_for_s))
    return tuple(out)


def _is_main(processes: Sequence[ProcessStacks], member: tuple[int, int]) -> bool:
    for proc in processes:
        if proc.pid == member[0] and proc.threads:
            named = [t for t in proc.threads if t.name == "MainThread"]
            main = named[0] if named else proc.threads[0]
            return main.tid == member[1]
    return False

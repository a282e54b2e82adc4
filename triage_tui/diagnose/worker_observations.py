"""Observations about the tree's workers as a set: how many the command line asks for, which exited (and how),
which replaced a dead sibling, a pool recycling its workers, and the whole target gone.

Pure functions over `Snapshot`s (oldest first); nothing here reads the machine.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Optional

from ..model.diagnosis import Observation
from ..model.snapshot import ProcessInfo, Snapshot
from ..model.text_format import clock
from ..model.unavailable import is_known
from .figures import fmt_s
from .make_observation import obs as _obs
from .roles import is_compiler_name, replacements
from .same_rows import kept_for

_WORLD_ARGS = re.compile(
    r"^--(tp-size|tp|tensor-parallel-size|tensor_parallel_size|nproc-per-node|nproc_per_node|world-size|world_size)"
    r"(?:=(\d+))?$"
)


def expected_workers(processes: Sequence[ProcessInfo]) -> Optional[tuple[int, str, int]]:
    """(count, argument, pid) from a `--tp-size 8`-style argument in any command line of the tree."""
    for p in processes:
        found = _world_arg(tuple(p.cmdline))
        if found is not None:
            return found[0], found[1], p.pid
    return None


@lru_cache(maxsize=65536)  # room for a 10,000-process tree of distinct command lines
def _world_arg(cmdline: tuple[str, ...]) -> Optional[tuple[int, str]]:
    """The `--tp-size 8`-style argument of one argv, worked out once per argv (asked every tick)."""
    args = list(cmdline)
    for i, arg in enumerate(args):
        m = _WORLD_ARGS.match(arg)
        if not m:
            continue
        value = m.group(2) or (args[i + 1] if i + 1 < len(args) else "")
        if value.isdecimal() and int(value) > 1:
            return int(value), f"--{m.group(1)} {value}"
    return None


def process_name(p: ProcessInfo) -> str:
    """The name a person knows a process by: its argv[0]'s basename, else its comm."""
    return os.path.basename(p.cmdline[0]) if p.cmdline else p.name


def worker_shape(history: Sequence[Snapshot], procs: Sequence[ProcessInfo], at: float) -> list[Observation]:
    out: list[Observation] = []
    gone: dict[int, tuple[str, str]] = {}
    for snap in history:  # a compiler child that exits is a compile step that finished, not a dead worker
        for e in snap.exited:
            if is_compiler_name(e.name) or (e.cmdline and is_compiler_name(e.cmdline[0])):
                continue
            code = f"exit code {e.exit_code}" if is_known(e.exit_code) else "exit status unknown"
            gone[e.pid] = (e.name, code)
        for p in snap.exited_rows:
            if is_compiler_name(p.name) or (p.cmdline and is_compiler_name(p.cmdline[0])):
                continue
            gone.setdefault(p.pid, (p.name, "exit status unknown"))
    for pid, (name, code) in sorted(gone.items()):
        signal = _signal_of(code)
        out.append(_obs("worker-exited", f"PID {pid} ({name}) exited: {code}{signal}", "processes", at, [pid],
                        exit=code))
        if "SIGKILL" in signal:
            out.append(_obs("worker-sigkilled", f"PID {pid} ({name}) was killed by SIGKILL ({code})", "processes", at,
                            [pid]))
    # from the rows alone: the same answer for the same rows (process_observations hands on one tuple per tuple of rows)
    shape, found, zombies = kept_for("worker-rows", (procs,), lambda: _worker_rows(procs))
    if shape:
        count, arg, root = shape
        if len(found) < count:
            out.append(_obs("workers-missing", f"{arg} in PID {root}'s command line means {count} workers; "
                            f"{len(found)} other live processes in the tree", "processes", at, [root],
                            expected=count, found=len(found)))
        else:
            out.append(_obs("workers-present", f"{arg}: {count} workers expected, {len(found)} found under PID {root}",
                            "processes", at, [root], expected=count, found=len(found)))
    out.extend(_recycled(history, procs, at))
    replaced = replacements(procs)
    for r in replaced:
        late = next(p for p in procs if p.pid == r.pid)
        spread = f"within {fmt_s(r.siblings_spread_s)} of each other" if r.siblings_spread_s >= 0.01 else "together"
        out.append(_obs("worker-replaced", f"PID {r.pid} ({process_name(late)}) started {fmt_s(r.late_by_s)} after its "
                        f"{len(r.siblings)} siblings (PIDs {', '.join(map(str, r.siblings))}: same parent {r.ppid}, same "
                        f"command line), which started {spread} and are still there: a replacement, so one of them "
                        "most likely died (start times from /proc/PID/stat)", "processes", at, [r.pid],
                        replacement_pid=r.pid, late_by_s=round(r.late_by_s, 2), siblings=len(r.siblings)))
    if not gone and not zombies and not replaced and not any(o.id == "workers-missing" for o in out):
        out.append(_obs("all-alive", f"every process is alive: {len(procs)} in the tree, none exited, none a zombie",
                        "processes", at, processes=len(procs)))
    return out


def _worker_rows(procs: Sequence[ProcessInfo]) -> tuple[Optional[tuple[int, str, int]], tuple[ProcessInfo, ...],
                                                          tuple[ProcessInfo, ...]]:
    """The `--tp-size`-style shape of the tree, the other live processes beside its root, and the zombies."""
    shape = expected_workers(procs)
    found = tuple(p for p in procs if p.pid != shape[2] and p.state != "Z") if shape else ()
    return shape, found, tuple(p for p in procs if p.state == "Z")


def target_gone(history: Sequence[Snapshot], at: float) -> list[Observation]:
    """Every process of the target has exited (it was seen alive before): a fact, with what is known
    of each exit. Nothing seen alive yet: no fact at all (the target may not have started)."""
    if not any(p for snap in history for p in snap.processes if not p.exited):
        return []
    out = worker_shape(history, [], at)
    roots = [r.pid for r in history[-1].target.roots]
    alive_before = next(snap for snap in reversed(history) if any(not p.exited for p in snap.processes))
    tree = {p.pid for p in alive_before.processes}
    roots += [p.pid for p in alive_before.processes if p.ppid not in tree]  # the tops of the tree last seen
    exits = {e.pid: e for snap in history for e in snap.exited}
    last_alive = max((snap.taken_at for snap in history if any(not p.exited for p in snap.processes)), default=at)
    root = next((exits[pid] for pid in roots if pid in exits), None)
    how, clean = "unknown", False
    if root is None:
        what = "no exit status was seen for the root"
    else:
        code = root.exit_code
        if isinstance(code, int):
            how, clean = f"exit code {code}", code == 0
        else:  # never a silent 0: the reason the status is not known
            how = f"exit status unknown ({code.reason})"
        what = f"root PID {root.pid} ({root.name}) exited: {how}{_signal_of(how)}"
    out.append(_obs("target-gone", f"every process of the target has exited (last seen alive {clock(last_alive)}): "
                    f"{what}", "processes", at, [e.pid for e in exits.values()],
                    last_alive=last_alive, root_exit=how, gone_what=what))
    if clean and root is not None:
        out.append(_obs("target-exited-ok", "the root exited with code 0: the target ended by itself", "processes", at,
                        [root.pid]))
    return out


def _recycled(history: Sequence[Snapshot], procs: Sequence[ProcessInfo], at: float) -> list[Observation]:
    """Workers of one role that exited during the watch while as many of that role were born in it: a pool
    retiring and replacing its workers (max_tasks_per_child, gunicorn's max_requests), not one death."""
    def role(name: str, cmdline: Sequence[str]) -> tuple[str, str]:
        return (name, re.sub(r"\d+", "#", " ".join(cmdline)))

    start = history[0].taken_at
    gone: dict[tuple[str, str], set[int]] = {}
    for snap in history:
        for e in snap.exited:
            if e.last_seen >= start:
                gone.setdefault(role(e.name, e.cmdline), set()).add(e.pid)
    if not gone:
        return []
    first = {p.pid for p in history[0].processes}
    born: dict[tuple[str, str], set[int]] = {}
    for snap in history[1:]:
        for p in snap.processes:
            if p.pid not in first:
                born.setdefault(role(p.name, p.cmdline), set()).add(p.pid)
    alive = {role(p.name, p.cmdline) for p in procs if p.state not in ("Z", "X")}
    out: list[Observation] = []
    for key, pids in gone.items():
        new = born.get(key, set()) - pids
        new_all = born.get(key, set())
        if len(pids) >= 2 and len(new_all) >= 2 and key in alive:
            out.append(_obs("workers-recycled", f"{len(pids)} processes named {key[0]} of one command line exited "
                            f"during the watch and {len(new_all)} of the same started in it ({len(new)} still there): "
                            "a pool retiring and replacing its workers", "processes", at, sorted(new)[:8],
                            exited=len(pids), started=len(new_all)))
    return out[:1]


def wait_status(status: int) -> str:
    """A wait() status in words: ` (exit code 3)`, ` (killed by signal 9, SIGKILL)`."""
    import signal as _signal

    sig = status & 0x7F
    if sig == 0:
        return f" (exit code {(status >> 8) & 0xFF}, read from /proc/PID/stat)"
    try:
        name = _signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    core = ", core dumped" if status & 0x80 else ""
    return f" (killed by signal {sig}, {name}{core}, read from /proc/PID/stat)"


def _signal_of(code: str) -> str:
    for number, name in (("137", "SIGKILL, usually the OOM killer"), ("-9", "SIGKILL, usually the OOM killer"),
                         ("135", "SIGBUS: a truncated or vanished mmap'd file"), ("-7", "SIGBUS: a truncated mmap'd file"),
                         ("139", "SIGSEGV"), ("-11", "SIGSEGV")):
        if code.endswith(" " + number):
            return f" ({name})"
    return ""



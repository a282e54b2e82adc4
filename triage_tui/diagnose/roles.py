"""What part a process plays in a job, before any comparison: launcher, rank, or helper.

Only peers are compared (the odd one out among ranks); helpers are present in healthy jobs too:
multiprocessing's resource tracker (in every spawn-launched job), compilers run by torch.compile /
cpp_extension / Triton (short-lived children that exit 0), inductor's compile workers.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter, is_

from ..model.snapshot import ProcessInfo

COMPILERS = frozenset({"nvcc", "ptxas", "ninja", "cicc", "gcc", "g++", "cc1", "cc1plus", "c++", "clang", "clang++",
                       "ld", "as", "collect2", "cc"})
_HELPER_ARGS = (
    ("multiprocessing.resource_tracker", "multiprocessing resource tracker"),
    ("multiprocessing.forkserver", "multiprocessing fork server"),
    ("torch._inductor.compile_worker", "inductor compile worker"),
    ("multiprocessing.semaphore_tracker", "multiprocessing semaphore tracker"),
)


def program_name(p: ProcessInfo) -> str:
    return os.path.basename(p.cmdline[0]) if p.cmdline else p.name


def helper_role(p: ProcessInfo) -> str:
    """"" for a process that may be a rank or a launcher; else what helper it is."""
    return _helper_role(p.name, tuple(p.cmdline))  # tuple() of a tuple is itself: no copy


@lru_cache(maxsize=65536)  # room for a 10,000-process tree of distinct command lines
def _helper_role(name: str, cmdline: tuple[str, ...]) -> str:
    """By name and argv, once each: the engine asks for every process of the tree every tick."""
    if (os.path.basename(cmdline[0]) if cmdline else name) in COMPILERS or name in COMPILERS:
        return "compiler"
    joined = " ".join(cmdline[:4])
    for marker, role in _HELPER_ARGS:
        if marker in joined:
            return role
    return ""


def is_compiler_name(name: str) -> bool:
    return os.path.basename(name) in COMPILERS


# A replacement: a peer that started well after its siblings of the same role. Pools (multiprocessing.Pool,
# uvicorn's and gunicorn's supervisors, Celery's prefork) start their workers in one burst and start a new one
# only when one is gone, so the late one is evidence of a death the pool never reported. "Well after": the
# gap to the last original is at least REPLACEMENT_MIN_GAP_S (five clock ticks of /proc's start time) and at
# least REPLACEMENT_GAP_RATIO times the largest gap between the originals themselves (plus one tick), so a
# launcher that staggers its workers evenly never reads as one that replaced a worker.
REPLACEMENT_MIN_GAP_S = 0.05
REPLACEMENT_GAP_RATIO = 4.0
START_TICK_S = 0.01


@dataclass(frozen=True)
class Replacement:
    """A peer that started `late_by_s` after the last of its `siblings` (same parent, same program and
    command line), which all started within `siblings_spread_s` of each other."""

    pid: int
    ppid: int
    started_at: float
    late_by_s: float
    siblings: tuple[int, ...]
    siblings_started_at: float  # the last original's start
    siblings_spread_s: float


_NUMBERS = re.compile(r"\d+")


def role_key(p: ProcessInfo) -> tuple[int, str, str]:
    """Peers of one role: one parent, one program, one command line with its numbers blanked
    (multiprocessing's spawn passes each child its own pipe handle)."""
    return (p.ppid, p.name, _blanked(tuple(p.cmdline)))  # tuple() of a tuple is itself: no copy


@lru_cache(maxsize=65536)  # room for a 10,000-process tree of distinct command lines
def _blanked(cmdline: tuple[str, ...]) -> str:
    """Once per argv: the engine asks for every process of the tree twice a tick, and a `python -c` program
    text is kilobytes of regex work each time (it was half the engine's tick at 1,000 processes)."""
    return _NUMBERS.sub("#", " ".join(cmdline))


# The last answer and the rows it was worked out from (held, so that their identities stay theirs): the engine
# asks twice a tick, and a quiet tree hands on the same row objects tick after tick.
_last_replacements: tuple[tuple[ProcessInfo, ...], tuple["Replacement", ...]] = ((), ())
# Every field _replacements reads of a row: rows that are new objects with these the same (a tree whose every
# process changes its figures every tick, none its parent, command line, state or start) give the same answer
_SHAPE = attrgetter("pid", "ppid", "name", "cmdline", "state", "exited", "start_time", "reaped_children_cpu_s")
_last_shape: tuple[tuple[tuple[object, ...], ...], tuple["Replacement", ...]] = ((), ())


def replacements(procs: Sequence[ProcessInfo]) -> tuple[Replacement, ...]:
    """The late starters of each role of three or more live peers (start time from /proc/PID/stat): a
    minority that started after one gap much larger than any gap between the others (for exec'd workers, under
    a parent that has reaped some child: its cutime + cstime is above 0, or unknown).

    A pure function of the rows: the same row objects as the last call give the last answer."""
    global _last_replacements, _last_shape
    rows = tuple(procs)
    last_rows, last_answer = _last_replacements
    if rows and len(rows) == len(last_rows) and all(map(is_, rows, last_rows)):
        return last_answer
    shape = tuple(map(_SHAPE, rows))
    if rows and shape == _last_shape[0]:
        answer = _last_shape[1]  # new row objects, the same fields read: the same answer
    else:
        answer = _replacements(rows)
        _last_shape = (shape, answer)
    _last_replacements = (rows, answer)
    return answer


def _replacements(procs: Sequence[ProcessInfo]) -> tuple[Replacement, ...]:
    groups: dict[tuple[int, str, str], list[tuple[float, ProcessInfo]]] = {}
    for p in procs:
        if p.state in ("Z", "X") or p.exited or helper_role(p) or not isinstance(p.start_time, (int, float)):
            continue
        groups.setdefault(role_key(p), []).append((float(p.start_time), p))
    parents = {p.pid: p for p in procs}
    out: list[Replacement] = []
    for (ppid, _, _), members in groups.items():
        if len(members) < 3:
            continue
        parent = parents.get(ppid)
        # An exec'd worker (spawn, Popen: its command line is not its parent's) costs CPU to start, so one that
        # died and was reaped left that CPU in its parent's cutime + cstime. A parent that has reaped nothing
        # started its last exec'd child late (a loaded node, a slow launch loop); nothing was replaced. A forked
        # worker can die having used no CPU tick at all: there the start times alone decide.
        if parent is not None and parent.reaped_children_cpu_s == 0 and \
                members[0][1].cmdline != parent.cmdline:
            continue
        members.sort(key=lambda sp: (sp[0], sp[1].pid))
        starts = [start for start, _ in members]
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        split = max(range(len(gaps)), key=lambda i: gaps[i])  # originals: members[:split + 1]
        originals, late = members[:split + 1], members[split + 1:]
        if len(originals) < 2 or len(late) >= len(originals):
            continue
        inner = max(gaps[:split], default=0.0)
        gap = gaps[split]
        if gap < REPLACEMENT_MIN_GAP_S or gap < REPLACEMENT_GAP_RATIO * (inner + START_TICK_S):
            continue
        for start, p in late:
            out.append(Replacement(pid=p.pid, ppid=p.ppid, started_at=start, late_by_s=start - starts[split],
                                   siblings=tuple(q.pid for _, q in originals), siblings_started_at=starts[split],
                                   siblings_spread_s=starts[split] - starts[0]))
    return tuple(out)

"""What the process collector keeps of each process between ticks, and the proof that one has not run since.

A process whose main thread was provably never scheduled since the last tick (schedstat run count, state, CPU
ticks, major faults and RSS pages unchanged; or, without schedstat, its context switches) still sleeps where
it slept: its wait channel, status figures, io (single-threaded) and fd count are the values a read would
return, so they are carried instead of read (processes.py's module doc says which and why).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Optional

from ..model.snapshot import ProcessInfo
from ..model.unavailable import Unavailable
from ..parse.procfs import ProcStat, StatusHead, StatusNumbers


@dataclass
class Sample:  # mutable: an unchanged process's sample is carried forward in place
    starttime: int
    at: float  # monotonic
    cpu_ticks: int
    ctx_voluntary: Optional[int]
    ctx_involuntary: Optional[int]
    read_bytes: Optional[int]
    write_bytes: Optional[int]
    majflt: int
    name: str
    cmdline: tuple[str, ...]
    exit_code: Optional[int] = None  # known while it was a zombie (stat field 52)
    exit_hidden: bool = False  # a zombie whose field 52 the kernel hid from us (it prints 0 then)
    state: str = "?"
    threads: int = 0
    wchan: Optional[str] = None  # as read (None: not read or not readable)
    io: Optional[tuple[int, int]] = None  # (read_bytes, write_bytes) as read
    status: Optional[StatusNumbers] = None  # last tick's /proc/PID/status figures
    rss_pages: int = -1
    run_count: Optional[int] = None  # schedstat pcount (single-threaded processes only)
    row: Optional[ProcessInfo] = None  # the row this sample's tick produced
    quiet: bool = False  # `row` was built by the not-run path: zero deltas, PSS figures from `extra`
    extra: Optional[Mapping[str, object]] = None  # the PSS fields `row` was built with (None: none)
    stat: Optional[ProcStat] = None  # the /proc pass's ProcStat `row` was last built or carried with
    # the head of a status read of it and the figures parsed from that status (parse_status_numbers_again): a
    # status that begins with the same head has only its context switches parsed
    status_head: Optional[StatusHead] = None


# CPU % is measured over at least this long: the kernel counts CPU time in clock ticks (10 ms), so
# over the few milliseconds between a tick and a quick follow-up one (the report's last tick after a
# slow PSS read) a ~45 % process read 0.0 % and a single thread 244 %. A shorter window keeps the
# last figure measured over a full one and measures the next from the same start.
MIN_CPU_WINDOW_S = 0.25
PSS_FIELDS = ("pss_bytes", "uss_bytes", "swap_bytes", "pss_read_at")
PSS_DEFAULTS = {f.name: f.default for f in fields(ProcessInfo) if f.name in PSS_FIELDS}
ZERO_DELTAS = {"major_faults_delta": 0, "ctx_voluntary_delta": 0, "ctx_involuntary_delta": 0,
                "read_bytes_delta": 0, "write_bytes_delta": 0, "cpu_percent": 0.0}


_ROW_FIELDS = tuple(f.name for f in fields(ProcessInfo))
_row_values = attrgetter(*_ROW_FIELDS)


def row_like(row: ProcessInfo, changes: Mapping[str, object]) -> ProcessInfo:
    """`row` with `changes`, as dataclasses.replace would build it, for a fraction of the cost:
    ProcessInfo is a plain frozen dataclass (no __post_init__; its fields in slots), so its state is
    its fields' values, taken in one call and set without the constructor's checks."""
    out = object.__new__(ProcessInfo)
    for name, value in zip(_ROW_FIELDS, _row_values(row)):  # noqa: B905 - zip(strict=) is 3.10+ (the agent: 3.8)
        object.__setattr__(out, name, changes[name] if name in changes else value)
    return out



def status_unchanged(before: Optional[Sample], stat: ProcStat, ticks: int, run_count: Optional[int]) -> bool:
    """A single-threaded process that provably has not run since `before`: its status is the same."""
    return (before is not None and before.status is not None and run_count is not None
            and run_count == before.run_count and stat.num_threads == 1 == before.threads
            and stat.state == before.state and stat.state not in ("R", "Z", "X") and ticks == before.cpu_ticks
            and stat.majflt == before.majflt and stat.rss_pages == before.rss_pages)


def has_not_run(before: Optional[Sample], stat: ProcStat, ticks: int, status: Optional[StatusNumbers]) -> bool:
    """True when the main thread has provably not been scheduled since `before` (see module doc)."""
    if (before is None or status is None or before.state != stat.state or before.cpu_ticks != ticks
            or stat.state in ("R", "Z", "X")):
        return False
    return (status.ctx_voluntary is not None and status.ctx_involuntary is not None
            and status.ctx_voluntary == before.ctx_voluntary and status.ctx_involuntary == before.ctx_involuntary)


def delta(now: Optional[int], before: Optional[int]) -> object:
    if now is None:
        return Unavailable("not read")
    if before is None:
        return Unavailable("first sample")
    return now - before

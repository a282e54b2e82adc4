"""Observations: facts derived from the history of snapshots, each with its figures and source.

Pure functions over `Snapshot`s (oldest first). This module gathers every non-stack observation and adds the
ones that join sources (idle means nothing advances, progress seen, not judged yet, a worker gone AND OOM-killed).
By topic: process_observations.py (the tree over time), worker_observations.py (workers as a set, deaths),
log_observations.py, resource_observations.py (ports, GPUs, memory, kernel); stack observations live in
stack_observations.py. Nothing here reads the machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Optional

from ..model.diagnosis import Observation
from ..model.snapshot import Snapshot
from ..model.unavailable import is_known
from .figures import fmt_s
from .log_observations import log_observations
from .make_observation import obs as _obs
from .process_observations import cpu_rate, idle_seconds, idle_since_at, process_observations
from .resource_observations import (
    gpu_observations,
    kernel_observations,
    memory_observations,
    port_observations,
    served_observations,
)
from .thresholds import Thresholds
from .worker_observations import expected_workers

# importers of these names from here predate the split by topic
__all__ = ["Thresholds", "cpu_rate", "expected_workers", "idle_seconds", "idle_since_at", "log_observations", "observe_snapshots",
           "process_observations"]

def observe_snapshots(history: Sequence[Snapshot], th: Thresholds = Thresholds(),
                      idle_of: Optional[Mapping[int, Optional[float]]] = None) -> list[Observation]:
    """Every non-stack observation the history supports, newest snapshot last."""
    if not history:
        return []
    out = (process_observations(history, th, idle_of) + log_observations(history, th) + port_observations(history)
           + served_observations(history) + gpu_observations(history, th) + memory_observations(history, th) + kernel_observations(history))
    out = _idle_means_nothing_advances(out, history[-1])
    return out + _joined(out, history[-1].taken_at) + _progress_seen(out, history, th) + _not_judged(history, th)


def _not_judged(history: Sequence[Snapshot], th: Thresholds) -> list[Observation]:
    """Say what a watch this short cannot judge yet, instead of letting silence read as health."""
    span = history[-1].taken_at - history[0].taken_at
    if th.one_look or span >= th.idle_after_s:
        return []
    return [_obs("not-judged-yet", f"watched {fmt_s(span)} so far: idle needs {fmt_s(th.idle_after_s)} of watching "
                 "and progress needs two looks; the first-look figures stand alone until then", "processes",
                 history[-1].taken_at, watched_s=round(span, 1))]


def _idle_means_nothing_advances(observations: list[Observation], now: Snapshot) -> list[Observation]:
    """Idle is "nothing advances", not "no CPU": a loader that reads a little and moves its bar in its
    log uses almost no CPU and is not idle. all-idle is withdrawn while a log wrote within its idle span."""
    idle = next((o for o in observations if o.id == "all-idle"), None)
    if idle is None:
        return observations
    if any(o.id == "requests-served" for o in observations):  # a server answering requests at low CPU
        return [o for o in observations if o is not idle]
    span = idle.figures.get("idle_s", 0.0)
    for tail in now.logs:
        wrote = tail.seconds_since_last_byte
        if tail.error is None and (tail.lines or tail.partial.strip()) and is_known(wrote) \
                and isinstance(span, (int, float)) and wrote < span and (tail.partial.strip() or tail.lines):
            return [o for o in observations if o is not idle]
    return observations


def _progress_seen(observations: Sequence[Observation], history: Sequence[Snapshot], th: Thresholds) -> list[Observation]:
    """Positive evidence of work during the watch: the tree's CPU time grew AND its log or its reads
    advanced. CPU alone is no progress (a spin, a poller); a log alone may be a heartbeat of a stuck job."""
    if len(history) < 2:
        return []
    ids = {o.id for o in observations}
    served = next((o for o in observations if o.id == "requests-served"), None)
    if served is not None:  # clients were answered: work done, however little CPU it took
        return [_obs("progress-seen", f"progress during the {fmt_s(history[-1].taken_at - history[0].taken_at)} "
                     f"watch: {served.text}", "ports", history[-1].taken_at)]
    advancing = [o for o in observations if o.id in ("log-active", "log-progress", "log-steps-advancing", "io-reading")]
    if not advancing or "all-idle" in ids:
        return []
    first, last = history[0], history[-1]
    # a loop's own step counter rising is work done, whatever the CPU: a job that sleeps between steps (or waits
    # on a GPU) shows little CPU and still moves
    steps = next((o for o in advancing if o.id == "log-steps-advancing"), None)
    if steps is not None:
        return [_obs("progress-seen", f"progress during the {fmt_s(last.taken_at - first.taken_at)} watch: "
                     f"{steps.text}", "logs", last.taken_at)]
    grew = 0.0
    for p in last.processes:
        q = first.process(p.pid)
        if q is not None and is_known(p.cpu_time_s) and is_known(q.cpu_time_s):
            grew += max(0.0, p.cpu_time_s - q.cpu_time_s)
        elif q is None and is_known(p.cpu_time_s):
            grew += p.cpu_time_s  # born during the watch: all its CPU was spent in it
    span = last.taken_at - first.taken_at
    if span > 0 and grew <= max(0.1, th.idle_cpu_rate * span):
        grew += _cpu_of_the_gone(history)  # workers that came and went (a pool recycling them) worked too
    if span <= 0 or grew <= max(0.1, th.idle_cpu_rate * span):
        return []
    return [_obs("progress-seen", f"progress during the {fmt_s(span)} watch: {fmt_s(grew)} of CPU and "
                 f"{advancing[0].text}", "processes", last.taken_at, cpu_s=round(grew, 2))]


def _cpu_of_the_gone(history: Sequence[Snapshot]) -> float:
    """CPU seconds spent during the watch by processes that are gone by its last look: from their first look
    in the watch (0 when born in it) to their last."""
    last_pids = {p.pid for p in history[-1].processes}
    first: dict[int, float] = {}
    latest: dict[int, float] = {}
    for index, snap in enumerate(history[:-1]):
        for p in snap.processes:
            if p.pid in last_pids or not is_known(p.cpu_time_s):
                continue
            first.setdefault(p.pid, p.cpu_time_s if index == 0 else 0.0)
            latest[p.pid] = p.cpu_time_s
    return sum(max(0.0, latest[pid] - first[pid]) for pid in latest)


def _joined(observations: Sequence[Observation], at: float) -> list[Observation]:
    """Facts that take two sources: a worker gone AND a kernel OOM-kill line naming that very PID."""
    gone = {pid for o in observations if o.id == "worker-exited" for pid in o.pids}
    killed = [o for o in observations if o.id == "oom-kill" and set(o.pids) & gone]
    return [_obs("worker-oom-killed", f"the OOM killer killed PID {k.pids[0]}, the worker that vanished", "kernel", at,
                 k.pids) for k in killed[:1]]

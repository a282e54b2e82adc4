"""Observations about the tree's processes over time: idle, busy, zombie, stopped, D state, starved, reading,
the one peer the kernel sees elsewhere, and what a first look shows.

Pure functions over `Snapshot`s (oldest first); nothing here reads the machine.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Optional

from ..model.diagnosis import Observation
from ..model.snapshot import ProcessInfo, Snapshot
from ..model.unavailable import is_known
from .figures import fmt_bytes, fmt_s
from .make_observation import obs as _obs
from .same_rows import kept_for
from .roles import COMPILERS, helper_role, replacements
from .thresholds import Thresholds
from .worker_observations import process_name as _name
from .worker_observations import target_gone, wait_status, worker_shape

# ---------------------------------------------------------------- processes over time
def idle_since_at(history: Sequence[Snapshot], pid: int, th: Thresholds) -> Optional[float]:
    """Since when `pid` has used no CPU (and read no bytes): the time of the earliest look of the history from
    which it has not, walking back; None: not idle / unknown."""
    latest = history[-1].process(pid)
    if latest is None or not is_known(latest.cpu_time_s):
        return None
    since: Optional[float] = None
    for snap in reversed(history[:-1]):
        p = snap.process(pid)
        if p is None or not is_known(p.cpu_time_s):
            break
        span = history[-1].taken_at - snap.taken_at
        grew = latest.cpu_time_s - p.cpu_time_s
        read = (latest.read_bytes - p.read_bytes) if is_known(latest.read_bytes) and is_known(p.read_bytes) else 0
        if grew > max(0.05, th.idle_cpu_rate * span) or read > 0:
            break
        since = snap.taken_at
    return since


def idle_seconds(history: Sequence[Snapshot], pid: int, th: Thresholds) -> Optional[float]:
    """How long `pid` has used no CPU (and read no bytes), from the history; None: not idle / unknown."""
    since = idle_since_at(history, pid, th)
    return None if since is None else history[-1].taken_at - since


def cpu_rate(history: Sequence[Snapshot], pid: int) -> Optional[float]:
    """CPU seconds per second over the history (cores busy); falls back to the latest cpu_percent."""
    latest = history[-1].process(pid)
    if latest is None:
        return None
    for snap in history[:-1]:
        p = snap.process(pid)
        if p is not None and is_known(p.cpu_time_s) and is_known(latest.cpu_time_s):
            span = history[-1].taken_at - snap.taken_at
            if span > 0:
                return (latest.cpu_time_s - p.cpu_time_s) / span
    return latest.cpu_percent / 100.0 if is_known(latest.cpu_percent) else None


@dataclasses.dataclass(frozen=True)
class _Rows:
    """What the facts below need from the newest rows alone, worked out once per tuple of rows (a quiet tree's
    rows are last tick's tuple: #18, the engine in proportion to change)."""

    procs: tuple[ProcessInfo, ...]  # not exited
    alive: tuple[ProcessInfo, ...]  # of those, not zombies
    alive_pids: tuple[int, ...]
    distinct: bool  # no PID twice among `alive`
    special: tuple[ProcessInfo, ...]  # in a state with a fact of its own (Z, T, t, D, R), in the rows' order
    stopped: bool  # some process in T or t
    compilers: tuple[ProcessInfo, ...]  # above th.compiler_cpu_percent and named as a compiler


def _rows_of(rows: Sequence[ProcessInfo], th: Thresholds) -> _Rows:
    procs = tuple(p for p in rows if not p.exited)
    alive = tuple(p for p in procs if p.state != "Z")
    pids = tuple(p.pid for p in alive)
    return _Rows(procs, alive, pids, len(set(pids)) == len(pids),
                 tuple(p for p in procs if p.state in ("Z", "T", "t", "D", "R")),
                 any(p.state in ("T", "t") for p in procs),
                 tuple(p for p in procs if is_known(p.cpu_percent) and p.cpu_percent >= th.compiler_cpu_percent
                       and _name(p) in COMPILERS))


def process_observations(history: Sequence[Snapshot], th: Thresholds,
                         idle_of: Optional[Mapping[int, Optional[float]]] = None) -> list[Observation]:
    """`idle_of`: idle_seconds per PID of the latest snapshot, when the caller keeps them up to
    date (the engine's IdleRuns); else they are computed by walking the history."""
    now = history[-1]
    at = now.taken_at
    out: list[Observation] = []
    rows = kept_for("process-rows", (now.processes, th), lambda: _rows_of(now.processes, th))
    procs, alive = rows.procs, rows.alive
    if not procs:
        return target_gone(history, at)
    one_look = th.one_look and len(history) == 1
    idle: dict[int, float] = {}
    busy: dict[int, float] = {}
    secs_of = list(map(idle_of.get, rows.alive_pids)) if idle_of is not None and not one_look and rows.distinct \
        else None
    if secs_of is not None and None not in secs_of:
        idle = dict(zip(rows.alive_pids, secs_of, strict=True))  # type: ignore[arg-type]  # every one idle (no None): none busy
    else:
        for p in alive:
            if one_look:
                if is_known(p.cpu_percent) and p.cpu_percent < 1.0 and p.state != "R":
                    idle[p.pid] = 0.0
            else:
                secs = idle_of.get(p.pid) if idle_of is not None else idle_seconds(history, p.pid, th)
                if secs is not None:
                    idle[p.pid] = secs
                    continue  # an idle process is not busy: its rate is not needed (a walk back per process)
            rate = cpu_rate(history, p.pid)
            if rate is not None and rate >= th.busy_cpu_rate:
                busy[p.pid] = rate
    if len(alive) >= 3:
        out.append(_obs("several-processes", f"{len(alive)} live processes in the tree", "processes", at,
                        rows.alive_pids, processes=len(alive)))
    idle_for = min(idle.values()) if idle else 0.0
    if alive and len(idle) == len(alive) and (one_look or idle_for >= th.idle_after_s):
        ctx = kept_for("ctx-growth", (history[0].processes, now.processes), lambda: _tree_ctx_growth(history, alive))
        # a sentence about context switches only when they were read for every process: never a 0 for "unknown"
        wake = "" if one_look or ctx is None else "; context switches stopped too" if ctx == 0 else \
            f"; {ctx} voluntary context switches: wakes, does nothing"
        span = "(one look: ps %CPU is a lifetime average)" if one_look else f"for {fmt_s(idle_for)}"
        who = "the only process is" if len(alive) == 1 else f"all {len(alive)} processes"
        out.append(_obs("all-idle", f"{who} idle (no CPU-time growth) {span}{wake}",
                        "processes", at, rows.alive_pids, processes=len(alive), idle_s=round(idle_for, 1),
                        ctx_growth=ctx))
    for pid, rate in busy.items():
        busy_p = now.process(pid)
        assert busy_p is not None
        others_idle = [q for q in alive if q.pid != pid and q.pid in idle]
        out.append(_obs("busy-process", f"PID {pid} ({_name(busy_p)}) busy at {rate * 100:.0f} % CPU, state {busy_p.state}",
                        "processes", at, [pid], cpu_percent=round(rate * 100, 1), sustained=int(not one_look)))
        if len(alive) >= 3 and len(others_idle) == len(alive) - 1:
            out.append(_obs("one-busy-others-idle",
                            f"PID {pid} ({_name(busy_p)}) busy at {rate * 100:.0f} % CPU while the other {len(others_idle)} idle",
                            "processes", at, [pid], cpu_percent=round(rate * 100, 1)))
    for p in rows.special:
        if p.state == "Z":
            how = wait_status(p.exit_status) if is_known(p.exit_status) else ""
            out.append(_obs("zombie", f"PID {p.pid} ({_name(p)}) is a zombie (Z): it died{how} and its parent {p.ppid} "
                            "has not reaped it", "processes", at, [p.pid], ppid=p.ppid))
            if is_known(p.exit_status) and p.exit_status & 0x7F == 9:
                out.append(_obs("worker-sigkilled", f"PID {p.pid} ({_name(p)}) was killed by SIGKILL (zombie's exit "
                                "status)", "processes", at, [p.pid]))
        elif p.state in ("T", "t"):
            why = "traced by a debugger (t)" if p.state == "t" else "stopped (T)"
            out.append(_obs("stopped-process", f"PID {p.pid} ({_name(p)}) is {why}: it runs nothing until SIGCONT",
                            "processes", at, [p.pid], state=p.state, pid_stopped=p.pid))
        elif p.state == "D":
            faults = p.major_faults_delta if is_known(p.major_faults_delta) else 0
            if one_look and is_known(p.major_faults):  # a paste: one count, no growth to see
                faults = p.major_faults
            if faults:
                what = "major page faults so far (one look)" if one_look else "new major page faults"
                out.append(_obs("d-state-faults", f"PID {p.pid} ({_name(p)}) in D (uninterruptible I/O) with "
                                f"{faults} {what}", "processes", at, [p.pid], major_faults=faults))
            else:
                out.append(_obs("d-state", f"PID {p.pid} ({_name(p)}) in D (uninterruptible I/O wait), "
                                f"wchan {p.wchan if is_known(p.wchan) else '?'}", "processes", at, [p.pid]))
        elif p.state == "R" and is_known(p.cpu_percent) and p.cpu_percent < 20 and not one_look \
                and (cpu_rate(history, p.pid) or 0.0) < 0.2:
            # over the whole watch, not the last interval alone (a py-spy capture pauses it for that long)
            inv = p.ctx_involuntary_delta if is_known(p.ctx_involuntary_delta) else 0
            if inv:
                out.append(_obs("runnable-starved", f"PID {p.pid} runnable (R) but only {p.cpu_percent:.0f} % CPU, "
                                f"{inv} involuntary switches", "processes", at, [p.pid], involuntary=inv))
    if not rows.stopped:
        out.append(_obs("none-stopped", f"no process stopped (state T) among {len(procs)}", "processes", at,
                        processes=len(procs)))
    for p in rows.compilers:
        out.append(_obs("compiler-running", f"compiler child PID {p.pid} ({_name(p)}) at {p.cpu_percent:.0f} % CPU",
                        "processes", at, [p.pid], name=_name(p)))
    previous = history[-2] if len(history) > 1 else None
    reads = kept_for("io-growth", (previous.processes if previous is not None else None, now.processes),
                     lambda: sum(_io_growth(previous, p) for p in procs))
    if reads > 0:
        out.append(_obs("io-reading", f"the tree read {fmt_bytes(reads)} since the last look", "processes", at,
                        read_bytes=reads))
    out.extend(worker_shape(history, procs, at))
    out.extend(dataclasses.replace(o, at=at) for o in kept_for("kernel-view", (now.processes,),
                                                                 lambda: _kernel_view(procs, at)))
    if len(history) == 1 and not th.one_look:
        out.extend(_first_look(procs, now, at))
    return out


def _peers(procs: Sequence[ProcessInfo]) -> list[ProcessInfo]:
    """The processes that are compared: alive, not helpers, not replacements (a newcomer differs because it is
    new), not the parent of another (a launcher)."""
    late = {r.pid for r in replacements(procs)}
    alive = [p for p in procs if p.state not in ("Z", "X") and not helper_role(p) and p.pid not in late]
    parents = {p.ppid for p in alive}
    leaves = [p for p in alive if p.pid not in parents]
    return leaves


def _kernel_view(procs: Sequence[ProcessInfo], at: float) -> list[Observation]:
    """Peers grouped by what the kernel says they sleep in (state, wait channel of the main thread), from the
    first refresh and without pausing anyone: one that differs from all the others is named before any py-spy."""
    peers = [p for p in _peers(procs) if is_known(p.wchan)]
    if len(peers) < 3:
        return []
    groups: dict[tuple[str, str], list[ProcessInfo]] = {}
    for p in peers:
        groups.setdefault((p.state, str(p.wchan) or "-"), []).append(p)
    if len(groups) != 2:
        return []
    (big_key, big), (odd_key, odd) = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    if len(odd) != 1 or len(big) < 2:
        return []
    p = odd[0]
    return [_obs("kernel-odd-rank", f"PID {p.pid} ({_name(p)}) differs in the kernel's view: state {odd_key[0]} in "
                 f"{odd_key[1]}, while the other {len(big)} are {big_key[0]} in {big_key[1]}", "processes", at, [p.pid],
                 kernel_pid=p.pid, wchan=odd_key[1], others=len(big), others_wchan=big_key[1])]


def _first_look(procs: Sequence[ProcessInfo], now: Snapshot, at: float) -> list[Observation]:
    """What one look shows before any watching: CPU time against age, state and wait channel, and how long
    ago each log was last written (its mtime): a hang older than triage is visible at once."""
    out: list[Observation] = []
    for p in procs[:8]:
        if p.state == "Z" or not is_known(p.cpu_time_s) or not is_known(p.start_time):
            continue
        age = max(0.0, at - p.start_time)
        where = f"state {p.state}" + (f" in {p.wchan}" if is_known(p.wchan) and p.wchan else "")
        cpu = f"{p.cpu_time_s:.1f} s" if p.cpu_time_s < 60 else fmt_s(p.cpu_time_s)
        out.append(_obs("first-look", f"PID {p.pid} ({_name(p)}): {cpu} of CPU in {fmt_s(age)} of "
                        f"life, {where}", "processes", at, [p.pid], cpu_s=round(p.cpu_time_s, 2), age_s=round(age, 1)))
    for tail in now.logs:
        if tail.error is None and is_known(tail.seconds_since_last_byte) and (tail.lines or tail.partial.strip()):
            out.append(_obs("first-look", f"log {tail.source} last written {fmt_s(tail.seconds_since_last_byte)} before "
                            "triage's first look (its mtime)", "logs", at))
    return out


def _tree_ctx_growth(history: Sequence[Snapshot], alive: Sequence[ProcessInfo]) -> Optional[int]:
    """Voluntary context switches of the whole tree over the history; None unless read for every process."""
    growths = [_ctx_growth(history, p.pid) for p in alive]
    return None if any(g is None for g in growths) else sum(g for g in growths if g is not None)


def _ctx_growth(history: Sequence[Snapshot], pid: int) -> Optional[int]:
    """Voluntary context switches of `pid` over the history; None when they were not read."""
    first, last = history[0].process(pid), history[-1].process(pid)
    if first is not None and first is last:  # the same row object: nothing in it moved
        return 0 if is_known(first.ctx_voluntary) else None
    if first and last and is_known(first.ctx_voluntary) and is_known(last.ctx_voluntary):
        return max(0, last.ctx_voluntary - first.ctx_voluntary)
    return None


def _io_growth(previous: Optional[Snapshot], last: ProcessInfo) -> int:
    """Bytes `last` (a row of the newest snapshot) read since `previous` (the snapshot before it)."""
    prev = previous.process(last.pid) if previous is not None else None
    if prev is last and is_known(last.read_bytes):  # the same row object (a quiet process): nothing read
        return 0
    if prev and is_known(prev.read_bytes) and is_known(last.read_bytes):
        return max(0, last.read_bytes - prev.read_bytes)
    return last.read_bytes_delta if is_known(last.read_bytes_delta) and last.read_bytes_delta > 0 else 0



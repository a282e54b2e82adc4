"""IdleRuns gives exactly what walking the history gives (observations.idle_seconds), step by step."""

from __future__ import annotations

import random
from collections import deque

from triage_tui.diagnose.engine import DiagnosisEngine
from triage_tui.diagnose.idle_runs import IdleRuns
from triage_tui.diagnose.observations import Thresholds, idle_seconds, idle_since_at
from triage_tui.model.snapshot import ProcessInfo, Snapshot
from triage_tui.model.unavailable import Unavailable


def _histories(seed: int, steps: int = 120, pids: int = 12) -> list[Snapshot]:
    """Processes that idle, blip, run, read, vanish, come back and lose figures, at uneven intervals."""
    rng = random.Random(seed)
    cpu = {pid: 0.0 for pid in range(1, pids + 1)}
    read = {pid: 0 for pid in cpu}
    at = 1000.0
    out = []
    for _ in range(steps):
        at += rng.choice((0.5, 1.0, 1.0, 2.0, 7.0))
        rows = []
        for pid in cpu:
            roll = rng.random()
            if roll < 0.05:
                continue  # absent from this snapshot
            if roll < 0.15:
                cpu[pid] += rng.choice((0.01, 0.04, 0.06, 0.3))
            if roll > 0.95:
                read[pid] += 4096
            unknown = rng.random() < 0.03
            rows.append(ProcessInfo(
                pid=pid, ppid=1, name="w",
                cpu_time_s=Unavailable("gone") if unknown else cpu[pid],
                read_bytes=Unavailable("denied") if rng.random() < 0.05 else read[pid],
            ))
        out.append(Snapshot(taken_at=at, processes=tuple(rows)))
    return out


def test_runs_match_the_walk_over_a_sliding_history() -> None:
    th = Thresholds()
    for seed in range(6):
        history: deque[Snapshot] = deque(maxlen=25)  # short, so trimming is exercised
        runs = IdleRuns()
        compared = idle_found = 0
        for snapshot in _histories(seed):
            history.append(snapshot)
            runs.trim(history[0].taken_at)
            for p in snapshot.processes:
                walked = idle_seconds(list(history), p.pid, th)
                assert runs.idle_seconds(snapshot.process(p.pid), snapshot.taken_at, th) == walked, (seed, p.pid)
                compared += 1
                idle_found += walked is not None
            runs.add(snapshot)
        assert compared > 1000 and idle_found > 100  # the comparison saw idle and busy processes alike


def test_engine_figures_match_the_walk_even_when_time_goes_backwards() -> None:
    th = Thresholds()
    engine = DiagnosisEngine(thresholds=th, max_history=30)
    snapshots = _histories(7, steps=60)
    snapshots.insert(40, snapshots[10])  # a replayed old snapshot: time goes backwards once
    fallbacks = 0
    for snapshot in snapshots:
        engine.history.append(snapshot)
        figures = engine._idle_figures(snapshot)
        if figures is None:
            fallbacks += 1
        else:
            for p in snapshot.processes:
                assert figures.get(p.pid) == idle_since_at(list(engine.history), p.pid, th)
    assert fallbacks >= 1

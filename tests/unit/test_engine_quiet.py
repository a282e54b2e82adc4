"""The engine on a quiet tree (#18: in proportion to change): a tick whose rows are last tick's very tuple takes the
short paths (the idle runs answered without a pass over the rows, idle-since handed on, hypotheses whose evidence
did not move handed on), and every answer is still what a fresh computation over the same history gives; a row
that changes is seen at once."""

from __future__ import annotations

import dataclasses

from triage_tui.diagnose import same_rows
from triage_tui.diagnose.engine import DiagnosisEngine, idle_periods, observe
from triage_tui.diagnose.hypotheses import evaluate
from triage_tui.diagnose.idle_runs import IdleRuns
from triage_tui.diagnose.observations import idle_since_at
from triage_tui.diagnose.thresholds import Thresholds
from triage_tui.model.diagnosis import Observation
from triage_tui.model.snapshot import ProcessInfo, Snapshot

TH = Thresholds(idle_after_s=3.0)


def _rows(n: int = 6, cpu: float = 1.0) -> tuple[ProcessInfo, ...]:
    return tuple(ProcessInfo(pid=100 + i, ppid=1 if i == 0 else 100, name="w", state="S", cpu_percent=0.0,
                             cpu_time_s=cpu, read_bytes=0) for i in range(n))


def _fresh(engine: DiagnosisEngine, every: list[Snapshot]) -> tuple[list[Observation], dict[int, float]]:
    """Observations worked out from scratch over the engine's history (kept answers dropped), and idle-since over
    every look so far (what it says once the history is trimmed: since when it idles, not since the history's start)."""
    same_rows.forget()
    history = list(engine.history)
    scratch = observe(history, engine._stacks, engine.thresholds, engine._previous_stacks)
    walked = {p.pid: idle_since_at(every, p.pid, engine.thresholds) for p in every[-1].processes}
    return scratch, idle_periods(walked)


def test_a_quiet_tree_takes_the_short_paths_and_answers_as_from_scratch() -> None:
    rows = _rows()
    engine = DiagnosisEngine(TH, max_history=8)  # short: the history's start moves every tick after the 8th
    quiet_ticks = 0
    last = None
    every: list[Snapshot] = []
    for tick in range(20):
        every.append(Snapshot(taken_at=1000.0 + 1.25 * tick, processes=rows))
        d = engine.update(every[-1])
        scratch, since = _fresh(engine, every)
        assert list(d.observations) == scratch
        assert d.hypotheses == evaluate(scratch)
        assert d.idle_since == since
        if engine._idle.answered_quietly:
            quiet_ticks += 1
            assert last is not None and d.idle_since is last.idle_since
        last = d
    assert quiet_ticks >= 15  # every tick but the first few took the short path
    assert any(o.id == "all-idle" for o in last.observations)


def test_a_process_that_works_on_a_quiet_tree_is_seen_at_once() -> None:
    rows = _rows()
    engine = DiagnosisEngine(TH, max_history=8)
    every = [Snapshot(taken_at=1000.0 + tick, processes=rows) for tick in range(12)]
    for snapshot in every:
        quiet = engine.update(snapshot)
    assert engine._idle.answered_quietly and 103 in quiet.idle_since
    woke = tuple(dataclasses.replace(p, cpu_time_s=9.0) if p.pid == 103 else p for p in rows)
    every.append(Snapshot(taken_at=1012.0, processes=woke))
    d = engine.update(every[-1])
    assert not engine._idle.answered_quietly
    assert 103 not in d.idle_since and d.idle_since is not quiet.idle_since
    assert not any(o.id == "all-idle" for o in d.observations)  # one process just worked: not all idle
    scratch, since = _fresh(engine, every)
    assert list(d.observations) == scratch and d.idle_since == since
    # the same new rows again: idle since the look it worked in, the others since long before
    again = engine.update(Snapshot(taken_at=1013.0, processes=woke))
    assert again.idle_since[103] == 1012.0 and again.idle_since[100] == quiet.idle_since[100]


def test_idle_runs_quiet_answers_match_the_walk_as_the_history_slides() -> None:
    rows = _rows(4)
    fewer = rows[:3]  # one process gone: a new tuple of rows, then quiet again
    history: list[Snapshot] = []
    runs = IdleRuns()
    quiet = 0
    for tick in range(30):
        snapshot = Snapshot(taken_at=50.0 + 0.7 * tick, processes=rows if tick < 20 else fewer)
        history = (history + [snapshot])[-6:]
        runs.trim(history[0].taken_at)
        answer = runs.idle_since_times(snapshot, TH)
        quiet += runs.answered_quietly
        assert answer == {p.pid: s for p in rows if (s := idle_since_at(history, p.pid, TH)) is not None}
        runs.add(snapshot)
    assert quiet >= 20


def test_a_hypothesis_whose_evidence_did_not_move_is_kept_and_one_whose_text_moved_is_scored_again() -> None:
    def observations(idle_for: int) -> list[Observation]:
        return [Observation("several-processes", "6 live processes in the tree", "processes", 1.0,
                            {"processes": 6}, (1, 2, 3, 4, 5, 6)),
                Observation("all-idle", f"all 6 processes idle for {idle_for} s", "processes", 1.0,
                            {"processes": 6, "idle_s": float(idle_for)}, (1, 2, 3, 4, 5, 6)),
                Observation("memory-ample", "memory is ample", "memory", 1.0)]

    kept: dict = {}
    first = evaluate(observations(10), kept)
    second = evaluate(observations(10), kept)
    third = evaluate(observations(11), kept)
    assert first == evaluate(observations(10)) and third == evaluate(observations(11))
    assert all(a is b for a, b in zip(first, second, strict=True))  # nothing moved: every hypothesis is the same object
    citing = [h for h in third if any("idle for 11 s" in e.text for e in h.evidence)]
    assert citing  # the moved text is shown, not the kept one
    by_id = {h.id: h for h in second}
    assert all(by_id[h.id] is not h for h in citing)
    assert any(by_id[h.id] is h for h in third if h not in citing)  # the others were handed on

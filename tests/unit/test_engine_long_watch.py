"""The engine over a watch longer than its history (#18): what a Moment holds stops growing tick by tick,
and the answers are the ones a fresh evaluation of the same history gives."""

from __future__ import annotations

import dataclasses

from diagnose_cases import LAUNCHER, WORKERS, incident_series, incident_stacks

from triage_tui.diagnose.engine import DiagnosisEngine, observe
from triage_tui.diagnose.hypotheses import evaluate


def test_idle_since_stays_put_once_the_history_is_full() -> None:
    # The reference incident: every process idle from the first look. With a history of 10 looks the
    # oldest is dropped every tick from the 11th; "idle since" must not move with it.
    snaps = incident_series(40)
    bounded, whole = DiagnosisEngine(max_history=10), DiagnosisEngine(max_history=1000)
    short = [bounded.update(s) for s in snaps]
    long = [whole.update(s) for s in snaps]
    first = snaps[0].taken_at
    assert all(short[-1].idle_since[pid] == first for pid in (LAUNCHER, *WORKERS))
    assert [d.idle_since for d in short] == [d.idle_since for d in long]  # what a history of every look says
    assert all(a.idle_since is b.idle_since for a, b in zip(short[12:], short[13:]))  # one dict, not one a tick
    # and what the rules say is unchanged by the bound: the same ranking and statuses as the whole history
    assert [[(h.id, h.status) for h in d.hypotheses] for d in short[10:]] == \
        [[(h.id, h.status) for h in d.hypotheses] for d in long[10:]]


def test_a_process_that_works_again_is_idle_since_it_stopped_not_since_before() -> None:
    snaps = incident_series(30)
    worker = WORKERS[2]
    woke = dataclasses.replace(snaps[20], processes=tuple(
        dataclasses.replace(p, cpu_time_s=p.cpu_time_s + 50.0) if p.pid == worker else p for p in snaps[20].processes))
    later = [dataclasses.replace(s, processes=tuple(
        dataclasses.replace(p, cpu_time_s=p.cpu_time_s + 50.0) if p.pid == worker else p for p in s.processes))
        for s in snaps[21:]]
    engine = DiagnosisEngine(max_history=10)
    for s in snaps[:20]:
        engine.update(s)
    assert engine.update(woke).idle_since.get(worker) is None  # it just worked
    last = [engine.update(s) for s in later][-1]
    assert last.idle_since[worker] == woke.taken_at  # idle again since the look it worked in, not the first look
    assert last.idle_since[WORKERS[0]] == snaps[0].taken_at


def test_every_answer_is_a_fresh_evaluation_of_the_same_history() -> None:
    # The engine hands on last tick's PIDs, figures, texts and hypotheses where they are equal: the values
    # must be exactly what evaluating the history from scratch gives, tick after tick, stacks and all.
    snaps = incident_series(40)
    engine = DiagnosisEngine(max_history=10)
    for i, s in enumerate(snaps):
        stacks = incident_stacks(s.taken_at) if i >= 20 else None
        d = engine.update(s, stacks)
        fresh = observe(list(engine.history), engine._stacks, engine.thresholds, engine._previous_stacks)
        assert list(d.observations) == fresh
        assert d.hypotheses == evaluate(fresh)


def test_a_quiet_watch_shares_what_did_not_change() -> None:
    snaps = incident_series(30)
    engine = DiagnosisEngine(max_history=10)
    ds = [engine.update(s) for s in snaps]
    a, b = ds[-2], ds[-1]
    # a hypothesis equal to last tick's is last tick's object; the ones citing the log's silence (it grows) are new
    pairs = list(zip(a.hypotheses, b.hypotheses))
    assert all((x is y) == (x == y) for x, y in pairs)
    assert 0 < sum(x is y for x, y in pairs) < len(pairs)
    several = [next(o for o in d.observations if o.id == "several-processes") for d in (a, b)]
    assert several[0] is not several[1] and several[0].at != several[1].at
    assert several[1].pids is several[0].pids and len(several[1].pids) == 9

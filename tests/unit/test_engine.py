"""The engine over whole histories: the reference incident, stack captures, the changelog, bounded history."""

from __future__ import annotations

import dataclasses

from diagnose_cases import (
    BARRIER,
    LAUNCHER,
    T0,
    WORKERS,
    incident_series,
    incident_snapshot,
    incident_stacks,
    proc,
    series,
    stack_capture,
)

from triage_tui.diagnose.engine import DiagnosisEngine, diagnose_once
from triage_tui.model.snapshot import Snapshot
from triage_tui.model.stacks import Frame


def run(history, stacks=None, engine=None):
    engine = engine or DiagnosisEngine()
    d = None
    for snap in history:
        d = engine.update(snap, stacks)
    return engine, d


def by_id(d, hid):
    return next(h for h in d.hypotheses if h.id == hid)


def test_reference_incident_ranks_a_wait_for_the_missing_rank_and_rules_out_crash_and_oom() -> None:
    _, d = run(incident_series(31))  # 300 s of silence after the loading bar
    top = d.hypotheses[0]
    assert top.id == "wait-for-missing-rank" and top.status == "likely"
    assert any("idle" in t and "9 processes" in t for t in top.for_)
    assert any("100%" in t for t in top.for_)
    assert "capture stacks" in top.next_check and ": S" in top.next_check
    crashed = by_id(d, "crashed-worker")
    assert crashed.status == "ruled out" and "every process is alive" in crashed.against[0]
    oom = by_id(d, "oom")
    assert oom.status == "ruled out"
    assert "415 GiB available of 449 GiB" in oom.against[0] and "RSS summed over 9 processes is 3.1 TiB" in oom.against[0]
    assert by_id(d, "still-loading").status == "ruled out"
    assert by_id(d, "rss-illusion").status == "likely"


def test_reference_incident_is_on_top_within_30_s_of_attaching() -> None:
    _, d = run(incident_series(4, step=10.0))  # attach, then 30 s
    assert d.hypotheses[0].id == "wait-for-missing-rank"


def test_stacks_name_the_odd_rank() -> None:
    engine, _ = run(incident_series(10))
    snap = incident_series(11)[-1]
    d = engine.update(snap, incident_stacks(snap.taken_at, odd_pid=WORKERS[3]))
    top = d.hypotheses[0]
    assert top.id == "wait-for-missing-rank" and f"PID {WORKERS[3]}" in top.title and "init_drafter" in top.title
    assert f"py-spy dump --native the odd rank PID {WORKERS[3]}" in top.next_check
    assert any("wait-for-missing-rank" in c for c in d.changes) or top.status == "likely"


def test_all_ranks_in_one_collective_make_a_collective_hang() -> None:
    engine, _ = run(incident_series(10))
    snap = incident_series(11)[-1]
    capture = stack_capture(snap.taken_at, {pid: BARRIER for pid in WORKERS})
    d = engine.update(snap, capture)
    assert d.hypotheses[0].id == "collective-hang"
    assert any("same collective" in t for t in d.hypotheses[0].for_)
    assert any("no rank is elsewhere" in t for t in by_id(d, "wait-for-missing-rank").against)


def test_ranks_in_different_collectives_make_a_mismatch() -> None:
    gather = (Frame("all_gather", "torch/distributed/distributed_c10d.py", 2890), *BARRIER[1:])
    frames = {pid: (BARRIER if i < 4 else gather) for i, pid in enumerate(WORKERS)}
    snap = incident_series(11)[-1]
    engine, _ = run(incident_series(10))
    d = engine.update(snap, stack_capture(snap.taken_at, frames))
    assert d.hypotheses[0].id == "collective-mismatch"


def test_lock_waits_make_a_deadlock_and_unchanged_stacks_count() -> None:
    lock = (Frame("PyThread_acquire_lock_timed", "python3.11", native=True), Frame("work", "app.py", 10))
    hist = series([Snapshot(processes=(proc(1, cpu_time=2.0),)) for _ in range(8)], 2.0)
    engine, _ = run(hist[:6])
    first = stack_capture(hist[6].taken_at, {1: lock})
    first = dataclasses.replace(first, processes=(dataclasses.replace(
        first.processes[0], threads=first.processes[0].threads + (dataclasses.replace(
            first.processes[0].threads[0], tid=2, name="worker"),)),))
    engine.update(hist[6], first)
    second = dataclasses.replace(first, taken_at=hist[7].taken_at)
    d = engine.update(hist[7], second)
    assert d.hypotheses[0].id == "deadlock" and d.hypotheses[0].status == "likely"
    assert any("unchanged between two captures" in t for t in d.hypotheses[0].for_)


def test_rendezvous_stacks_make_a_network_wait() -> None:
    rdzv = (Frame("_create_c10d_store", "torch/distributed/rendezvous.py", 189),
            Frame("init_process_group", "torch/distributed/distributed_c10d.py", 1510))
    hist = series([Snapshot(processes=(proc(1), proc(2, 1), proc(3, 1))) for _ in range(6)], 2.0)
    engine, _ = run(hist[:-1])
    d = engine.update(hist[-1], stack_capture(hist[-1].taken_at, {2: rdzv, 3: rdzv}))
    assert d.hypotheses[0].id == "network-wait"


def test_changelog_reads_like_a_person_wrote_it() -> None:
    engine, _ = run(incident_series(31))
    moves = [c for c in engine.changelog if c.split(" ")[1] == "wait-for-missing-rank"]
    assert moves and "→ likely" in moves[-1] and "idle" in moves[-1]
    assert any(" oom → ruled out: not an OOM: 415 GiB available" in c for c in engine.changelog)
    line = moves[-1]
    assert line[2] == ":" and line[5] == ":"  # HH:MM:SS first
    # a status that does not move adds no line
    before = len(engine.changelog)
    engine.update(incident_series(32)[-1])
    assert len(engine.changelog) == before


def test_history_is_bounded_by_count_and_age() -> None:
    engine = DiagnosisEngine(window_s=50.0, max_history=100)
    run(incident_series(20), engine=engine)
    assert len(engine.history) == 6  # 50 s at 10 s steps, both ends
    small = DiagnosisEngine(max_history=3)
    run(incident_series(10), engine=small)
    assert len(small.history) == 3


def test_a_process_that_starts_working_again_moves_the_diagnosis_back() -> None:
    hist = incident_series(10)
    engine, d = run(hist)
    assert d.hypotheses[0].id == "wait-for-missing-rank"
    busy = [dataclasses.replace(p, cpu_time_s=p.cpu_time_s + 100.0 * (p.pid != LAUNCHER), cpu_percent=99.0)
            for p in hist[-1].processes]
    snap = dataclasses.replace(incident_snapshot(0.5), processes=tuple(busy), taken_at=T0 + 110.0)
    d = engine.update(snap)
    assert by_id(d, "busy-loop").status != "ruled out"
    assert any("wait-for-missing-rank likely →" in c for c in d.changes)


def test_diagnose_once_judges_one_look() -> None:
    d = diagnose_once(incident_snapshot(300.0))
    assert d.hypotheses[0].id == "wait-for-missing-rank"
    assert d.changes == ()


def _gone(history, exit_code):
    """`history` then one snapshot in which every process has exited (the root with `exit_code`)."""
    from triage_tui.model.snapshot import ExitedProcess

    last = history[-1]
    exited = tuple(ExitedProcess(pid=p.pid, name=p.name, last_seen=last.taken_at + 2,
                                 exit_code=exit_code if p.pid == LAUNCHER else -9) for p in last.processes)
    return [*history, dataclasses.replace(last, taken_at=last.taken_at + 2, processes=(), exited=exited)]


def test_a_target_that_is_gone_is_a_fact_never_healthy() -> None:
    from triage_tui.model.unavailable import Unavailable

    for code, status in ((1, "likely"), (Unavailable("exit status hidden: another user's process"), "likely")):
        _, d = run(_gone(incident_series(5), code))
        gone = [o for o in d.observations if o.id == "target-gone"]
        assert len(gone) == 1 and f"root PID {LAUNCHER}" in gone[0].text
        assert ("exit code 1" if code == 1 else "exit status unknown (exit status hidden") in gone[0].text
        top = d.hypotheses[0]
        assert top.id == "crashed-worker" and top.status == status and "The target is gone" in top.title
        assert by_id(d, "healthy").status == "ruled out"
        assert "exit code 0" not in " ".join(o.text for o in d.observations)


def test_a_target_that_ended_with_code_0_is_gone_not_a_crash_and_not_healthy() -> None:
    _, d = run(_gone(incident_series(5), 0))
    assert any(o.id == "target-exited-ok" for o in d.observations)
    assert by_id(d, "healthy").status == "ruled out"
    assert by_id(d, "crashed-worker").status != "likely"


def test_idle_since_is_the_same_object_while_it_does_not_change() -> None:
    """A quiet tree's idle-since figures do not move: the Moments of a long watch share one dict (a new
    dict of 1,000 floats every refresh was kept for each Moment of the timeline), and a change is seen."""
    import dataclasses as _dc

    from triage_tui.diagnose.engine import DiagnosisEngine as _Engine
    from triage_tui.model.snapshot import ProcessInfo as _P
    from triage_tui.model.snapshot import Snapshot as _S

    engine = _Engine()
    rows = tuple(_P(pid=10 + i, ppid=1, name="w", state="S", cpu_percent=0.0, cpu_time_s=1.0) for i in range(3))
    engine.update(_S(taken_at=100.0, processes=rows))
    second = engine.update(_S(taken_at=101.0, processes=rows))
    third = engine.update(_S(taken_at=102.0, processes=rows))
    assert third.idle_since is second.idle_since and third.idle_since == {10: 100.0, 11: 100.0, 12: 100.0}
    busy = (_dc.replace(rows[0], cpu_time_s=5.0),) + rows[1:]
    fourth = engine.update(_S(taken_at=103.0, processes=busy))
    assert 10 not in fourth.idle_since and fourth.idle_since is not third.idle_since

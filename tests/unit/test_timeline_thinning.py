"""A long live watch thins its quiet past (#18): what looking back needs stays, the count stays bounded,
the engine's answers do not depend on it, and a replay still shows every Moment recorded."""

from __future__ import annotations

from triage_tui.demo.fixture import FixtureHost, build_snapshots
from triage_tui.diagnose.engine import DiagnosisEngine
from triage_tui.incident import Incident
from triage_tui.model.diagnosis import Diagnosis, Hypothesis
from triage_tui.model.moment import Moment
from triage_tui.model.snapshot import Snapshot
from triage_tui.model.stacks import StackCapture
from triage_tui.model.timeline import MomentTimeline
from triage_tui.model.timeline_thinning import RECENT_S, THIN_EVERY_S, appended, ranking, thinned
from triage_tui.record.reader import read_record
from triage_tui.record.recorder import Recorder
from triage_tui.record.replay import ReplayView

T0 = 1_700_000_000.0
QUIET = (Hypothesis("deadlock", "a deadlock", "possible", 0.4), Hypothesis("oom", "out of memory", "unlikely", 0.0))
LIKELY = (Hypothesis("deadlock", "a deadlock", "likely", 0.7), Hypothesis("oom", "out of memory", "unlikely", 0.0))
CAPTURE = StackCapture(taken_at=T0 + 3000.0, pids=(1,))


def diagnosis_at(t: int) -> Diagnosis:
    """Possible until 1,000 s, likely from then to 4,000 s, possible again after (a status moving twice)."""
    hypotheses = LIKELY if 1000 <= t < 4000 else QUIET
    changes = ("deadlock possible → likely",) if t == 1000 else ("deadlock likely → possible",) if t == 4000 else ()
    return Diagnosis(hypotheses=hypotheses, changes=changes)


def moments(seconds: int, quiet: bool = False) -> list[Moment]:
    """A 1 s watch; a stack capture at 3,000 s held by every Moment after it, as an Incident holds it.
    `quiet`: nothing moves at all."""
    if quiet:
        same = Diagnosis(hypotheses=QUIET)
        return [Moment(Snapshot(taken_at=T0 + t), same) for t in range(seconds)]
    return [Moment(Snapshot(taken_at=T0 + t), diagnosis_at(t), CAPTURE if t >= 3000 else None) for t in range(seconds)]


def kept_in(kept, candidates) -> list[bool]:
    ids = {id(m) for m in kept}
    return [id(m) in ids for m in candidates]


def watch(all_moments: list[Moment], max_count: int | None = 2000) -> tuple[Moment, ...]:
    timeline: tuple[Moment, ...] = ()
    for m in all_moments:
        timeline = appended(timeline, m, max_count)
    return timeline


def turns(all_moments: list[Moment]) -> list[Moment]:
    return [m for prev, m in zip(all_moments, all_moments[1:])
            if m.diagnosis.changes or m.stacks is not prev.stacks or ranking(m) != ranking(prev)]


def test_thinning_keeps_the_first_the_last_every_turn_and_the_recent_past_whole() -> None:
    every = moments(3 * 3600)
    kept = watch(every)
    assert kept[0] is every[0] and kept[-1] is every[-1]
    assert [m.taken_at - T0 for m in turns(every)] == [1000.0, 3000.0, 4000.0]  # the test's own turns
    assert all(kept_in(kept, turns(every)))
    assert all(kept_in(kept, [m for m in every if every[-1].taken_at - m.taken_at <= RECENT_S]))
    assert len(kept) < len(every) / 10
    times = [m.taken_at for m in kept]
    assert times == sorted(set(times))  # in order, each once


def test_the_quiet_past_is_sampled_evenly_coarser_with_age() -> None:
    kept = watch(moments(3 * 3600, quiet=True))
    latest = kept[-1].taken_at
    # within the hour (after the recent five minutes) one Moment per 30 s, beyond it one per 5 min
    within = [m for m in kept if RECENT_S + THIN_EVERY_S < latest - m.taken_at < 3600]
    assert {round(b.taken_at - a.taken_at) for a, b in zip(within, within[1:])} == {30}
    older = [m for m in kept[1:] if latest - m.taken_at > 3600 + 300]
    assert {round(b.taken_at - a.taken_at) for a, b in zip(older, older[1:])} == {300}
    recent = [m for m in kept if latest - m.taken_at <= RECENT_S]
    assert {round(b.taken_at - a.taken_at) for a, b in zip(recent, recent[1:])} == {1}


def test_the_bound_holds_after_many_ticks() -> None:
    # the count, never bytes or time: after 10 minutes, after an hour and after three
    for seconds, bound in ((600, 300 + 300 / 30 + THIN_EVERY_S + 2 + 3),
                           (3600, 300 + 3300 / 30 + THIN_EVERY_S + 2 + 3),
                           (3 * 3600, 300 + 3300 / 30 + 7200 / 300 + THIN_EVERY_S + 2 + 3)):
        assert len(watch(moments(seconds))) <= bound, seconds
    # with a hard cap the count never passes it, however long the watch
    capped = watch(moments(3 * 3600), max_count=350)
    assert len(capped) <= 350 and capped[-1].taken_at == T0 + 3 * 3600 - 1


def test_thinning_is_idempotent_and_what_it_kept_stays() -> None:
    every = moments(2 * 3600 + 600)
    kept = watch(every[:2 * 3600])
    once = thinned(kept)
    assert all(a is b for a, b in zip(thinned(once), once)) and len(thinned(once)) == len(once)
    later = watch(every)
    # what was kept past the recent five minutes and is still within the hour ten minutes later is kept then
    still_young = [m for m in once if once[-1].taken_at - m.taken_at > RECENT_S and later[-1].taken_at - m.taken_at < 3600]
    assert still_young and all(kept_in(later, still_young))


def test_the_moment_on_screen_is_kept_whatever_its_age() -> None:
    every = moments(1200)
    dropped = [m for m, kept in zip(every, kept_in(watch(every), every)) if not kept]
    looked_at = dropped[len(dropped) // 2]  # a quiet one, not the first of its 30 s bucket
    timeline: tuple[Moment, ...] = ()
    for m in every:
        timeline = appended(timeline, m, 2000, keep={looked_at.taken_at} if m.taken_at >= looked_at.taken_at else set())
    assert kept_in(timeline, [looked_at]) == [True]


def test_a_replay_view_is_never_thinned() -> None:
    assert MomentTimeline.thin is False and ReplayView.thin is False and Incident.thin is True


def test_a_long_incident_thins_its_timeline_but_records_and_diagnoses_every_refresh(tmp_path) -> None:
    snaps = build_snapshots(900, interval_s=1.0)  # 15 minutes of the reference incident, 1 s apart
    host = FixtureHost(snaps)
    path = tmp_path / "long.jsonl"
    incident = Incident(host, host.target, host.options, recorder=Recorder(path, host.name))
    made = [incident.tick() for _ in snaps]
    incident.close()
    assert len(incident.timeline) < 500 and incident.timeline[0] is made[0] and incident.timeline[-1] is made[-1]
    assert all(kept_in(made, incident.timeline))
    # the engine's history is its own, not the timeline: every diagnosis is what an engine fed every snapshot says
    engine = DiagnosisEngine()
    assert all(engine.update(m.snapshot) == m.diagnosis for m in made)
    # the record has every Moment, and a replay of it serves every one, none thinned
    replay = ReplayView(read_record(path), preload=900)
    assert len(replay.timeline) == 900
    assert [m.taken_at for m in replay.timeline] == [m.taken_at for m in made]

"""Replay: a recording stepped through as the app steps a live incident, hypotheses as they stood."""

from __future__ import annotations

from pathlib import Path

from record_shapes import WORKERS, record_demo

from triage_tui.model.moment import Moment
from triage_tui.model.unavailable import Unavailable
from triage_tui.record.reader import Recording, read_record
from triage_tui.record.recorder import Recorder
from triage_tui.record.replay import NO_LIVE_CAPTURE, ReplayView


def _recorded(tmp_path: Path, ticks: int = 6):
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path, host="gpu-node-7")
    moments, capture, changes = record_demo(recorder, ticks=ticks, capture_at=3)
    recorder.close()
    return read_record(path), moments, capture, changes


def test_tick_steps_through_the_recording_with_the_hypotheses_of_each_moment(tmp_path: Path) -> None:
    recording, snapshots, capture, changes = _recorded(tmp_path)
    incident = ReplayView(recording)
    assert incident.latest is None and "gpu-node-7" in incident.host_name

    seen = [incident.tick() for _ in snapshots]

    assert seen == snapshots
    assert list(incident.timeline) == snapshots
    statuses = [m.diagnosis.hypotheses[0].status for m in seen]
    assert statuses == ["possible"] * 3 + ["likely"] * 3  # as they stood, not the final verdict
    assert list(incident.changelog) == [line for _, line in changes]
    assert incident.latest_stacks == capture
    assert incident.finished
    assert incident.tick() == snapshots[-1]  # at the end: the last one again, the timeline unchanged
    assert len(incident.timeline) == len(snapshots)


def test_changelog_follows_the_moment_shown(tmp_path: Path) -> None:
    recording, snapshots, _, changes = _recorded(tmp_path)
    incident = ReplayView(recording)
    incident.tick()
    assert list(incident.changelog) == []
    incident.tick()
    assert list(incident.changelog) == [changes[0][1]]


def test_capture_stacks_answers_from_the_recording(tmp_path: Path) -> None:
    recording, _, capture, _ = _recorded(tmp_path)
    incident = ReplayView(recording)
    incident.tick()
    assert incident.capture_stacks() == capture  # the nearest recorded capture
    assert incident.latest_stacks == capture


def test_capture_stacks_without_a_recorded_capture_says_so(tmp_path: Path) -> None:
    recording, _, _, _ = _recorded(tmp_path, ticks=2)  # the capture comes at tick 3: none recorded
    incident = ReplayView(recording)
    incident.tick()
    empty = incident.capture_stacks()
    assert empty.processes == () and empty.notes == (NO_LIVE_CAPTURE,)
    assert set(WORKERS) <= set(empty.pids)


def test_an_empty_recording_ticks_without_crashing() -> None:
    incident = ReplayView(Recording(path="x", header={"kind": "header", "host": "h", "target": ["1"]}))
    moment = incident.tick()
    assert isinstance(moment, Moment) and moment.snapshot.target.specs == ("1",)
    assert incident.capture_stacks().notes == (NO_LIVE_CAPTURE,)


def test_preload_puts_the_first_moments_in_the_timeline(tmp_path: Path) -> None:
    recording, snapshots, _, changes = _recorded(tmp_path)
    incident = ReplayView(recording, preload=4)
    assert list(incident.timeline) == snapshots[:4] and list(incident.changelog) == [line for _, line in changes]
    assert list(ReplayView(recording, preload=99).timeline) == snapshots


def test_mappings_were_not_recorded(tmp_path: Path) -> None:
    """`m` in a replay: one plain sentence, and nothing of this machine's /proc is read."""
    recording, _, _, _ = _recorded(tmp_path)
    incident = ReplayView(recording, preload=1)
    result = incident.mappings_by_file(WORKERS[0], WORKERS)
    assert isinstance(result, Unavailable) and result.reason == "mappings were not recorded"

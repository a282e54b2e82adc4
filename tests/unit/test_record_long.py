"""A long incident: the record grows by little per refresh, and a cap stops it with a clear note."""

from __future__ import annotations

from pathlib import Path

from record_shapes import file_size, many_processes, record_lines

from triage_tui.model.moment import Moment
from triage_tui.record.reader import read_record
from triage_tui.record.recorder import Recorder

REFRESHES = 5000
PROCESSES = 50


def test_five_thousand_refreshes_stay_small_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    recorder = Recorder(path)
    snapshot = many_processes(PROCESSES, 0)
    recorder.write_moment(Moment(snapshot))
    first = file_size(path)
    written = [snapshot]
    for tick in range(1, REFRESHES):
        snapshot = many_processes(PROCESSES, tick, base=snapshot)
        recorder.write_moment(Moment(snapshot))
        if tick % 1000 == 0 or tick == REFRESHES - 1:
            written.append(snapshot)
    recorder.close()

    total = file_size(path)
    # A delta (one row moved, one memory figure, the time) costs far less than the full snapshot:
    # all 5,000 refreshes in full would be 5,000 × first; with a keyframe every 1,000 refreshes and
    # deltas between, the record is about 20 full snapshots' worth.
    assert total < REFRESHES * first / 100, (total, first)
    assert (total - first) / (REFRESHES - 1) < first / 20

    recording = read_record(path)
    assert recording.skipped == []
    assert len(recording.snapshots) == REFRESHES
    by_time = {s.taken_at: s for s in recording.snapshots}
    assert all(by_time[s.taken_at] == s for s in written)


def test_the_cap_stops_recording_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "capped.jsonl"
    cap = 256 * 1024
    recorder = Recorder(path, cap_bytes=cap)
    snapshot = many_processes(PROCESSES, 0)
    for tick in range(1, 2000):
        snapshot = many_processes(PROCESSES, tick, base=snapshot)
        recorder.write_moment(Moment(snapshot))
    recorder.write_moment(Moment(snapshot))  # after the cap: not written
    recorder.close()

    assert recorder.capped and "reached its cap of 256 KiB" in recorder.message
    assert file_size(path) <= cap
    last = record_lines(path)[-1]
    assert last["kind"] == "note" and last["capped"] is True and "cap of 256 KiB reached" in last["text"]
    recording = read_record(path)
    assert recording.capped and 0 < len(recording.snapshots) < 1999
    assert any("size cap" in line for line in recording.skipped)
    assert "after the cap" not in path.read_text()

"""Records that were cut, written by a newer triage, or are not records: what replays and what is said."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from record_shapes import record_demo, record_lines

from triage_tui.record.reader import read_record
from triage_tui.record.recorder import Recorder, RecordError


def _demo_record(path: Path, ticks: int = 6) -> list:
    recorder = Recorder(path, host="gpu-node-7")
    snapshots, _, _ = record_demo(recorder, ticks=ticks)
    recorder.close()
    return snapshots


def test_a_record_killed_mid_write_replays_all_before_the_cut(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    snapshots = _demo_record(path)
    data = path.read_bytes()
    last_line_start = data.rstrip(b"\n").rfind(b"\n") + 1
    cut = last_line_start + (len(data) - last_line_start) // 2
    path.write_bytes(data[:cut])  # the last snapshot's line, half written

    recording = read_record(path)

    assert recording.moments == snapshots[:-1]
    assert len(recording.skipped) == 1
    assert "cut mid-write" in recording.skipped[0]


def test_a_record_from_a_newer_schema_replays_what_it_can(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    snapshots = _demo_record(path, ticks=4)
    records = record_lines(path)
    records[0]["schema_version"] += 1
    records[0]["future_header_field"] = {"x": 1}
    records[1]["full"]["gpu_history"] = [1, 2, 3]  # a field this version has no place for
    records[1]["full"]["processes"][0]["cgroup_pressure"] = 0.5
    records[2]["set"]["power_budget"] = 7
    records[2].setdefault("seq", {})["accelerators"] = [{"new": {"id": "x"}}]  # a keyed list we do not know
    future = [{"kind": "gpu-history", "at": 1.0, "samples": [1, 2]}, {"kind": "gpu-history", "at": 2.0}]
    records = records[:2] + future + records[2:]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))

    recording = read_record(path)

    assert recording.moments == snapshots
    said = "\n".join(recording.skipped)
    assert "newer triage" in said and "record schema 3" in said
    assert "unknown kind 'gpu-history'" in said and "1 more" in said
    assert "Snapshot.gpu_history" in said
    assert "ProcessInfo.cgroup_pressure" in said
    assert "Snapshot.power_budget" in said
    assert "Snapshot.accelerators" in said


def test_a_broken_line_in_the_middle_skips_until_the_next_keyframe(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path, keyframe_every=3)
    snapshots, _, _ = record_demo(recorder, ticks=9)
    recorder.close()
    lines = path.read_text().splitlines()
    snapshot_lines = [i for i, line in enumerate(lines) if '"kind":"snapshot"' in line]
    broken = snapshot_lines[1]  # a delta right after the first keyframe
    lines[broken] = lines[broken][: len(lines[broken]) // 2]
    path.write_text("\n".join(lines) + "\n")

    recording = read_record(path)

    assert recording.moments[0] == snapshots[0]
    assert recording.moments[-1] == snapshots[-1]  # a later keyframe starts afresh
    assert all(s in snapshots for s in recording.moments)
    said = "\n".join(recording.skipped)
    assert "not JSON" in said and "delta skipped" in said


@pytest.mark.parametrize("content", [b"", b"\n\n", b"hello world\n", b'{"kind": "snapshot"}\n', b"\x00\xff\xfe" * 50,
                                     b'{"kind": "header", "schema'])
def test_a_file_that_is_not_a_record_is_one_clear_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(RecordError, match="is not a triage record"):
        read_record(path)


def test_a_missing_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="cannot read"):
        read_record(tmp_path / "nope.jsonl")


def test_replay_of_a_garbage_file_exits_1_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(b"\x89PNG\r\n\x1a\n not a record")
    out = subprocess.run([sys.executable, "-m", "triage_tui", "replay", str(path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1  # a runtime failure: the command line was right, the file is not a record
    assert out.stderr.count("\n") == 1 and "not a triage record" in out.stderr
    assert "Traceback" not in out.stderr


def test_odd_values_never_break_the_chain_of_deltas(tmp_path: Path) -> None:
    import dataclasses

    from record_shapes import demo_snapshot

    from triage_tui.model.moment import Moment

    path = tmp_path / "r.jsonl"
    recorder = Recorder(path)
    first = demo_snapshot(1)
    nan = dataclasses.replace(first, taken_at=first.taken_at + 2, interval_s=float("nan"))
    bad = dataclasses.replace(first, taken_at=first.taken_at + 4, host=b"bytes")  # type: ignore[arg-type]
    after = dataclasses.replace(first, taken_at=first.taken_at + 6, interval_s=3.0)
    for snapshot in (first, nan, bad, after):
        recorder.write_moment(Moment(snapshot))
    recorder.close()

    recording = read_record(path)
    read = recording.snapshots
    assert read[0] == first and read[-1] == after and len(read) == 3
    # NaN is not a figure: the delta's damaged value is left out (the field keeps the value it had) and counted
    assert read[1].interval_s == first.interval_s and read[1].taken_at == nan.taken_at
    assert any("damaged value left out (Snapshot.interval_s)" in line for line in recording.skipped)
    assert any("was not written" in text for _, text in recording.notes)
    assert (path.stat().st_mode & 0o777) == 0o600


def test_a_file_recorded_into_twice_reads_both_runs(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    first_run = _demo_record(path, ticks=3)
    second_run = _demo_record(path, ticks=2)  # --record FILE again: appended after a second header
    recording = read_record(path)
    assert recording.moments == first_run + second_run
    assert recording.skipped == []


@pytest.mark.timeout(60)  # before the fix, each open of the FIFO waited for the other end forever
def test_a_fifo_is_neither_recorded_to_nor_read_as_a_record(tmp_path: Path) -> None:
    fifo = tmp_path / "record.fifo"
    os.mkfifo(fifo)
    with pytest.raises(RecordError, match="cannot read .*not a regular file"):
        read_record(fifo)
    with pytest.raises(RecordError, match="cannot record to"):
        Recorder(fifo)

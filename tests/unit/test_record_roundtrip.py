"""A record read back gives exactly the Moments (snapshot, diagnosis, stacks), captures and changes written;
records of schema 1 (the diagnosis inside the snapshot) still read back as Moments."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from record_shapes import (
    LAUNCHER,
    WORKERS,
    demo_change,
    demo_moment,
    demo_snapshot,
    file_size,
    many_processes,
    odd_capture,
    record_demo,
    record_lines,
)

from triage_tui.model.moment import Moment
from triage_tui.model.snapshot import LogLine, LogTail, ProcessInfo, Snapshot
from triage_tui.model.unavailable import Unavailable
from triage_tui.record.reader import read_record
from triage_tui.record.recorder import Recorder


def test_every_snapshot_reads_back_equal(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path, host="gpu-node-7", target=(str(LAUNCHER),))
    moments, capture, changes = record_demo(recorder, ticks=8)
    recorder.close()

    recording = read_record(path)

    assert recording.skipped == []
    assert recording.header["host"] == "gpu-node-7"
    assert recording.header["target"] == [str(LAUNCHER)]
    assert len(recording.moments) == len(moments)
    for written, read in zip(moments, recording.moments, strict=True):
        assert read == written
    assert recording.stacks == [capture]
    assert recording.changes == changes
    # the capture is written once, as its own record; the snapshots that carry it refer to it
    assert sum('"capture"' in line for line in path.read_text().splitlines()) == 1


def test_keyframes_rows_that_come_and_go_and_reorder(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path, keyframe_every=3)
    base = demo_moment(2)
    snap = base.snapshot
    born = ProcessInfo(pid=5, ppid=LAUNCHER, name="child", rss_bytes=Unavailable("permission denied", "run as root"))
    variants = [
        base,
        dataclasses.replace(base, snapshot=dataclasses.replace(snap, processes=snap.processes[1:])),  # launcher gone
        dataclasses.replace(base, snapshot=dataclasses.replace(  # new row, new order
            snap, processes=tuple(reversed(snap.processes)) + (born,))),
        dataclasses.replace(base, snapshot=dataclasses.replace(snap, processes=(), logs=())),  # everything gone
        dataclasses.replace(base, stacks=odd_capture(1.0)),  # a capture never written on its own
        dataclasses.replace(base, stacks=None, snapshot=dataclasses.replace(snap, host="renamed")),
        dataclasses.replace(base, diagnosis=dataclasses.replace(base.diagnosis, hypotheses=(), idle_since={})),
        base,
    ]
    for moment in variants:
        recorder.write_moment(moment)
    recorder.close()

    assert read_record(path).moments == variants
    assert sum("full" in r for r in record_lines(path)) >= 2  # keyframe_every=3 wrote fresh keyframes


def test_log_lines_are_written_once_each(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path)
    window = 5
    snapshots = []
    for tick in range(30):
        lines = tuple(LogLine(f"unique-line-{k}", float(k)) for k in range(max(0, tick - window), tick))
        snapshots.append(Snapshot(taken_at=float(tick), logs=(LogTail(path="/l", lines=lines),)))
        recorder.write_moment(Moment(snapshots[-1]))
    recorder.close()

    text = path.read_text()
    assert all(text.count(f'"unique-line-{k}"') == 1 for k in range(29))
    recording = read_record(path)
    assert recording.snapshots == snapshots
    assert [line.text for _, line in recording.log_lines()] == [f"unique-line-{k}" for k in range(29)]


def test_a_rotated_log_is_written_whole_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path)
    before = Snapshot(taken_at=1.0, logs=(LogTail(path="/l", lines=(LogLine("a", 1.0), LogLine("b", 1.0))),))
    after = Snapshot(taken_at=2.0, logs=(LogTail(path="/l", lines=(LogLine("fresh", 2.0),)),))
    for snapshot in (before, after):
        recorder.write_moment(Moment(snapshot))
    recorder.close()
    assert read_record(path).snapshots == [before, after]


def test_an_unchanged_snapshot_costs_far_less_than_the_first(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path)
    first = many_processes(50, 0)
    recorder.write_moment(Moment(first))
    after_first = file_size(path)
    recorder.write_moment(Moment(dataclasses.replace(first, taken_at=first.taken_at + 2.0)))
    second_cost = file_size(path) - after_first
    recorder.close()

    assert second_cost * 50 < after_first, (second_cost, after_first)
    last = record_lines(path)[-1]
    assert last["set"] == {"taken_at": first.taken_at + 2.0}
    assert "seq" not in last  # not even the unchanged PIDs: the whole table is the same


def test_a_changed_row_is_written_as_its_changed_fields(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path)
    first = demo_snapshot(1)
    moved = tuple(dataclasses.replace(p, cpu_time_s=99.5) if p.pid == WORKERS[0] else p for p in first.processes)
    recorder.write_moment(Moment(first))
    recorder.write_moment(Moment(dataclasses.replace(first, processes=moved)))
    recorder.close()

    rows = record_lines(path)[-1]["seq"]["processes"]
    assert rows[0] == LAUNCHER  # unchanged rows are their PIDs
    assert rows[1] == {"key": WORKERS[0], "set": {"cpu_time_s": 99.5}}
    assert rows[2:] == [[WORKERS[1], 7]]  # a run of unchanged rows is its first PID and its length


def test_default_path_is_under_the_xdg_state_directory(tmp_path: Path, monkeypatch) -> None:
    import argparse

    from triage_tui.record.recorder import recorder_from_args

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    recorder = recorder_from_args(argparse.Namespace(record=None, no_record=False, targets=["1"]), "node/7")
    assert recorder is not None
    recorder.close()
    assert recorder.path.parent == tmp_path / "state" / "triage"
    assert recorder.path.name.startswith("triage-node_7-") and recorder.path.name.endswith(".jsonl.gz")
    assert read_record(recorder.path).header["target"] == ["1"]

    named = recorder_from_args(argparse.Namespace(record=str(tmp_path / "x.jsonl"), no_record=False), "h")
    assert named is not None and named.path == tmp_path / "x.jsonl"
    named.close()
    assert recorder_from_args(argparse.Namespace(record="x", no_record=True), "h") is None


def test_a_named_record_that_cannot_be_written_is_one_clear_error(tmp_path: Path) -> None:
    import argparse

    import pytest

    from triage_tui.record.recorder import RecordError, recorder_from_args

    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(RecordError, match="cannot record to"):
        recorder_from_args(argparse.Namespace(record=str(blocker / "r.jsonl"), no_record=False), "h")
    assert not os.path.exists(blocker / "r.jsonl")


def test_hypotheses_and_observations_are_written_item_by_item(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path)
    first = demo_moment(1)
    hang, oom = first.diagnosis.hypotheses
    later = Moment(
        dataclasses.replace(first.snapshot, taken_at=first.snapshot.taken_at + 2.0),
        dataclasses.replace(first.diagnosis, hypotheses=(dataclasses.replace(hang, status="likely", score=0.9), oom),
                            observations=first.diagnosis.observations[1:], changes=()),
    )
    recorder.write_moment(first)
    recorder.write_moment(later)
    recorder.close()

    seq = record_lines(path)[-1]["diagnosis"]["seq"]
    assert seq["hypotheses"] == [{"key": hang.id, "set": {"status": "likely", "score": 0.9}}, oom.id]
    assert seq["observations"] == [first.diagnosis.observations[1].id]
    assert "set" not in record_lines(path)[-1]["diagnosis"]  # idle_since unchanged: times, not ages
    assert read_record(path).moments == [first, later]


def test_a_moments_changelog_lines_are_its_own(tmp_path: Path) -> None:
    """The same line on two moments in a row is written twice: changes are never "as before"."""
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path)
    first = demo_moment(1)
    again = dataclasses.replace(first, snapshot=dataclasses.replace(first.snapshot, taken_at=first.taken_at + 2))
    quiet = dataclasses.replace(again, diagnosis=dataclasses.replace(first.diagnosis, changes=()),
                                snapshot=dataclasses.replace(first.snapshot, taken_at=first.taken_at + 4))
    for moment in (first, again, quiet):
        recorder.write_moment(moment)
    recorder.close()
    recording = read_record(path)
    assert recording.moments == [first, again, quiet]
    assert [line for _, line in recording.changes] == list(first.diagnosis.changes) * 2


def test_figures_keep_their_type_through_the_record(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path)
    recorder.write_moment(demo_moment(2))
    recorder.close()
    figures = read_record(path).moments[0].diagnosis.observations[0].figures
    assert figures == {"idle_s": 124} and type(figures["idle_s"]) is int  # not 124.0 in a replayed report


def test_a_schema_1_record_reads_back_as_moments() -> None:
    """tests/unit/data/record-v1-demo.jsonl was written by the recorder before the diagnosis left the
    snapshot (record_demo of record_shapes, 6 ticks): its observations, hypotheses and stacks were
    fields of each snapshot and its changelog lines "changes" records. They read back as Moments."""
    recording = read_record(Path(__file__).parent / "data" / "record-v1-demo.jsonl")
    assert recording.skipped == []
    assert recording.header["schema_version"] == 1
    assert [m.snapshot for m in recording.moments] == [demo_snapshot(t) for t in range(6)]
    for tick, moment in enumerate(recording.moments):
        written = demo_moment(tick)
        assert moment.diagnosis.observations == written.diagnosis.observations
        assert [(h.id, h.status, h.score, h.for_, h.against) for h in moment.diagnosis.hypotheses] == \
            [(h.id, h.status, h.score, h.for_, h.against) for h in written.diagnosis.hypotheses]
        assert moment.diagnosis.changes == written.diagnosis.changes  # from the "changes" records
        assert moment.stacks == (odd_capture(moment.taken_at - 1.0 - 2.0 * (tick - 3)) if tick >= 3 else None)
    assert [line for _, line in recording.changes] == [line for t in range(6) for line in demo_change(t)]


def test_repeated_observation_ids_are_written_as_deltas(tmp_path: Path) -> None:
    """Four OOM kills in the kernel log are four "oom-kill" observations: the moments after the first
    are still deltas (they were each written whole: 1.4 MB a refresh at 1,000 processes), and the
    n-th observation of an id that changed reads back as that one."""
    from triage_tui.model.diagnosis import Observation

    path = tmp_path / "r.jsonl"
    recorder = Recorder(path)
    moments = []
    for tick in range(5):
        base = demo_moment(tick)
        kills = tuple(Observation("oom-kill", f"PID {9000 + k} killed by the OOM killer", "kernel", 1000.0 + k,
                                  {"pid": 9000 + k}, (9000 + k,)) for k in range(3 + (tick >= 3)))
        if tick >= 2:  # the second kill's text changes: only it is written
            kills = (kills[0], dataclasses.replace(kills[1], text="PID 9001 killed (again)"), *kills[2:])
        moment = dataclasses.replace(base, diagnosis=dataclasses.replace(
            base.diagnosis, observations=base.diagnosis.observations + kills))
        recorder.write_moment(moment)
        moments.append(moment)
    recorder.close()

    records = [r for r in record_lines(path) if r["kind"] == "snapshot"]
    assert ["full" in r for r in records] == [True, False, False, False, False]
    seq = records[2]["diagnosis"]["seq"]["observations"]
    kills_written = [e for e in seq if isinstance(e, dict) and str(e.get("key")).startswith("oom-kill")]
    assert kills_written == [{"key": "oom-kill#1", "set": {"text": "PID 9001 killed (again)"}}]
    assert read_record(path).moments == moments


def test_waits_are_written_item_by_item(tmp_path: Path) -> None:
    """1,000 sleepers that each run every refresh: the waits tuple is new every refresh, but one wait that
    changed costs one entry (the whole list was written every refresh: ~400 KB), and the moments read back."""
    from triage_tui.model.waits import Wait

    path = tmp_path / "r.jsonl"
    recorder = Recorder(path)
    base = many_processes(50, 0)
    sleeps = tuple(Wait(pid=p.pid, tid=p.pid, kind="sleep", object="clock_nanosleep", syscall="clock_nanosleep",
                        state="S", detail="sleeps") for p in base.processes)
    first = dataclasses.replace(base, waits=sleeps)
    piped = dataclasses.replace(sleeps[3], kind="pipe", object="pipe:[77]", syscall="read", fd=4, peer_pids=(1,))
    extra = Wait(pid=sleeps[5].pid, tid=sleeps[5].pid + 1, kind="futex", object="in-process locks", state="S")
    second = dataclasses.replace(first, taken_at=first.taken_at + 1.0,
                                 waits=(*sleeps[:3], piped, sleeps[4], sleeps[5], extra, *sleeps[6:]))
    third = dataclasses.replace(second, taken_at=second.taken_at + 1.0, waits=tuple(
        dataclasses.replace(w) for w in second.waits if w.pid != sleeps[0].pid))  # equal, new objects; one gone
    for snapshot in (first, second, third):
        recorder.write_moment(Moment(snapshot))
    recorder.close()

    records = [r for r in record_lines(path) if r["kind"] == "snapshot"]
    assert "waits" not in records[1]["set"] and "waits" not in records[2]["set"]
    entries = records[1]["seq"]["waits"]
    changed = [e for e in entries if isinstance(e, dict)]
    assert changed == [{"key": f"{piped.pid}:{piped.tid}", "set": {"kind": "pipe", "object": "pipe:[77]",
                                                                     "peer_pids": [1], "syscall": "read", "fd": 4}},
                       {"new": changed[1]["new"]}]
    assert changed[1]["new"]["tid"] == extra.tid
    assert not any(isinstance(e, dict) for e in records[2]["seq"]["waits"])  # only the one gone: runs of keys
    assert [m.snapshot for m in read_record(path).moments] == [first, second, third]

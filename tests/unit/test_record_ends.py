"""`report --from` on a big record: only the first moment and those from the last keyframe on are
rebuilt, every moment's changelog is kept, and the report is the one a full read gives. The recorder
writes a keyframe at least every KEYFRAME_BYTES of deltas, so that work is bounded whatever the size."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from record_shapes import demo_moment, many_processes, record_lines

import triage_tui.record.recorder as recorder_module
from triage_tui.model.moment import Moment
from triage_tui.record.export import report_from_record
from triage_tui.record.reader import read_record
from triage_tui.record.recorder import Recorder
from triage_tui.render.markdown import render_report_markdown


def _write(path: Path, ticks: int) -> None:
    recorder = Recorder(path)
    base = many_processes(80, 0)
    for k in range(ticks):
        rows = tuple(dataclasses.replace(p, cpu_time_s=p.cpu_time_s + 0.01 * k) for p in base.processes)
        demo = demo_moment(k % 6)  # its diagnosis, with a changelog line now and then
        snapshot = dataclasses.replace(base, taken_at=base.taken_at + 2.0 * k, processes=rows)
        recorder.write_moment(Moment(snapshot, dataclasses.replace(demo.diagnosis, changes=(f"change {k}",))))
    recorder.close()


def test_the_ends_give_the_report_a_full_read_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder_module, "KEYFRAME_BYTES", 24 * 1024)  # several keyframes in a small record
    path = tmp_path / "big.jsonl"
    _write(path, 120)
    keyframes = [i for i, r in enumerate(record_lines(path)) if r.get("kind") == "snapshot" and "full" in r]
    assert len(keyframes) >= 3  # by size, not only every keyframe_every refreshes
    full, ends = read_record(path), read_record(path, ends=True)
    assert ends.elided > 0 and len(ends.moments) + ends.elided == len(full.moments) == 120
    assert ends.moments[0] == full.moments[0] and ends.moments[-1] == full.moments[-1]
    assert ends.changelog == full.changelog == [f"change {k}" for k in range(120)]
    assert render_report_markdown(ends.moments, ends.changelog) == render_report_markdown(full.moments, full.changelog)
    assert ends.skipped == full.skipped == []
    assert "change 57" in report_from_record(path)


def test_a_damaged_middle_line_is_counted_and_the_end_still_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder_module, "KEYFRAME_BYTES", 24 * 1024)
    path = tmp_path / "big.jsonl"
    _write(path, 60)
    lines = path.read_bytes().split(b"\n")
    lines[20] = lines[20][: len(lines[20]) // 2]  # a delta between keyframes, cut
    path.write_bytes(b"\n".join(lines))
    full, ends = read_record(path), read_record(path, ends=True)
    assert any("not JSON" in s for s in ends.skipped)
    assert ends.moments[-1] == full.moments[-1] and ends.moments[-1].snapshot.taken_at == full.moments[-1].snapshot.taken_at

"""The report for the ticket, from a recording (`report --from`) and from the app's `e` key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from record_shapes import (
    ODD_RANK_PID,
    SYSTEM_AVAILABLE,
    SYSTEM_TOTAL,
    WORKER_PSS,
    WORKER_RSS,
    WORKERS,
    record_demo,
)

from triage_tui.record.export import export_markdown, report_from_record
from triage_tui.record.reader import read_record
from triage_tui.record.recorder import Recorder, RecordError
from triage_tui.record.replay import ReplayView
from triage_tui.render.figures import size


@pytest.fixture()
def demo_record(tmp_path: Path) -> Path:
    path = tmp_path / "demo.jsonl"
    recorder = Recorder(path, host="gpu-node-7")
    record_demo(recorder, ticks=6, capture_at=3)
    recorder.close()
    return path


def _check_demo_report(text: str) -> None:
    for section in ("## Memory", "## Hypotheses", "## Timeline", "## Stacks", "## Observations"):
        assert section in text, section
    assert "gpu-node-7" in text
    # the wait for the missing rank: the majority waits in the collective, the odd rank elsewhere
    assert "collective-mismatch" in text and "likely" in text
    assert f"rank 3 (PID {ODD_RANK_PID}) waits in recv" in text
    odd_heading = next(line for line in text.splitlines() if "odd one out" in line)
    assert str(ODD_RANK_PID) in odd_heading and "init_drafter" in odd_heading
    majority = next(line for line in text.splitlines() if line.startswith("### 7 threads"))
    assert "collective" in majority and all(str(p) in majority for p in WORKERS if p != ODD_RANK_PID)
    # the ruled-out OOM with the RSS-illusion figures
    assert "**Ruled out:**" in text and "- Out of memory (`oom`)" in text
    assert "RSS overstates memory here" in text
    assert size(8 * WORKER_RSS) in text and size(8 * WORKER_PSS) in text
    assert size(SYSTEM_TOTAL) in text and size(SYSTEM_AVAILABLE) in text
    # the timeline of hypothesis changes and the last log lines
    assert "possible → likely" in text
    assert "heartbeat 5" in text


def test_report_from_a_record_as_markdown(demo_record: Path) -> None:
    text = report_from_record(demo_record, "md")
    _check_demo_report(text)
    assert "## Record" not in text  # nothing was skipped: nothing to warn about


def test_report_from_a_cut_record_says_what_was_skipped(demo_record: Path) -> None:
    data = demo_record.read_bytes()
    demo_record.write_bytes(data[:-40])
    text = report_from_record(demo_record, "md")
    assert "## Record" in text and "cut mid-write" in text


def test_report_from_a_record_as_json_is_the_live_report_schema(demo_record: Path) -> None:
    warnings: list[str] = []
    data = json.loads(report_from_record(demo_record, "json", warn=warnings.append))
    last = read_record(demo_record).snapshots[-1]
    assert data["host"] == "gpu-node-7" and data["taken_at"] == last.taken_at
    assert [h["status"] for h in data["hypotheses"]] == ["likely", "ruled out"]  # the engine's order, as live
    assert [row["observation"] for row in data["hypotheses"][0]["evidence"]] == ["stacks-different-collectives", "all-idle"]
    assert data["stacks"]["groups"][1]["odd_one_out"] is True
    assert warnings == []


def test_report_json_from_a_cut_record_warns(demo_record: Path) -> None:
    demo_record.write_bytes(demo_record.read_bytes()[:-40])
    warnings: list[str] = []
    json.loads(report_from_record(demo_record, "json", warn=warnings.append))
    assert len(warnings) == 1 and "cut mid-write" in warnings[0]


def test_report_from_garbage_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text("not a record\n")
    with pytest.raises(RecordError, match="not a triage record"):
        report_from_record(path, "md")


def test_export_writes_the_report_of_the_incident_so_far(demo_record: Path, tmp_path: Path) -> None:
    incident = ReplayView(read_record(demo_record))
    for _ in range(6):
        incident.tick()
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    path = export_markdown(incident.timeline, incident.changelog, incident.host_name, out_dir)
    assert Path(path).parent == out_dir and path.endswith(".md")
    _check_demo_report(Path(path).read_text())
    second = export_markdown(incident.timeline, incident.changelog, incident.host_name, out_dir)  # a second export never overwrites the first
    assert second != path and Path(second).exists()


def test_export_early_in_the_incident_has_no_stacks_yet(demo_record: Path, tmp_path: Path) -> None:
    incident = ReplayView(read_record(demo_record))
    incident.tick()
    text = Path(export_markdown(incident.timeline, incident.changelog, incident.host_name, tmp_path)).read_text()
    assert "## Stacks" not in text and "(`collective-mismatch`): possible" in text


def test_export_into_a_directory_that_cannot_be_written_raises_oserror(demo_record: Path, tmp_path: Path) -> None:
    incident = ReplayView(read_record(demo_record))
    incident.tick()
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(OSError):
        export_markdown(incident.timeline, incident.changelog, incident.host_name, blocker)


def test_replay_opens_the_app_on_the_recording(demo_record: Path, monkeypatch) -> None:
    import argparse

    from triage_tui.commands import app as app_face
    from triage_tui.commands import replay as replay_face

    opened: list = []

    def fake_run_app(incident, **options):  # stands for the app: what would it be shown?
        opened.append((list(incident.timeline), options))
        return 0

    monkeypatch.setattr(app_face, "run_app", fake_run_app, raising=False)
    assert replay_face.run(argparse.Namespace(file=str(demo_record), theme="light")) == 0
    shown, options = opened[0]
    assert shown == read_record(demo_record).moments  # every moment, to step through
    assert options["theme"] == "light" and options["live"] is False and options["interval"] == 2.0

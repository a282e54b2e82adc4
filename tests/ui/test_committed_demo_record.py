"""The recording of a real `triage demo` run committed in screenshots/ (the README's screenshots are rendered
from it) replays on a clean machine: the same panes and hypotheses come back, and its Markdown report names
the wait for the missing rank, the ruled-out OOM with the RSS-illusion figures and the odd stack."""

from __future__ import annotations

from pathlib import Path

from conftest import settle

from triage_tui.record.export import report_from_record
from triage_tui.record.reader import read_record
from triage_tui.record.replay import ReplayView
from triage_tui.ui.app import TriageApp
from triage_tui.ui.panes.hypotheses import HypothesisTree
from triage_tui.ui.panes.processes import ProcessesPane

RECORD = Path(__file__).resolve().parents[2] / "screenshots" / "demo-incident.jsonl"


def test_the_committed_demo_record_reads_whole() -> None:
    recording = read_record(RECORD)
    assert recording.skipped == []
    last = recording.moments[-1]
    assert len(last.snapshot.processes) == 9  # the launcher and its 8 renamed workers
    # a record of schema 1: the diagnosis came inside each snapshot, and reads back into the Moment
    assert recording.header["schema_version"] == 1
    assert last.diagnosis.hypotheses[0].id == "wait-for-missing-rank"
    assert last.stacks is not None
    assert recording.stacks, "the run used --auto-stacks: one capture is in the record"


async def test_the_app_replays_the_committed_demo_record(tmp_path) -> None:
    recording = read_record(RECORD)
    incident = ReplayView(recording, preload=len(recording.moments))
    app = TriageApp(incident, interval=3600, live=False, export_dir=str(tmp_path),
                    clock=lambda: incident.latest.taken_at if incident.latest else 0.0)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        rows = app.query_one(ProcessesPane).rows
        assert {r.process.name for r in rows} >= {f"scheduler_TP{i}" for i in range(8)}
        top = str(app.query_one(HypothesisTree).root.children[0].label)
        assert "likely" in top and "missing rank" in top
        stacks = str(app.query_one("#stack-body").render())
        assert "ODD ONE OUT" in stacks and "departs at: capture_cuda_graphs" in stacks


def test_the_markdown_report_of_the_committed_demo_record() -> None:
    md = report_from_record(RECORD, "md")
    assert "A wait for the missing rank" in md
    oom = next(line for line in md.splitlines() if "not an OOM" in line)
    assert "RSS summed over 9 processes" in oom and "PSS sum" in oom  # the RSS-illusion figures
    assert "odd one out" in md and "departs at" in md

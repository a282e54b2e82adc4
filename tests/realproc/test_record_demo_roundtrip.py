"""Record the real demo incident through Incident, replay it: the same snapshots and hypotheses at the same moments."""

from __future__ import annotations

from pathlib import Path

from triage_tui.collect.logs import LogsCollector
from triage_tui.demo.incident import DemoInfo
from triage_tui.host.base import CollectOptions, StackOptions
from triage_tui.host.local import LocalHost
from triage_tui.incident import Incident
from triage_tui.record.export import report_from_record
from triage_tui.record.reader import read_record
from triage_tui.record.recorder import Recorder
from triage_tui.record.replay import ReplayView

WORKERS = 3
TICKS = 4



def test_a_recorded_demo_replays_the_same_moments(demo: DemoInfo, tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl"
    host = LocalHost(logs=LogsCollector())
    recorder = Recorder(path, host=host.name, target=(str(demo.launcher_pid),))
    incident = Incident(host, host.resolve([str(demo.launcher_pid)]),
                        CollectOptions(logs=(demo.log_path,), interval_s=0.5), recorder=recorder)
    try:
        for tick in range(TICKS):
            incident.tick()
            if tick == 0:
                host.wait_for_budgeted_reads()  # PSS figures land in the next snapshot
            if tick == 1:
                incident.capture_stacks(options=StackOptions(timeout_s=20.0))
        live = list(incident.timeline)
        live_changelog = list(incident.changelog)
        capture = incident.latest_stacks
    finally:
        incident.close()

    recording = read_record(path)
    assert recording.skipped == []
    assert recording.moments == live

    replay = ReplayView(recording)
    for moment in live:
        shown = replay.tick()
        assert shown == moment
        assert shown.diagnosis == moment.diagnosis  # served as recorded: the engine does not run again
    assert list(replay.changelog) == live_changelog
    assert capture is not None and replay.latest_stacks == capture
    assert {p.pid for p in live[-1].snapshot.processes} >= {demo.launcher_pid, *demo.worker_pids}

    text = report_from_record(path, "md")
    assert "## Hypotheses" in text and str(demo.launcher_pid) in text

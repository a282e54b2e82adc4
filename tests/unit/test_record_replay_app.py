"""`triage replay` in the real app: stepping back shows each recorded moment with its hypotheses."""

from __future__ import annotations

import asyncio
from pathlib import Path

from record_shapes import record_demo

from triage_tui.record.reader import read_record
from triage_tui.record.recorder import Recorder
from triage_tui.record.replay import ReplayView
from triage_tui.ui.app import TriageApp
from triage_tui.ui.panes.hypotheses import HypothesisTree


def _labels(app: TriageApp) -> list[str]:
    return [str(node.label) for node in app.query_one(HypothesisTree).root.children]


def test_replay_steps_back_to_the_hypotheses_as_they_stood(tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl"
    recorder = Recorder(path, host="gpu-node-7")
    moments, _, _ = record_demo(recorder, ticks=6, capture_at=3)
    recorder.close()
    incident = ReplayView(read_record(path), preload=6)
    app = TriageApp(incident, interval=3600, live=False,
                    clock=lambda: incident.latest.taken_at if incident.latest else 0.0)

    async def drive() -> None:
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            assert app.shown_moment() == moments[-1]
            assert any("likely" in label and "rank 3" in label for label in _labels(app))
            await pilot.press("left_square_bracket", "left_square_bracket", "left_square_bracket")
            await pilot.pause()
            assert app.shown_moment() == moments[2]  # before the hang hypothesis turned likely
            assert app.query_one("#banner").display
            labels = _labels(app)
            assert any("possible" in label and "rank 3" in label for label in labels)
            assert not any("likely" in label and "rank 3" in label for label in labels)
            await pilot.press("end")
            await pilot.pause()
            assert app.shown_moment() == moments[-1] and not app.query_one("#banner").display
            assert list(incident.timeline) == moments == list(app.timeline)  # nothing ticked: a replay does not collect

    asyncio.run(drive())

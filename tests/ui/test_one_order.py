"""One order everywhere: the engine ranks the hypotheses and no face re-sorts them, so the rank numbers in
the app, the Markdown report, the JSON report, the `e` export and a replay of the record all agree."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import fixture_incident, make_app, settle

from triage_tui.demo.fixture import build_snapshots
from triage_tui.record.reader import read_record
from triage_tui.record.recorder import Recorder
from triage_tui.record.replay import ReplayView
from triage_tui.render.markdown import render_report_markdown
from triage_tui.render.report_json import render_report_json
from triage_tui.ui.app import TriageApp
from triage_tui.ui.panes.hypotheses import FOLDED, HypothesisTree, folds

RANKED = re.compile(r"^### (\d+)\. .*\(`([a-z-]+)`\)", re.M)


def _app_ranks(app) -> list[str]:
    out = []
    for node in app.query_one(HypothesisTree).root.children:
        if node.data in (None, "changelog", "observations", FOLDED):
            continue
        rank = int(str(node.label).split(".", 1)[0])
        assert rank == len(out) + 1
        out.append(node.data)
    return out


def _markdown_ranks(text: str) -> list[str]:
    pairs = RANKED.findall(text)
    assert [int(n) for n, _ in pairs] == list(range(1, len(pairs) + 1))
    return [hid for _, hid in pairs]


async def test_rank_numbers_agree_in_the_app_reports_export_and_replay(tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    incident = fixture_incident(build_snapshots(40), preload=0)
    incident.recorder = Recorder(record, host=incident.host_name)
    for _ in range(30):
        incident.tick()
    incident.capture_stacks()  # the odd rank: stacks reorder the causes
    incident.tick()
    incident.recorder.close()
    engine_order = [h.id for h in incident.latest.diagnosis.hypotheses]
    kinds = [h.kind for h in incident.latest.diagnosis.hypotheses]
    assert kinds == sorted(kinds, key=lambda k: k != "cause")  # causes before findings
    # a finding with a higher score than the last causes still comes after every cause
    assert engine_order[-1] == "rss-illusion" and incident.latest.diagnosis.hypotheses[-1].score > 0

    markdown = _markdown_ranks(render_report_markdown(incident.timeline, incident.changelog))
    as_json = [h["id"] for h in json.loads(render_report_json(incident.latest))["hypotheses"]]

    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        in_app = _app_ranks(app)
        await pilot.press("e")
        await settle(pilot)
        assert app.last_export is not None
        exported = _markdown_ranks(Path(app.last_export).read_text(encoding="utf-8"))

    replay = ReplayView(read_record(record), preload=31)
    replay_app = TriageApp(replay, interval=3600, live=False, export_dir=str(tmp_path), clock=incident.host.clock)
    async with replay_app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        replayed = _app_ranks(replay_app)

    # the app and the Markdown number the hypotheses with something for them and fold the rest (ruled out,
    # unlikely with nothing for them) into one list: the numbered ones keep the engine's order and ranks
    numbered = [h.id for h in incident.latest.diagnosis.hypotheses if not folds(h)]
    assert len(numbered) >= 3
    assert in_app == markdown == exported == replayed == numbered
    assert as_json == engine_order

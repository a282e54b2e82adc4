"""The app's partial repaints render only the changed lines, and send the terminal what textual's would.

`ui/dirty_lines.py` asks each widget only for the lines a changed region crosses. Every partial update of
a run of refreshes, cursor moves and a pane switch is rendered both ways from the same changed regions: the
bytes for the terminal must be the same, and a change at the top of the screen alone must not render a
line of the panes below it.
"""

from __future__ import annotations

from conftest import fixture_incident, make_app, settle
from textual._compositor import Compositor
from textual.widget import Widget

from triage_tui.demo.fixture import build_snapshots
from triage_tui.ui.dirty_lines import DirtyLinesCompositor
from triage_tui.ui.messages import MomentReady
from triage_tui.ui.panes.process_table import ProcessTable


def _text(update, console) -> str:
    return "" if update is None else update.render_segments(console)


async def test_partial_updates_send_the_same_bytes_as_textuals_own(tmp_path, monkeypatch):
    compared: list[tuple[str, str]] = []
    ours = DirtyLinesCompositor.render_partial_update

    def both_ways(self):
        regions = set(self._dirty_regions)
        update = ours(self)
        self._dirty_regions.update(regions)
        theirs = Compositor.render_partial_update(self)  # textual's: every widget in the box, every line
        compared.append((_text(update, app.console), _text(theirs, app.console)))
        return update

    monkeypatch.setattr(DirtyLinesCompositor, "render_partial_update", both_ways)
    incident = fixture_incident(build_snapshots(40), preload=8)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen._compositor, DirtyLinesCompositor)
        for _ in range(12):  # the idle-for cells, the header's times, the hypotheses' figures move
            app.post_message(MomentReady(incident.tick()))
            await pilot.pause()
            await pilot.press("down")
        await pilot.press("6", "down", "enter", "3", "1")
        await settle(pilot)
    changed = [pair for pair in compared if pair[1]]
    assert len(changed) >= 10
    assert all(mine == theirs for mine, theirs in changed)


async def test_a_change_at_the_top_alone_renders_no_line_of_the_panes(tmp_path, monkeypatch):
    incident = fixture_incident(build_snapshots(20), preload=8)
    app = make_app(incident, str(tmp_path), live=False)
    rendered: list[str] = []
    render_lines = Widget.render_lines

    def counted(self, crop):
        rendered.append(type(self).__name__)
        return render_lines(self, crop)

    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        await pilot.pause()
        monkeypatch.setattr(Widget, "render_lines", counted)
        header = app.query_one("#header")
        header.refresh()  # as when only its clock moved
        await pilot.pause()
        await pilot.pause()
        assert "TextLines" in rendered  # the header itself was painted
        assert "ProcessTable" not in rendered and "HypothesisTree" not in rendered and "LogView" not in rendered
        rendered.clear()
        app.query_one(ProcessTable).refresh()  # and a change in the table paints the table
        await pilot.pause()
        await pilot.pause()
        assert "ProcessTable" in rendered and "HypothesisTree" not in rendered

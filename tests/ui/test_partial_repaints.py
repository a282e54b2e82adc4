"""What the terminal shows after partial repaints is what a full render of the screen shows.

Every update the app sends is applied to an in-memory terminal (tests/ui/mirror_terminal.py) as a
terminal applies it; after refreshes, keys and figures that move, that terminal must equal a full
render made then from scratch, cell for cell (characters and styles). A region off by a column or a line left out
leaves an old figure on it, and the test names the line.
"""

from __future__ import annotations

from dataclasses import replace

from conftest import fixture_incident, make_app, settle
from mirror_terminal import mirror
from rich.text import Text
from textual.widget import Widget

from triage_tui.demo.fixture import build_snapshots
from triage_tui.ui import panes
from triage_tui.ui.messages import MomentReady
from triage_tui.ui.panes import RowsStatic, _changed_rows, _rows
from triage_tui.ui.text_lines import TextLines

GiB = 1024**3


def _full(app) -> list:
    """The screen rendered from scratch now: every widget's cached lines dropped first (so a line whose
    cache a repaint forgot to mark is made again from what the widget holds), then a full render."""
    for widget in app.screen.walk_children(with_self=True):
        widget.refresh()
    return app.screen._compositor.render_strips()


def _with_memory(moment, **target):
    snap = moment.snapshot
    memory = replace(snap.memory, target=replace(snap.memory.target, **target))
    return replace(moment, snapshot=replace(snap, memory=memory))


async def test_the_terminal_equals_a_full_render_after_a_watch_of_partial_repaints(tmp_path, monkeypatch):
    incident = fixture_incident(build_snapshots(40), preload=8)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        term = mirror(app, monkeypatch)
        for i in range(10):  # idle-for cells, the header's times, the hypotheses' figures, memory figures move
            moment = incident.tick()
            if i % 3 == 1:
                moment = _with_memory(moment, pss_sum_bytes=(400 + i) * GiB, uss_sum_bytes=(20 + i) * GiB)
            app.post_message(MomentReady(moment))
            await pilot.pause()
            await pilot.press("down")
            await pilot.pause()
            assert term.differences(_full(app)) == [], f"after refresh {i}"
        await pilot.press("3", "down", "6", "1")
        await settle(pilot)
        assert term.differences(_full(app)) == []
    assert term.updates >= 10


async def test_a_moved_memory_figure_repaints_its_line_alone_and_is_shown(tmp_path, monkeypatch):
    incident = fixture_incident(build_snapshots(20), preload=8)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        moment = app.timeline[-1]
        app.post_message(MomentReady(_with_memory(moment, uss_sum_bytes=30 * GiB)))
        await settle(pilot)
        term = mirror(app, monkeypatch)
        body = app.query_one("#mem-body")
        lines: list[int] = []
        render_lines = Widget.render_lines

        def counted(self, crop):
            if self is body:
                lines.extend(crop.line_range)
            return render_lines(self, crop)

        monkeypatch.setattr(Widget, "render_lines", counted)
        app.post_message(MomentReady(_with_memory(moment, uss_sum_bytes=31 * GiB)))
        await settle(pilot)
        assert lines == [8]  # the USS line (painted once), not the pane's sixteen
        assert "31G" in body.content.plain and "31G" in str(body.render())  # what it holds is the new text
        monkeypatch.setattr(Widget, "render_lines", render_lines)
        assert "USS sum           31G" in "\n".join(s.text for s in _full(app))
        assert term.differences(_full(app)) == []


async def test_a_figure_under_a_wrapped_verdict_repaints_its_line_alone_as_the_line_by_line_rule_says(
        tmp_path, monkeypatch):
    """The Memory pane's verdict is a long line that wraps; a figure under it that moves in place is found
    from the texts' characters (their spans the same), not by splitting both Texts: the rows found are
    those the line-by-line rule finds, one row, and the terminal shows it."""
    incident = fixture_incident(build_snapshots(20), preload=8)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        moment = app.timeline[-1]
        n = moment.snapshot.memory.target.processes
        verdict = {"rss_sum_bytes": 900 * GiB, "pss_sum_bytes": 60 * GiB, "pss_covered": n}
        app.post_message(MomentReady(_with_memory(moment, uss_sum_bytes=30 * GiB, **verdict)))
        await settle(pilot)
        body = app.query_one("#mem-body", RowsStatic)
        shown = body.content
        assert isinstance(shown, Text) and "the processes share pages" in shown.plain
        width = body.content_size.width
        assert len(shown.plain.splitlines()[0]) > width  # the verdict wraps
        term = mirror(app, monkeypatch)
        lines: list[int] = []
        render_lines = Widget.render_lines

        def counted(self, crop):
            if self is body:
                lines.extend(crop.line_range)
            return render_lines(self, crop)

        monkeypatch.setattr(Widget, "render_lines", counted)
        app.post_message(MomentReady(_with_memory(moment, uss_sum_bytes=31 * GiB, **verdict)))
        await settle(pilot)
        monkeypatch.setattr(Widget, "render_lines", render_lines)
        new = body.content
        assert isinstance(new, Text) and "31G" in new.plain
        quick = _changed_rows(body, shown, new, width)
        monkeypatch.setattr(panes, "_changed_plain_rows", lambda *args: None)  # the Texts split, line by line
        assert quick == _changed_rows(body, shown, new, width) == [(lines[0], 1)]
        verdict_rows = _rows(body, shown.split("\n")[0], width)
        assert verdict_rows > 1 and lines == [verdict_rows + 3]  # the USS line, under the verdict's rows
        assert term.differences(_full(app)) == []


async def test_a_header_figure_that_moves_in_place_reaches_the_terminal(tmp_path, monkeypatch):
    """The header has a column of padding: the cells sent must be the figure's own, not one to the right
    (the last cell of a styled run is the case that shows it: the run after it starts a new segment)."""
    incident = fixture_incident(build_snapshots(20), preload=8)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        header = app.query_one("#header", TextLines)
        header.show(Text.assemble("triage · last good 23:14:0", ("5", "bold"), (" · ok", "italic")))
        await settle(pilot)
        term = mirror(app, monkeypatch)
        header.show(Text.assemble("triage · last good 23:14:0", ("6", "bold"), (" · ok", "italic")))
        await settle(pilot)
        assert term.differences(_full(app)) == []


async def test_tree_lines_that_still_fit_are_shown_without_a_layout_and_more_than_fit_get_a_scrollbar(
        tmp_path, monkeypatch):
    from triage_tui.ui.panes.hypotheses import HypothesisTree

    incident = fixture_incident(build_snapshots(20), preload=10)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        tree = app.query_one(HypothesisTree)
        term = mirror(app, monkeypatch)
        reflows = app.screen._compositor.reflow
        counted: list[int] = []
        monkeypatch.setattr(app.screen._compositor, "reflow", lambda *a, **k: counted.append(1) or reflows(*a, **k))
        height = tree.scrollable_content_region.height
        before = tree.virtual_size.height
        node = next(n for n in tree.root.children if n.children and before + len(n.children) <= height)
        node.expand()
        await settle(pilot)
        assert tree.virtual_size.height == before + len(node.children)
        assert counted == [] and not tree.show_vertical_scrollbar  # repainted, nothing laid out
        assert term.differences(_full(app)) == []  # the new lines are on screen
        for other in tree.root.children:  # now more lines than the tree's height: a layout and a scrollbar
            other.expand()
        await settle(pilot)
        assert tree.virtual_size.height > height
        assert counted and tree.show_vertical_scrollbar
        assert term.differences(_full(app)) == []


async def test_a_new_theme_is_painted_in_the_table_and_the_tree(tmp_path, monkeypatch):
    """The process table and the tree read their rich style once per paint (ui/style_per_paint.py), and the
    table keeps the rows it made: a theme chosen between two paints is what the next paint shows."""
    from textual.dom import DOMNode

    from triage_tui.ui.panes.hypotheses import HypothesisTree
    from triage_tui.ui.panes.process_table import ProcessTable

    def colours(term, widget) -> set[str]:
        region = widget.content_region
        return {style.color.triplet.hex for row in term.cells[region.y:region.bottom]
                for char, style in row[region.x:region.right] if char.strip() and style.color and style.color.triplet}

    incident = fixture_incident(build_snapshots(20), preload=8)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        term = mirror(app, monkeypatch)
        widgets = (app.query_one(ProcessTable), app.query_one(HypothesisTree))
        for widget in widgets:  # outside a paint the style is textual's own
            assert widget.rich_style == DOMNode.rich_style.fget(widget)  # type: ignore[attr-defined]
        before = [colours(term, w) for w in widgets]
        app.theme = "textual-light"
        await settle(pilot)
        await pilot.pause()
        after = [colours(term, w) for w in widgets]
        assert all(a != b for a, b in zip(after, before, strict=True))
        assert term.differences(_full(app)) == []
        for widget in widgets:  # the style held for a paint is let go after it
            assert widget.rich_style == DOMNode.rich_style.fget(widget)  # type: ignore[attr-defined]

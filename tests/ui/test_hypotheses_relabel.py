"""A figure in a hypothesis that ticks ("idle for 9 s", then "for 10 s") is shown at once, by relabelling
the lines that changed: the tree is not rebuilt (a rebuild lays the whole screen out), even when the new
text is wider than the old, as long as it fits the width the texts are wrapped at."""

from __future__ import annotations

import dataclasses

from conftest import fixture_incident, make_app, settle

from triage_tui.demo.fixture import build_snapshots
from triage_tui.ui.panes import View
from triage_tui.ui.panes.hypotheses import HypothesesPane, HypothesisTree


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def _with_idle(moment, seconds: int):
    diagnosis = moment.diagnosis
    first = diagnosis.hypotheses[0]
    row = dataclasses.replace(first.evidence[0], text=f"every rank idle for {seconds} s")
    first = dataclasses.replace(first, evidence=(row, *first.evidence[1:]))
    return dataclasses.replace(moment, diagnosis=dataclasses.replace(diagnosis, hypotheses=(first, *diagnosis.hypotheses[1:])))


async def test_a_wider_figure_is_relabelled_in_place_and_shown(tmp_path):
    incident = fixture_incident(build_snapshots(20), preload=10)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        pane = app.query_one(HypothesesPane)
        tree = app.query_one(HypothesisTree)
        moment = app.shown_moment()
        assert moment is not None and moment.diagnosis.hypotheses and moment.diagnosis.hypotheses[0].evidence
        pane.show(View(_with_idle(moment, 9), (moment,)))
        tree.root.children[0].expand()
        await pilot.pause()
        assert "every rank idle for 9 s" in screen_text(app)
        nodes = [id(n) for n in tree.root.children]
        leaves = [id(leaf) for leaf in tree.root.children[0].children]
        pane.show(View(_with_idle(moment, 10), (moment,)))
        await pilot.pause()
        await pilot.pause()
        shot = screen_text(app)
        assert "every rank idle for 10 s" in shot and "every rank idle for 9 s" not in shot
        assert [id(n) for n in tree.root.children] == nodes  # the same nodes: relabelled, not rebuilt
        assert [id(leaf) for leaf in tree.root.children[0].children] == leaves


async def test_a_new_row_under_a_collapsed_hypothesis_rebuilds_the_tree_without_a_layout_and_shows_when_opened(
        tmp_path, monkeypatch):
    from textual.widget import Widget

    incident = fixture_incident(build_snapshots(20), preload=10)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        pane = app.query_one(HypothesesPane)
        tree = app.query_one(HypothesisTree)
        moment = app.shown_moment()
        assert moment is not None and not tree.root.children[0].is_expanded
        first = moment.diagnosis.hypotheses[0]
        row = dataclasses.replace(first.evidence[0], text="a row that was not there before")
        grown = dataclasses.replace(first, evidence=(*first.evidence, row))
        diagnosis = dataclasses.replace(moment.diagnosis, hypotheses=(grown, *moment.diagnosis.hypotheses[1:]))
        laid_out: list[bool] = []
        real_refresh = Widget.refresh

        def refresh(self, *regions, **kw):
            if self is tree:
                laid_out.append(bool(kw.get("layout")))
            return real_refresh(self, *regions, **kw)

        monkeypatch.setattr(Widget, "refresh", refresh)
        reflows = app.screen._compositor.reflow
        counted: list[int] = []
        monkeypatch.setattr(app.screen._compositor, "reflow", lambda *a, **k: counted.append(1) or reflows(*a, **k))
        pane.show(View(dataclasses.replace(moment, diagnosis=diagnosis), (moment,), app.changelog))
        await pilot.pause()
        await pilot.pause()
        assert laid_out and not any(laid_out) and counted == []  # rebuilt, repainted, nothing laid out
        assert "a row that was not there before" not in screen_text(app)
        tree.root.children[0].expand()  # more lines shown: now the layout (its virtual size) and the row
        await pilot.pause()
        await pilot.pause()
        assert "a row that was not there before" in screen_text(app)


async def test_a_folded_hypothesis_that_changes_is_shown_under_n_more(tmp_path):
    """The "N more" node is kept while the folded hypotheses are the same objects; one that changes is
    shown changed (and the node is the kept one again when nothing moved)."""
    from triage_tui.ui.panes.hypotheses import FOLDED, folds

    incident = fixture_incident(build_snapshots(20), preload=10)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        pane = app.query_one(HypothesesPane)
        tree = app.query_one(HypothesisTree)
        moment = app.shown_moment()
        hypotheses = moment.diagnosis.hypotheses
        index = next(i for i, h in enumerate(hypotheses) if folds(h))
        changed = dataclasses.replace(hypotheses[index], title="a title that was not there before")
        diagnosis = dataclasses.replace(moment.diagnosis, hypotheses=(*hypotheses[:index], changed, *hypotheses[index + 1:]))
        pane.show(View(dataclasses.replace(moment, diagnosis=diagnosis), (moment,), app.changelog))
        await pilot.pause()
        folded = next(n for n in tree.root.children if n.data == FOLDED)
        assert any("a title that was not there before" in str(leaf.label) for leaf in folded.children)
        pane.show(View(moment, (moment,), app.changelog))
        await pilot.pause()
        folded = next(n for n in tree.root.children if n.data == FOLDED)
        assert not any("a title that was not there before" in str(leaf.label) for leaf in folded.children)


async def test_a_figure_under_a_collapsed_hypothesis_is_relabelled_and_shown_when_it_is_opened(tmp_path):
    """A leaf under a collapsed node gets its new text without a refresh of its line (it is on none): the
    node's leaves hold the new text, and opening the node shows it, not the old one."""
    incident = fixture_incident(build_snapshots(20), preload=10)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        pane = app.query_one(HypothesesPane)
        tree = app.query_one(HypothesisTree)
        moment = app.shown_moment()
        assert moment is not None and moment.diagnosis.hypotheses and moment.diagnosis.hypotheses[0].evidence
        pane.show(View(_with_idle(moment, 9), (moment,)))
        await settle(pilot)
        first = tree.root.children[0]
        first.collapse()
        await settle(pilot)
        leaves = [id(leaf) for leaf in first.children]
        pane.show(View(_with_idle(moment, 10), (moment,)))
        await settle(pilot)
        assert [id(leaf) for leaf in first.children] == leaves  # relabelled, not rebuilt
        assert any("every rank idle for 10 s" in str(leaf.label) for leaf in first.children)
        assert "every rank idle for" not in screen_text(app)  # collapsed: not on screen
        first.expand()
        await settle(pilot)
        shot = screen_text(app)
        assert "every rank idle for 10 s" in shot and "every rank idle for 9 s" not in shot

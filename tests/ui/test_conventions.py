"""#17: the verdict line at every size, the layout's first screen, and keys that act on what they name
however fast they are typed, with the conventions htop and nvitop users expect."""

from __future__ import annotations

import dataclasses

from conftest import fixture_incident, make_app, settle
from textual.command import CommandPalette

from triage_tui.demo.fixture import build_snapshots
from triage_tui.incident import Incident
from triage_tui.model.snapshot import GpuReport
from triage_tui.ui.key_hints import KeyHints as Footer
from triage_tui.ui.panes.hypotheses import HypothesesPane
from triage_tui.ui.panes.log import LogPane
from triage_tui.ui.panes.processes import ProcessesPane
from triage_tui.ui.screens import HelpScreen


def text_of(app, selector: str) -> str:
    return str(app.query_one(selector).render())


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def no_gpu_incident() -> Incident:
    snaps = [dataclasses.replace(s, gpus=GpuReport(source="none")) for s in build_snapshots(80)]
    return fixture_incident(snaps, preload=60)


async def test_verdict_line_names_the_top_cause_its_evidence_and_key_at_80x24(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        top = app.shown_moment().diagnosis.hypotheses[0]  # the engine's top cause
        line = text_of(app, "#verdict")
        # the verdict line gives the title up to its parenthesis (the engine's titles explain themselves there)
        assert f"{top.status}: {top.title.split(' (')[0]}" in " ".join(line.split())
        assert "press S" in line and "S on it" not in line
        verdict = app.query_one("#verdict").region
        assert verdict.y <= 4 and verdict.height <= 2  # under the header, at most two lines
        shown = screen_text(app)
        assert top.title.split()[0] in shown


async def test_no_verdict_yet_says_what_is_missing(tmp_path):
    incident = fixture_incident(build_snapshots(3), preload=0)
    app = make_app(incident, str(tmp_path))
    app.live = False  # nothing ticks: there is no refresh
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert text_of(app, "#verdict").startswith("no verdict yet: waiting for the first refresh")


async def test_80x24_gives_processes_and_the_verdict_the_first_screen(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.pause()
        procs = app.query_one(ProcessesPane).region
        footer = app.query_one(Footer).region
        assert procs.y <= 5 and procs.bottom == footer.y  # from under the verdict down to the footer


async def test_a_gpu_pane_with_nothing_to_show_is_one_line(tmp_path):
    app = make_app(no_gpu_incident(), str(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.pause()
        gpus = app.query_one("#gpus")
        assert gpus.region.height == 1
        assert "2 GPUs:" in str(app.query_one("#gpu-body").render())
    app = make_app(no_gpu_incident(), str(tmp_path))
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        await pilot.pause()
        assert app.query_one("#gpus").region.height == 1
        assert app.query_one(HypothesesPane).region.width >= 100  # the GPU cell went to Hypotheses


async def test_200x50_hypotheses_at_least_as_wide_as_gpus(app):
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        assert app.query_one(HypothesesPane).region.width >= app.query_one("#gpus").region.width


async def test_footer_shows_help_and_quit_at_80x24(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.pause()
        footer_line = screen_text(app).splitlines()[-1]
        assert "? help" in footer_line and "q quit" in footer_line


async def test_fast_6z_zooms_hypotheses(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("6", "z")  # one press sequence, no pause between
        assert app.zoomed == "hypotheses"
        assert app.focused is app.query_one(HypothesesPane).focus_target
        await pilot.press("z")
        await pilot.pause()
        await pilot.pause()
        pane = app.query_one(HypothesesPane)
        assert app.focused is pane.focus_target
        assert pane.region.intersection(app.screen.region).height >= 5  # the view went where focus is


async def test_ctrl_c_and_f10_quit_f1_helps(app, incident):
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        scroll = app.screen.query_one("#help-scroll")
        await pilot.press("j", "j", "j")
        assert scroll.scroll_y > 0  # j scrolls the help
        await pilot.press("k")
        await pilot.press("escape")
        assert app.return_code is None
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.return_code == 0  # quit, not "press ctrl+q"
    app2 = make_app(incident)
    async with app2.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f10")
        await pilot.pause()
        assert app2.return_code == 0


async def test_direct_sort_keys_reverse_and_flat(app):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        procs = app.query_one(ProcessesPane)
        await pilot.press("1", "M")
        assert procs.sort == "pss" and not procs.reverse
        await pilot.press("M")
        assert procs.reverse
        await pilot.press("T")
        assert procs.sort == "time" and not procs.reverse
        await pilot.press("P", "I")
        assert procs.sort == "cpu" and procs.reverse
        await pilot.press("t")
        assert procs.flat and all(r.depth == 0 for r in procs.rows)
        await pilot.press("N")
        assert [r.process.pid for r in procs.rows] == sorted(r.process.pid for r in procs.rows)
        assert "flat" in str(procs.border_subtitle)
        await pilot.press("t")
        assert not procs.flat and any(r.depth > 0 for r in procs.rows)


async def test_n_and_N_step_through_log_search_matches(app):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("4", "slash", "T", "P", "enter")
        log = app.query_one(LogPane)
        assert len(log.match_rows) >= 2
        await pilot.press("n")
        assert log.current_match == 0
        await pilot.press("n")
        assert log.current_match == 1
        await pilot.press("N", "N")
        assert log.current_match == len(log.match_rows) - 1
        assert f"{len(log.match_rows)} (n/N)" in text_of(app, "#log-status")


async def test_command_palette_lists_triage_actions(app):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in ("Capture stacks: whole target", "Export the report", "Sort processes by CPU %",
                       "Go to pane 6: Hypotheses", "Step back a refresh", "Step forward a refresh",
                       "Zoom the focused pane"):
            assert wanted in titles
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)


async def test_S_gives_visible_feedback_at_80x24(app, incident):
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("S")
        await settle(pilot)
        said = [n.message for n in app._notifications]
        assert any(m.startswith("capturing stacks of the whole target") for m in said)
        assert any(m.startswith("stacks captured:") and "odd one out PID" in m for m in said)


async def test_hypotheses_fold_the_unlikely_and_ruled_out_under_one_line(app):
    from triage_tui.ui.panes.hypotheses import folds

    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        hypotheses = app.shown_moment().diagnosis.hypotheses
        folded = [h for h in hypotheses if folds(h)]
        assert folded and any(h.status == "ruled out" for h in folded)
        tree = app.query_one(HypothesesPane).focus_target
        labels = [str(n.label) for n in tree.root.children]
        more = [n for n in tree.root.children if str(n.label).startswith(f"{len(folded)} more (")]
        assert len(more) == 1 and "ruled out" in str(more[0].label)
        assert not any(h.title in label for h in folded for label in labels)  # not listed on top
        more[0].expand()
        await pilot.pause()
        inside = " ".join(str(leaf.label) for leaf in more[0].children)
        assert all(h.title.split()[0] in inside for h in folded)  # one key away, each named


async def test_hypothesis_texts_wrap_and_evidence_is_not_repeated(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("6", "z")
        await pilot.pause()
        tree = app.query_one(HypothesesPane).focus_target
        for node in tree.root.children:
            node.expand()
        await pilot.pause()
        width = tree.size.width
        lines = [node.label for node in tree.root.children] + [
            leaf.label for node in tree.root.children for leaf in node.children]
        assert all(line.cell_len <= width - 2 for line in lines), [str(x) for x in lines if x.cell_len > width - 2]
        assert tree.max_scroll_x == 0  # nothing to scroll to sideways
        evidence = [str(leaf.label) for node in tree.root.children[:1] for leaf in node.children
                    if str(leaf.label).startswith("+ ")]
        assert len(evidence) == len(set(evidence))
        nexts = [str(leaf.label) for node in tree.root.children for leaf in node.children]
        assert not any("S on it" in line for line in nexts)

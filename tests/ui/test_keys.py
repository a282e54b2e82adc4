"""Pilot tests: every key of the app, asserting its effect, on the fixture host through the real engine."""

from __future__ import annotations

import os
import threading

import pytest
from conftest import fixture_incident, make_app, settle
from textual.command import CommandPalette

from triage_tui.demo.fixture import LAUNCHER, WEIGHTS, WORKERS, build_snapshots
from triage_tui.ui.app import TriageApp
from triage_tui.ui.panes.gpus import GpusPane
from triage_tui.ui.panes.hypotheses import HypothesesPane, HypothesisTree
from triage_tui.ui.panes.log import LogPane, LogView
from triage_tui.ui.panes.memory import MemoryPane
from triage_tui.ui.panes.processes import ProcessesPane
from triage_tui.ui.panes.stacks import StacksPane
from triage_tui.ui.screens import HelpScreen, MappingsScreen


def pids(app) -> list[int]:
    return [r.process.pid for r in app.query_one(ProcessesPane).rows]


async def test_number_keys_and_tab_focus_panes(app):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert app.focused_pane() is app.query_one(ProcessesPane)
        for key, pane in (("3", MemoryPane), ("6", HypothesesPane), ("4", LogPane), ("5", StacksPane), ("2", GpusPane)):
            await pilot.press(key)
            assert app.focused_pane() is app.query_one(pane), key
        await pilot.press("1")
        await pilot.press("tab")
        assert app.focused_pane() is app.query_one(GpusPane)


async def test_z_zooms_the_focused_pane_and_back(app):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("4", "z")
        assert app.screen.has_class("-zoom")
        log = app.query_one(LogPane)
        assert log.has_class("-zoomed") and log.region.width == 160
        assert app.query_one(ProcessesPane).region.area == 0  # the others are hidden
        await pilot.press("z")
        assert not app.screen.has_class("-zoom")
        assert app.query_one(ProcessesPane).region.area > 0


async def test_j_k_and_arrows_move_the_cursor(app):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        procs = app.query_one(ProcessesPane)
        assert procs.selected_pid() == LAUNCHER
        await pilot.press("j", "j")
        assert procs.selected_pid() == WORKERS[0]
        await pilot.press("k")
        assert procs.selected_pid() == 46432
        await pilot.press("down")
        assert procs.selected_pid() == WORKERS[0]


async def test_enter_collapses_and_expands_a_subtree(app):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert len(pids(app)) == 10
        await pilot.press("enter")
        assert pids(app) == [LAUNCHER]
        await pilot.press("enter")
        assert len(pids(app)) == 10


async def test_enter_expands_a_hypothesis_to_its_evidence(app):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("6")
        tree = app.query_one(HypothesisTree)
        first = tree.root.children[0]
        assert not first.is_expanded
        await pilot.press("enter")
        assert first.is_expanded
        labels = [str(c.label) for c in first.children]
        assert first.data == "wait-for-missing-rank" and str(first.label).startswith("1. likely")  # the engine's
        assert any(lbl.startswith("next: capture stacks of all 10 processes") for lbl in labels)
        # the evidence rows with their weights: the score shown is their sum (clipped to 0..1)
        weights = [float(lbl.split(" ", 1)[0]) for lbl in labels if lbl[:1] in "+-"]
        top = app.shown_moment().diagnosis.hypotheses[0]
        assert weights and round(min(1.0, max(0.0, sum(weights))), 2) == top.score
        assert f"{top.score:.2f}" in " ".join([str(first.label), *labels])  # the score shown


async def test_slash_filter_keeps_ancestors(app):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("slash", "T", "P", "3")
        assert pids(app) == [LAUNCHER, WORKERS[3]]  # the launcher stays: it is TP3's parent
        await pilot.press("enter")
        assert app.focused is app.query_one(ProcessesPane).table  # back on the rows, filter kept
        assert pids(app) == [LAUNCHER, WORKERS[3]]
        await pilot.press("escape")
        assert len(pids(app)) == 10


async def test_space_tags_rows_and_s_captures_the_tagged(app, host):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "space", "space")  # tag TP0 then TP1 (the cursor moves on after a tag)
        assert app.query_one(ProcessesPane).tagged == {WORKERS[0], WORKERS[1]}
        await pilot.press("s")
        await settle(pilot)
        assert host.captures == [(WORKERS[0], WORKERS[1])]


async def test_s_captures_the_selected_process(app, host):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "j", "j", "j", "j", "j")  # TP5
        await pilot.press("s")
        await settle(pilot)
        assert host.captures == [(WORKERS[5],)]
        body = str(app.query_one("#stack-body").render())
        assert "ODD ONE OUT" in body and "init_draft_worker" in body


async def test_S_captures_the_whole_target_and_shows_the_odd_one_out(app, host):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("S")
        await settle(pilot)
        assert host.captures == [tuple([LAUNCHER, 46432, *WORKERS])]
        body = str(app.query_one("#stack-body").render())
        assert "7 threads in 7 processes" in body
        assert "departs at: init_draft_worker" in body
        # the odd rank hypothesis 1 names is marked in the process pane, and only that row
        top = next(h for h in app.incident.latest.diagnosis.hypotheses if h.kind == "cause")
        assert top.pids == (WORKERS[5],) and f"PID {WORKERS[5]}" in top.title
        pane = app.query_one(ProcessesPane)
        marked = [r.process.pid for r in pane.rows if pane._named and r.process.pid in pane._named]
        assert marked == [WORKERS[5]]
        table = pane.table
        names = {row.process.pid: str(table.get_row_at(i)[1]) for i, row in enumerate(pane.rows)}
        assert names[WORKERS[5]].startswith("◆") and not names[WORKERS[4]].startswith("◆")
        assert f"◆ PID {WORKERS[5]}: named by hypothesis 1" in str(pane.border_subtitle)


async def test_capture_shows_progress_while_it_runs(tmp_path):
    gate = threading.Event()
    incident = fixture_incident(build_snapshots(5), preload=3)
    app = make_app(incident, str(tmp_path))
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            blocked = threading.Event()
            original = incident.capture_stacks

            def slow_capture(pids=None, options=None):
                blocked.set()
                gate.wait(30)
                return original(pids)

            incident.capture_stacks = slow_capture
            await settle(pilot)
            await pilot.press("S")
            await pilot.pause()
            assert "capturing stacks of the whole target" in str(app.query_one("#stack-body").render())
            gate.set()
            await settle(pilot)
            assert "ODD ONE OUT" in str(app.query_one("#stack-body").render())
    finally:
        gate.set()


async def test_m_shows_the_mappings_of_the_selected_process(app, host, monkeypatch):
    """`m` asks the IncidentView, which asks the host the PID belongs to; this machine's /proc is never read."""
    from triage_tui.collect import smaps_files

    def local_read(*args, **kwargs):
        raise AssertionError("the app read this machine's /proc for the host's PID")

    monkeypatch.setattr(smaps_files, "mappings_by_file", local_read)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "m")
        await settle(pilot)
        assert isinstance(app.screen, MappingsScreen)
        assert host.mapping_reads == [WORKERS[0]]
        table = app.screen.query_one("#map-table")
        assert table.row_count == 2
        assert str(table.get_row_at(0)[0]) == WEIGHTS
        assert table.get_row_at(0)[-1] == "8/10"
        await pilot.press("escape")
        assert not isinstance(app.screen, MappingsScreen)
        await pilot.press("k", "k", "m")  # the launcher: the host cannot read it, and says why
        await settle(pilot)
        title = str(app.screen.query_one("#map-title").render())
        assert "permission denied" in title and "run triage as root" in title


async def test_m_in_a_replay_says_mappings_were_not_recorded(tmp_path, monkeypatch):
    from triage_tui.collect import smaps_files
    from triage_tui.record.reader import read_record
    from triage_tui.record.recorder import Recorder
    from triage_tui.record.replay import ReplayView

    monkeypatch.setattr(smaps_files, "mappings_by_file", lambda *a, **k: pytest.fail("read the local /proc"))
    path = tmp_path / "r.jsonl"
    recorder = Recorder(path)
    live = fixture_incident(build_snapshots(3), preload=0)
    live.recorder = recorder
    for _ in range(3):
        live.tick()
    recorder.close()
    replay = ReplayView(read_record(path), preload=3)
    app = TriageApp(replay, interval=3600, live=False, export_dir=str(tmp_path), clock=live.host.clock)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "m")
        await settle(pilot)
        assert "mappings were not recorded" in str(app.screen.query_one("#map-title").render())


async def test_p_pauses_refresh_and_resumes(app, host):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        before = host.ticks
        await pilot.press("p")
        assert app.paused and "PAUSED" in str(app.query_one("#header").render())
        app.refresh_timer_fired()  # the interval timer firing while paused starts nothing
        await settle(pilot)
        assert host.ticks == before
        await pilot.press("p")
        app.refresh_timer_fired()
        await settle(pilot)
        assert host.ticks == before + 1


async def test_r_refreshes_now(app, incident, host):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        before_ticks, before_len = host.ticks, len(app.timeline)
        await pilot.press("r")
        await settle(pilot)
        assert host.ticks == before_ticks + 1 and len(app.timeline) == before_len + 1
        assert app.timeline[-1] is incident.latest  # the Moment the worker posted, kept by the app


async def test_question_mark_shows_help(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = list(app.screen.table.columns[0].cells)
        assert "z" in keys and "End" in keys and "q" in keys and "[ ]" in keys
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_ctrl_p_opens_the_command_palette(app):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)


async def test_brackets_rewind_and_end_returns_to_live(app, incident):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        latest = incident.latest.taken_at
        banner = app.query_one("#banner")
        assert not banner.display
        await pilot.press("left_square_bracket")
        assert banner.display and "LOOKING BACK" in str(banner.render())
        assert app.shown_moment().taken_at == latest - 2
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert app.shown_moment().taken_at == latest - 6
        await pilot.press("right_square_bracket")
        assert app.shown_moment().taken_at == latest - 4
        await pilot.press("left_curly_bracket")
        assert app.shown_moment().taken_at == latest - 64
        await pilot.press("r")  # collection continues underneath; the view stays put
        await settle(pilot)
        assert incident.latest.taken_at == latest + 2
        assert app.shown_moment().taken_at == latest - 64
        await pilot.press("right_curly_bracket")
        assert app.shown_moment().taken_at == latest - 4
        await pilot.press("end")
        assert not banner.display and app.shown_moment() is incident.latest


async def test_rewind_shows_the_older_snapshot_in_the_panes(tmp_path):
    # busy at first: the oldest refresh shows the workers running at 95 % CPU
    incident = fixture_incident(build_snapshots(6, busy_for=1), preload=5)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        table = app.query_one(ProcessesPane).table
        assert str(table.get_row(str(WORKERS[0]))[3]) == "0.0%"
        await pilot.press("left_curly_bracket")
        assert app.shown_moment() is incident.timeline[0]
        assert str(table.get_row(str(WORKERS[0]))[3]) == "95.0%"


async def test_e_exports_the_report_and_says_where(app, tmp_path):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert app.last_export is not None
        assert os.path.exists(app.last_export)
        text = open(app.last_export, encoding="utf-8").read()
        assert "gpu-node-07" in text
        assert any(app.last_export in n.message for n in app._notifications)


async def test_log_keys_follow_level_and_search(app):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        log = app.query_one(LogPane)
        assert app.focused is app.query_one(LogView)
        assert "last line" in str(app.query_one("#log-status").render())
        await pilot.press("f")
        assert not log.follow
        await pilot.press("l")
        assert log.level == "warning" and log.shown_lines == [log.shown_lines[0]] and "FutureWarning" in log.shown_lines[0]
        await pilot.press("l", "l")
        await pilot.press("slash", "T", "P", "3")
        assert log.shown_lines == ["[2026-05-28 14:02:19 TP3] Using FlashInfer backend"]


async def test_q_quits(app, incident):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert app._exit
    assert app.return_code == 0


async def test_q_quits_while_a_refresh_is_blocked(tmp_path):
    """A source stuck in a call: quitting does not wait for it, and its late result is dropped."""
    gate = threading.Event()
    incident = fixture_incident(build_snapshots(5), preload=2, gate=gate)
    app = make_app(incident, str(tmp_path))
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            assert app.collecting_since is not None  # the first refresh is running, blocked on the gate
            await pilot.press("q")
            await pilot.pause()
        assert not gate.is_set() and incident.host.ticks == 2  # the app ended while the call was still blocked
        assert all(w.is_cancelled or w.is_finished for w in app.workers)
    finally:
        gate.set()


async def test_a_blocked_refresh_shows_as_slow_and_the_panes_keep_the_last_data(tmp_path):
    gate = threading.Event()
    incident = fixture_incident(build_snapshots(5), preload=2, gate=gate)
    now = [incident.latest.taken_at]
    app = TriageApp(incident, interval=2, clock=lambda: now[0], export_dir=str(tmp_path))
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            for _ in range(100):  # the real panes are mounted after the first frame (later under load)
                if app.panes_ready:
                    break
                await pilot.pause()
            assert app.collecting_since is not None and app.panes_ready
            now[0] += 30  # the UI's clock moves on while the source hangs
            app.refresh_timer_fired()  # a second refresh is not stacked on the hung one
            header = str(app.query_one("#header").render())
            assert "refresh slow: 30s" in header and "ago" in header
            assert len(app.query_one(ProcessesPane).rows) == 10
            assert app.ticks_started == 1
            gate.set()
            await settle(pilot)
            assert "refresh slow" not in str(app.query_one("#header").render())
    finally:
        gate.set()


async def test_auto_stacks_captures_the_whole_target_once_when_it_idles(tmp_path):
    # refreshes 0-1 busy, then idle: the engine sees all idle once they have done nothing for 10 s
    incident = fixture_incident(build_snapshots(10, busy_for=2), preload=1)
    host = incident.host
    app = make_app(incident, str(tmp_path), auto_stacks=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert host.captures == []  # refresh 1 is still busy
        for _ in range(8):
            await pilot.press("r")
            await settle(pilot)
        assert host.captures == [tuple([LAUNCHER, 46432, *WORKERS])]  # once, not on every idle refresh
        assert "ODD ONE OUT" in str(app.query_one("#stack-body").render())


async def test_o_cycles_the_sort(tmp_path):
    import dataclasses

    snaps = build_snapshots(3)
    # give the workers distinct RSS so the rss sort has an order to show: TP7 largest
    snaps = [dataclasses.replace(s, processes=tuple(
        dataclasses.replace(p, rss_bytes=p.pid << 30) if p.pid in WORKERS else p for p in s.processes)) for s in snaps]
    incident = fixture_incident(snaps, preload=2)
    app = make_app(incident, str(tmp_path))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert pids(app)[2:] == list(WORKERS)
        await pilot.press("o", "o")  # pid → cpu → rss
        assert app.query_one(ProcessesPane).sort == "rss"
        assert pids(app)[1] == WORKERS[-1] and pids(app)[1:9] == sorted(WORKERS, reverse=True)


async def test_keys_typed_into_the_filter_are_text_not_commands(app, host):
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("slash", "q", "s", "z", "left_square_bracket")
        assert app.query_one(ProcessesPane).filter_text == "qsz["
        assert not app._exit and app.zoomed is None and app.view_at is None and host.captures == []


async def test_curly_brackets_back_then_forward_return_to_the_same_refresh(tmp_path):
    import dataclasses

    snaps = build_snapshots(4)
    base = snaps[0].taken_at
    snaps = [dataclasses.replace(s, taken_at=base + dt) for s, dt in zip(snaps, (0, 30, 95, 100), strict=True)]
    incident = fixture_incident(snaps, preload=4)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("left_square_bracket")
        assert app.shown_moment().taken_at == base + 95
        await pilot.press("left_curly_bracket")
        assert app.shown_moment().taken_at == base + 30
        await pilot.press("right_curly_bracket")  # a minute on from 30 s would be 90 s: the refresh at 30 again
        assert app.shown_moment().taken_at == base + 95


async def test_e_falls_back_to_a_writable_directory_and_says_where(tmp_path):
    incident = fixture_incident(build_snapshots(6), preload=5)
    gone = tmp_path / "gone"  # the record's directory, removed since
    app = TriageApp(incident, interval=3600, live=False, clock=lambda: incident.latest.taken_at,
                    export_dirs=(str(gone), str(tmp_path)))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert app.last_export is not None and os.path.dirname(app.last_export) == str(tmp_path)
        assert any(app.last_export in n.message for n in app._notifications)


async def test_e_with_no_writable_directory_says_why(tmp_path):
    incident = fixture_incident(build_snapshots(6), preload=5)
    app = TriageApp(incident, interval=3600, live=False, clock=lambda: incident.latest.taken_at,
                    export_dirs=(str(tmp_path / "a"), str(tmp_path / "b")))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert app.last_export is None
        said = " ".join(n.message for n in app._notifications)
        assert "report not written" in said and str(tmp_path / "a") in said and "No such file" in said

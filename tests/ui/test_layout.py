"""Layout: at 80x24 every pane can be reached and shows its content; at 200x50 all six show at once."""

from __future__ import annotations

from conftest import settle

from triage_tui.ui.app import PANE_IDS
from triage_tui.ui.panes.processes import MEDIUM_COLUMNS, NARROW_COLUMNS, WIDE_COLUMNS, ProcessesPane


async def test_80x24_every_pane_is_reachable(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.screen.has_class("-narrow")
        assert app.query_one(ProcessesPane).columns == NARROW_COLUMNS  # secondary columns collapsed
        screen = app.screen.region
        for number in range(1, 7):
            await pilot.press(str(number))
            await pilot.pause()
            pane = app.query_one(f"#{PANE_IDS[number - 1]}")
            visible = pane.region.intersection(screen)
            assert visible.height >= 5, (number, pane.region)  # scrolled into view, more than a border
            await pilot.press("z")
            assert pane.region.height >= 18  # zoomed: the pane has the screen
            await pilot.press("z")


async def test_200x50_shows_all_six_panes_at_once(app):
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        assert app.screen.has_class("-wide")
        for pane_id in PANE_IDS:
            region = app.query_one(f"#{pane_id}").region
            assert region.height >= 10 and region.width >= 40, pane_id
        procs = app.query_one(ProcessesPane)
        assert procs.columns == MEDIUM_COLUMNS  # wchan shown; CPU time and threads wait for a wider pane
        await pilot.press("z")
        assert procs.columns == WIDE_COLUMNS  # zoomed: every column


async def test_light_theme(incident, tmp_path):
    from triage_tui.ui.app import TriageApp

    app = TriageApp(incident, interval=3600, theme="light", clock=lambda: incident.latest.taken_at)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.theme == "textual-light" and not app.current_theme.dark

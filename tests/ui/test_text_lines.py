"""The header and the log's status line (ui/text_lines.py): a changed text reaches the screen, the lines
kept from the last paint are never shown for a new text, and a text that needs another line gets it."""

from __future__ import annotations

from conftest import fixture_incident, make_app, settle
from rich.text import Text

from triage_tui.demo.fixture import build_snapshots
from triage_tui.ui.messages import MomentReady
from triage_tui.ui.text_lines import TextLines


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_a_new_header_and_log_status_are_painted_and_a_longer_header_takes_two_lines(tmp_path):
    incident = fixture_incident(build_snapshots(20), preload=8)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        header = app.query_one("#header", TextLines)
        status = app.query_one("#log-status", TextLines)
        assert header.size.height == 1 and "last good" in screen_text(app)
        before = screen_text(app)
        app.post_message(MomentReady(incident.tick()))  # the next snapshot: a new "last good" time
        await pilot.pause()
        await pilot.pause()
        after = screen_text(app)
        assert header.text.plain in after and after.splitlines()[0] != before.splitlines()[0]
        status.show(Text("last line 12m34s ago · following · level all"))
        await pilot.pause()
        assert "last line 12m34s ago" in screen_text(app)
        header.show(Text("word " * 60))  # 300 cells: two lines at 200 columns
        await pilot.pause()
        await pilot.pause()
        assert header.size.height == 2
        lines = screen_text(app).splitlines()
        assert lines[0].strip().startswith("word") and lines[1].strip().startswith("word")
        header.show(Text("short"))
        await pilot.pause()
        await pilot.pause()
        assert header.size.height == 1 and screen_text(app).splitlines()[0].strip() == "short"


async def test_a_figure_that_moves_in_place_repaints_its_cells_alone_and_is_shown(tmp_path, monkeypatch):
    incident = fixture_incident(build_snapshots(20), preload=8)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        status = app.query_one("#log-status", TextLines)
        status.show(Text("last line 12m34s ago · following · level all"))
        await pilot.pause()
        regions: list = []
        real_refresh = TextLines.refresh

        def refresh(self, *args, **kw):
            if self is status:
                regions.extend(args)
            return real_refresh(self, *args, **kw)

        monkeypatch.setattr(TextLines, "refresh", refresh)
        status.show(Text("last line 12m35s ago · following · level all"))
        await pilot.pause()
        assert [(r.x, r.width) for r in regions] == [(len("last line 12m3"), 1)]
        assert "last line 12m35s ago" in screen_text(app) and "12m34s" not in screen_text(app)
        regions.clear()
        status.show(Text("last line 12m35s ago · following · level all", style="bold yellow"))  # a style: the line
        await pilot.pause()
        assert regions == []  # refreshed whole (no region named)
        assert "last line 12m35s ago" in screen_text(app)

"""The Stacks pane shows the wait-for graph of a real stuck tree before any stack capture (Pilot)."""

from __future__ import annotations

from conftest import settle
from textual.widgets import Static

from tests.realproc import wait_programs as programs
from tests.realproc.wait_programs import settle_in, started
from triage_tui.host.base import CollectOptions
from triage_tui.host.local import LocalHost
from triage_tui.incident import Incident
from triage_tui.ui.app import TriageApp


async def test_stacks_pane_shows_who_waits_on_whom_and_the_cycle() -> None:
    with started(programs.PIPE_CYCLE) as info:
        a, b = info["a"], info["b"]
        settle_in([a, b], ["read"])
        host = LocalHost()
        try:
            incident = Incident(host, host.resolve([str(info["launcher"])]), CollectOptions())
            app = TriageApp(incident, interval=3600, live=True)
            async with app.run_test(size=(200, 50)) as pilot:
                await settle(pilot)
                while incident.latest is None:
                    await pilot.pause()
                await settle(pilot)
                text = str(app.query_one("#waits-body", Static).render())
                assert f"CYCLE: PIDs {min(a, b)}, {max(a, b)} wait on each other" in text
                assert f"PID {a} (python3) → reads pipe:[" in text and f"write end held by PID {b}" in text
                assert incident.latest_stacks is None  # read from /proc: no py-spy was run
        finally:
            host.close()

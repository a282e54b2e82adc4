"""The Stacks pane shows the wait-for graph of a real stuck tree before any stack capture (Pilot)."""

from __future__ import annotations

import re

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
                # the name is the interpreter's as started: python3 in CI, python where the suite runs as `python`
                assert re.search(rf"PID {a} \(python[\d.]*\) → reads pipe:\[", text), text
                assert f"write end held by PID {b}" in text
                assert incident.latest_stacks is None  # read from /proc: no py-spy was run
        finally:
            host.close()


async def test_the_waits_section_works_its_lines_out_again_only_when_waits_or_rows_changed(monkeypatch) -> None:
    """Carried waits and rows are last refresh's objects: the section reuses its lines for them (1,000
    waits were ~4 ms a refresh), and a wait or a row that changed is shown as it is now."""
    import dataclasses

    from textual.app import App

    from triage_tui.model.snapshot import ProcessInfo, Snapshot
    from triage_tui.model.waits import Wait
    from triage_tui.ui.panes import waits as waits_pane

    calls: list[int] = []
    real = waits_pane.wait_lines
    monkeypatch.setattr(waits_pane, "wait_lines", lambda snap: calls.append(1) or real(snap))
    rows = (ProcessInfo(pid=7, ppid=1, name="worker", state="S"),)
    waits = (Wait(pid=7, tid=7, kind="pipe", object="pipe:[1]", state="S", syscall="read"),)

    class One(App[None]):
        def compose(self):
            yield waits_pane.WaitsSection("", id="w")

    async with One().run_test() as pilot:
        section = pilot.app.query_one(waits_pane.WaitsSection)
        first = Snapshot(taken_at=1.0, processes=rows, waits=waits)
        section.show(first)
        section.show(dataclasses.replace(first, taken_at=2.0, processes=tuple(rows), waits=tuple(waits)))
        assert len(calls) == 1  # the same objects in new tuples: the lines stand
        renamed = (dataclasses.replace(rows[0], name="renamed"),)
        section.show(dataclasses.replace(first, taken_at=3.0, processes=renamed))
        assert len(calls) == 2 and "PID 7 (renamed)" in str(section.render())
        repssed = (dataclasses.replace(renamed[0], pss_bytes=123456),)  # a new row, the same process and name
        section.show(dataclasses.replace(first, taken_at=4.0, processes=repssed))
        assert len(calls) == 2 and "PID 7 (renamed)" in str(section.render())
        gone = (dataclasses.replace(repssed[0], exited=True),)  # what the lines read moved: made again
        section.show(dataclasses.replace(first, taken_at=5.0, processes=gone))
        assert len(calls) == 3 and "PID 7" not in str(section.render())

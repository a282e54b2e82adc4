"""#18: the app's first frame is its layout, drawn before the target is resolved and the panes are made.

The Incident is opened by the first tick, in the app's worker (IncidentOpening); the real panes are mounted
in place of the first frame's pane frames right after it is painted. A target that finds nothing then ends
the app, and the command says so in one line with its exit code, as before; one wrong as written is refused
before anything is drawn. Nothing here is timed.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from conftest import fixture_incident, settle

from triage_tui.demo.fixture import build_snapshots
from triage_tui.incident import IncidentOpening, OpeningFailed
from triage_tui.ui.app import TriageApp
from triage_tui.ui.pane_set import PendingPane
from triage_tui.ui.panes.processes import ProcessesPane

REPO = Path(__file__).resolve().parents[2]


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_the_panes_are_mounted_before_the_incident_is_open_and_fill_when_it_is(tmp_path):
    gate = threading.Event()
    opened: list[object] = []
    incident = fixture_incident(build_snapshots(80), preload=0)

    def open_incident():
        gate.wait(60)  # resolving the target, importing the collectors: held here until the test lets go
        opened.append(incident)
        return incident

    view = IncidentOpening(open_incident, "this-host")
    app = TriageApp(view, interval=3600, export_dir=str(tmp_path), clock=incident.host.clock)
    async with app.run_test(size=(160, 50)) as pilot:
        for _ in range(100):  # the panes are mounted after the first frame is painted
            if app.panes_ready:
                break
            await pilot.pause()
        assert app.panes_ready and not app.query(PendingPane)  # the real panes, though nothing is open yet
        procs = app.query_one(ProcessesPane)
        assert procs.rows == [] and not opened
        text = screen_text(app)
        assert "this-host" in text and "1 Processes" in text and "6 Hypotheses" in text
        assert app.focused is procs.table  # keys 1-6 and the arrows act on the real panes
        gate.set()
        await settle(pilot)
        assert opened and app.timeline and len(procs.rows) == len(app.timeline[-1].snapshot.processes)
        assert "gpu-node-07" in screen_text(app)  # the opened incident's host, in the header now


async def test_a_target_that_finds_nothing_ends_the_app_with_its_line_and_exit_code(tmp_path):
    def open_incident():
        raise OpeningFailed("no process with PID 999999999", 1)

    app = TriageApp(IncidentOpening(open_incident, "this-host"), interval=3600, export_dir=str(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert app.return_code == 1
    assert app.opening_failure is not None and app.opening_failure.message == "no process with PID 999999999"


def run_in_tmux(argv: list[str]) -> str:
    """`python -m triage_tui ARGV` in a real terminal (tmux, 120x30); the screen once it has exited."""
    socket = f"triage-start-{uuid.uuid4().hex[:8]}"
    command = (f"cd {shlex.quote(str(REPO))} && {shlex.quote(sys.executable)} -m triage_tui "
               f"{' '.join(map(shlex.quote, argv))}; echo TRIAGE-EXITED rc=$?; exec sleep 600")
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "s", "-x", "120", "-y", "30", command],
                   check=True, timeout=10)
    try:
        end = time.monotonic() + 90  # an upper bound on the wait, not an assertion about time
        while time.monotonic() < end:
            text = subprocess.run(["tmux", "-L", socket, "capture-pane", "-p", "-t", "s"], capture_output=True,
                                  text=True, timeout=10).stdout
            if "TRIAGE-EXITED" in text:
                return text
            time.sleep(0.2)
        raise AssertionError(f"triage {argv} never exited:\n{text}")
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, timeout=10)


def test_in_a_terminal_a_pid_that_does_not_exist_is_one_line_and_exit_1():
    text = run_in_tmux(["999999999", "--no-record"])
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines == ["triage: error: no process with PID 999999999", "TRIAGE-EXITED rc=1"]


def test_in_a_terminal_a_malformed_target_is_refused_before_the_app_with_exit_2():
    text = run_in_tmux(["name:(", "--no-record"])
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 2 and lines[0].startswith("triage: error: regex in 'name:(' does not compile")
    assert lines[1] == "TRIAGE-EXITED rc=2"


async def test_the_app_says_it_has_started_once_its_first_moment_is_shown(tmp_path, monkeypatch):
    import triage_tui.ui.app as ui_app

    monkeypatch.setattr(ui_app, "STARTED_BY_S", 3600.0)  # only the Moment can say it here
    calls: list[int] = []
    incident = fixture_incident(build_snapshots(80), preload=0)
    app = TriageApp(incident, interval=3600, export_dir=str(tmp_path), clock=incident.host.clock,
                    started=lambda: calls.append(len(app.timeline)))
    async with app.run_test(size=(160, 50)) as pilot:
        for _ in range(100):  # an upper bound on the wait, not an assertion about time
            await settle(pilot)
            if calls:
                break
        assert calls == [1] and app.panes_ready  # once, with the first Moment in (commands/ ends its GC pause)
        await pilot.press("r")
        await settle(pilot)
        assert len(app.timeline) == 2 and calls == [1]


async def test_without_a_moment_the_app_says_it_has_started_after_a_while(tmp_path, monkeypatch):
    import triage_tui.ui.app as ui_app

    monkeypatch.setattr(ui_app, "STARTED_BY_S", 0.05)
    gate = threading.Event()
    calls: list[int] = []

    def open_incident():
        gate.wait(60)  # an opening that does not end while the test looks
        raise OpeningFailed("no process with PID 999999999", 1)

    app = TriageApp(IncidentOpening(open_incident, "this-host"), interval=3600, export_dir=str(tmp_path),
                    started=lambda: calls.append(len(app.timeline)))
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):  # an upper bound on the wait, not an assertion about time
            await pilot.pause(0.05)
            if calls:
                break
        assert calls == [0]
        gate.set()
        await settle(pilot)

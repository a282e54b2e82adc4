"""#18: the app's start runs with the cyclic collector off, and it is on again once the app says the first
Moment is shown, and whenever the command ends (an error before the app, the app's end). Not timed."""

from __future__ import annotations

import ast
import gc
import os
import subprocess
import sys

from triage_tui.commands.start_gc import GcPause, gc_paused

# commands/app.py's run() as `triage PID` runs it, with textual's run_app standing in (no terminal here)
START = """
import gc, io, os, sys
from triage_tui import cli
from triage_tui.commands import app as face
from triage_tui.commands.early_frame import EarlyFrame
import triage_tui.ui.app as ui_app
face.terminal_problem = lambda: ""
face.early_frame = lambda host, target, interval_s: EarlyFrame(io.StringIO())
seen = {}

def textual_runs(incident, started=None, **options):
    seen["in_the_app"] = gc.isenabled()
    started()  # what the app does once its first Moment is shown
    seen["after_started"] = gc.isenabled()
    incident.close()
    return 0

ui_app.run_app = textual_runs
command, args = cli.parse([str(os.getpid()), "--no-record"])
seen["rc"] = face.run(args)
seen["after_run"] = gc.isenabled()
command, args = cli.parse(["name:(", "--no-record"])  # refused before the app
seen["bad_rc"] = face.run(args)
seen["after_bad"] = gc.isenabled()
print(repr(seen))
"""


def test_the_start_pauses_the_collector_until_the_app_says_it_has_started() -> None:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    run = subprocess.run([sys.executable, "-c", START], capture_output=True, text=True, check=True, cwd=root,
                         timeout=120)
    seen = ast.literal_eval(run.stdout.strip().splitlines()[-1])
    assert seen["rc"] == 0 and seen["in_the_app"] is False and seen["after_started"] is True
    assert seen["after_run"] is True
    assert seen["bad_rc"] == 2 and seen["after_bad"] is True


def test_a_pause_resumes_once_and_leaves_a_collector_someone_else_turned_off_alone() -> None:
    assert gc.isenabled()
    try:
        with gc_paused() as pause:
            assert not gc.isenabled()
            pause.resume()
            assert gc.isenabled()
            gc.disable()  # someone else's choice after the resume: not undone on the way out
        assert not gc.isenabled()
        outer = GcPause()  # nothing to pause: it was off already
        outer.resume()
        assert not gc.isenabled()
    finally:
        gc.enable()

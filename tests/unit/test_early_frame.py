"""#18: the early frame says what triage was started on before textual is imported, and gives the shell its
screen back when textual never takes the terminal. Checked in a fresh interpreter (sys.modules), not timed;
in a real terminal, tests/ui/test_start.py's tmux runs show that textual's exit leaves the shell's screen clean."""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys

from triage_tui.commands.early_frame import ENTER, LEAVE, EarlyFrame

# commands/app.py's run() as `triage PID` runs it, twice: first with the app's module failing to import (as if
# textual were broken), then with textual's run_app standing in (no terminal here) taking the terminal over
START = """
import io, os, sys
from triage_tui import cli
from triage_tui.commands import app as face
command, args = cli.parse([str(os.getpid()), "--no-record", "--interval", "3"])
face.terminal_problem = lambda: ""
real, out = face.early_frame, {}

def spy(host, target, interval_s):
    out.setdefault("ui_imported", sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "rich")))
    out.setdefault("frames", []).append(io.StringIO())
    return real(host, target, interval_s, stream=out["frames"][-1])

class NoApp:
    def find_spec(self, name, path=None, target=None):
        if name == "triage_tui.ui.app":
            raise ImportError("textual is broken here")

face.early_frame = spy
sys.meta_path.insert(0, NoApp())
try:
    face.run(args)
except ImportError as exc:
    out["error"] = str(exc)
sys.meta_path.pop(0)
import triage_tui.ui.app as ui_app

def textual_runs(incident, handover=None, **options):
    handover()
    incident.close()
    return 0

ui_app.run_app = textual_runs
out["second_rc"] = face.run(args)
out["frames"] = [f.getvalue() for f in out["frames"]]
out["pid"] = os.getpid()
print(repr(out))
"""


def test_the_early_frame_is_drawn_before_textual_and_says_what_was_started() -> None:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    run = subprocess.run([sys.executable, "-c", START], capture_output=True, text=True, check=True, cwd=root,
                         timeout=120)
    out = ast.literal_eval(run.stdout.strip().splitlines()[-1])
    assert out["ui_imported"] == [], f"imported before the early frame: {out['ui_imported']}"
    failed, handed = out["frames"]
    # the first: the app's module never imported, so the frame gives the shell its screen back
    assert out["error"] == "textual is broken here"
    assert failed.startswith(ENTER) and failed.endswith(LEAVE)
    assert f"· {out['pid']} · every 3s · starting" in failed
    # the second: textual took the terminal (it leaves the alternate screen itself at its exit)
    assert out["second_rc"] == 0 and handed.startswith(ENTER) and LEAVE not in handed


def test_the_early_frame_escapes_what_was_typed_and_fits_the_width() -> None:
    stream = io.StringIO()
    frame = EarlyFrame(stream)
    frame.show("node\x1b[2J", "name:serve\x07 " + "x" * 300, 2.0)
    text = stream.getvalue()
    assert "\x07" not in text and "node\x1b[2J" not in text  # the user's text cannot move the cursor or ring
    assert "node\\x1b[2J" in text and "serve\\x07" in text  # it is shown, escaped
    for line in text.split("\x1b[")[1:]:
        assert len(line) < 90  # cut to the width (80 when the stream is no terminal)
    frame.handed_over()
    frame.leave()
    assert not stream.getvalue().endswith(LEAVE)

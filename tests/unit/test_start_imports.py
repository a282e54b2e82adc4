"""What the app's start imports before its first frame (#18: first frame ≤ 0.3 s).

The first frame needs textual, the app's frame (header, verdict, six empty pane frames) and the model; the
host's collectors, the target's resolution and the recorder come after it (the Incident is opened in the
app's first tick, in its worker), the panes' own modules when they are mounted right after that frame, the
engine on the first tick, the report's renderers on `e`, pynvml on the first GPU read, paramiko and the
multi-node machinery only with --ssh or a job. Checked in a fresh interpreter (sys.modules), not timed.
"""

from __future__ import annotations

import os
import subprocess
import sys

DEFERRED = ("paramiko", "pynvml", "triage_tui.diagnose.engine", "triage_tui.diagnose.rules",
            "triage_tui.record.export", "triage_tui.render.markdown", "triage_tui.fleet", "triage_tui.commands.job",
            "triage_tui.host.local", "triage_tui.collect.snapshot", "triage_tui.collect.targets",
            "triage_tui.ui.panes.processes", "triage_tui.ui.panes.log",
            "triage_tui.ui.panes.hypotheses", "triage_tui.ui.screens",
            # the recorder and the model's codec (the help's retention sentence has its own module), the node-list
            # parser (no --ssh), the log follower (with --log: its file is checked by collect/log_readable.py alone),
            # the stack comparison (no stacks yet)
            "triage_tui.record.recorder", "triage_tui.model.codec", "triage_tui.host.node_list",
            "triage_tui.collect.log_follower", "triage_tui.diagnose.stack_groups")

# commands/app.py's run() as `triage PID` runs it, up to the app's first frame: the app's run_app stands in
# for textual's (no terminal here), notes what is imported, then opens the incident as the first tick would
START = """
import io, os, sys
from triage_tui import cli
from triage_tui.commands.early_frame import EarlyFrame
command, args = cli.parse([str(os.getpid()), "--no-record", "--log", sys.argv[1]])
from triage_tui.commands import app as face
import triage_tui.ui.app as ui_app
deferred = %r
seen = {}
def first_frame(incident, **options):
    seen["before"] = [m for m in deferred if m in sys.modules]
    opened = incident.opened()  # what the first tick does first, in the app's worker
    seen["target"] = [r.pid for r in opened.target.roots]
    seen["opened"] = [m for m in deferred if m in sys.modules]
    opened.engine
    seen["after"] = [m for m in deferred if m in sys.modules]
    incident.close()
    return 0
face.terminal_problem = lambda: ""
face.early_frame = lambda host, target, interval_s: EarlyFrame(io.StringIO())  # its escapes not in our output
ui_app.run_app = first_frame
assert face.run(args) == 0
for key, value in seen.items():
    print(key + ":" + ",".join(map(str, value)))
""" % (DEFERRED,)


def test_the_app_start_defers_collectors_resolution_panes_engine_and_ssh_until_after_the_first_frame(tmp_path) -> None:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    log = tmp_path / "server.log"
    log.write_text("started\n")
    out = subprocess.run([sys.executable, "-c", START, str(log)], capture_output=True, text=True, check=True, cwd=root,
                         timeout=120)
    lines = dict(line.split(":", 1) for line in out.stdout.splitlines() if ":" in line)
    assert lines["before"] == "", f"imported before the first frame: {lines['before']}"
    # the first tick opens the incident: the host's collectors imported, the target (this test's child) resolved
    opened = lines["opened"].split(",")
    assert "triage_tui.host.local" in opened and "triage_tui.collect.snapshot" in opened
    assert lines["target"] and int(lines["target"]) > 0
    assert "triage_tui.diagnose.engine" in lines["after"].split(",")  # the property does import it when asked
    assert "paramiko" not in lines["after"] and "triage_tui.fleet" not in lines["after"]

"""What the app's start imports before its first frame (#18: first frame ≤ 0.3 s).

The frame needs textual and the panes; the engine (rules, vocabulary, lexicon), the report's renderers, NVML
and paramiko are imported when they are first used: the engine on the first tick (in the app's worker, after
the first paint), the renderers on `e` or a printed report, pynvml on the first GPU read, paramiko only with
--ssh. Checked in a fresh interpreter (sys.modules), not timed.
"""

from __future__ import annotations

import os
import subprocess
import sys

DEFERRED = ("paramiko", "pynvml", "triage_tui.diagnose.engine", "triage_tui.diagnose.rules",
            "triage_tui.record.export", "triage_tui.render.markdown")

# what commands/app.py's run() does up to app.run(): parse, the host, the target, the Incident, the app module
START = """
import os, sys
from triage_tui import cli
command, args = cli.parse([str(os.getpid()), "--no-record"])
from triage_tui.commands import app
from triage_tui.commands.report import make_host
from triage_tui.host.base import CollectOptions
from triage_tui.incident import Incident
import triage_tui.ui.app
host = make_host(args)
incident = Incident(host, host.resolve(args.targets, port=None), CollectOptions())
deferred = %r
print("before:" + ",".join(m for m in deferred if m in sys.modules))
incident.engine  # the first tick's first use
print("after:" + ",".join(m for m in deferred if m in sys.modules))
incident.close()
""" % (DEFERRED,)


def test_the_app_start_defers_the_engine_renderers_nvml_and_paramiko() -> None:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", START], capture_output=True, text=True, check=True, cwd=root,
                         timeout=120)
    lines = dict(line.split(":", 1) for line in out.stdout.splitlines() if ":" in line)
    assert lines["before"] == "", f"imported before the first frame: {lines['before']}"
    assert "triage_tui.diagnose.engine" in lines["after"].split(",")  # the property does import it when asked

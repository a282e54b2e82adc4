"""The app's faces without a terminal (CI, a pipe, `< /dev/null`): one line and exit 2, never a hang."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

RECORD = Path(__file__).resolve().parents[2] / "screenshots" / "demo-incident.jsonl"


@pytest.mark.parametrize("argv", [
    [str(os.getpid()), "--no-record"],  # the app on a live PID (this test's own process)
    ["replay", str(RECORD)],
    ["demo", "--no-record", "--workers", "1", "--weights-mb", "1"],
])
def test_app_faces_without_a_terminal_say_so_and_exit(argv: list[str]) -> None:
    out = subprocess.run([sys.executable, "-m", "triage_tui", *argv], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "needs a terminal" in out.stderr and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1, "one line, and for the demo nothing started before it"
    assert out.stdout == ""

"""The command line as a new user meets it: help, -V, --format on every face, distinct exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

RECORD = Path(__file__).resolve().parents[2] / "screenshots" / "demo-incident.jsonl"


def triage(*argv: str, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "triage_tui", *argv], capture_output=True, text=True, timeout=120, **kw)


def test_help_command_prints_the_top_help_or_a_command_s() -> None:
    top = triage("help")
    assert top.returncode == 0 and top.stdout.startswith("usage: triage") and "replay" in top.stdout.splitlines()[1]
    stacks = triage("help", "stacks")
    assert stacks.returncode == 0 and stacks.stdout.startswith("usage: triage stacks")
    unknown = triage("help", "nope")
    assert unknown.returncode == 2 and "no command 'nope'" in unknown.stderr


def test_short_version_flag() -> None:
    out = triage("-V")
    assert out.returncode == 0 and out.stdout.startswith("triage ")


@pytest.mark.parametrize("face", ["report", "stacks", "diagnose", "demo", "replay"])
def test_every_face_takes_format_json_and_the_json_alias(face: str) -> None:
    from triage_tui.cli import build_parser

    _, subs = build_parser()
    extra = {"replay": ["x"]}.get(face, [])
    assert subs[face].parse_args([*extra, "--format", "json"]).format == "json"
    assert subs[face].parse_args([*extra, "--json"]).format == "json"


def test_replay_format_json_prints_the_record_s_report() -> None:
    out = triage("replay", str(RECORD), "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["hypotheses"]


def test_demo_takes_the_theme_option() -> None:
    from triage_tui.cli import build_parser

    _, subs = build_parser()
    assert subs["demo"].parse_args(["--theme", "light"]).theme == "light"


@pytest.mark.parametrize("argv, code", [
    (["--no-such-option"], 2),  # argparse: a usage error
    (["stacks", "bogus"], 2),  # a malformed target
    (["report", "--from", "/nonexistent/record.jsonl"], 1),  # a runtime failure
    (["diagnose", "/nonexistent/paste.txt"], 1),
])
def test_exit_codes_tell_usage_errors_from_runtime_failures(argv: list[str], code: int) -> None:
    out = triage(*argv)
    assert out.returncode == code, out.stderr
    assert "Traceback" not in out.stderr

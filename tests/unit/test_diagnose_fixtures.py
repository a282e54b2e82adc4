"""`triage diagnose` on text fixtures written from the shapes in hang-signals.md: one per cause."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from triage_tui.diagnose.pasted_text import diagnose_text

FIXTURES = Path(__file__).parent / "fixtures" / "diagnose"
EXPECTED = {
    "deadlock.txt": "deadlock",
    "collective_hang.txt": "collective-hang",
    "collective_mismatch.txt": "collective-mismatch",
    "crashed_worker.txt": "crashed-worker",
    "oom.txt": "oom",
    "still_loading.txt": "still-loading",
    "gpu_spin.txt": "gpu-hang",
    "io_blocked.txt": "io-blocked",
    "rendezvous.txt": "network-wait",
    "stopped.txt": "stopped",
    "busy_loop.txt": "busy-loop",
    "healthy.txt": "healthy",
    "reference_incident.txt": "wait-for-missing-rank",
}


def test_every_fixture_has_an_expectation() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.txt")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_top_hypothesis(name: str) -> None:
    result = diagnose_text((FIXTURES / name).read_text())
    top = result.diagnosis.hypotheses[0]
    assert top.id == EXPECTED[name], [(h.id, h.score) for h in result.diagnosis.hypotheses[:3]]
    assert top.status in ("likely", "possible") and top.for_ and top.next_check


def test_fixture_accuracy(capsys) -> None:
    top1 = top2 = 0
    for name, want in EXPECTED.items():
        ranked = [h.id for h in diagnose_text((FIXTURES / name).read_text()).diagnosis.hypotheses]
        top1 += ranked[0] == want
        top2 += want in ranked[:2]
    with capsys.disabled():
        print(f"\ndiagnose fixtures: top-1 {top1}/{len(EXPECTED)}, top-2 {top2}/{len(EXPECTED)}")
    assert top1 == len(EXPECTED)


def test_reference_paste_rules_out_crash_and_oom_with_the_rss_illusion() -> None:
    d = diagnose_text((FIXTURES / "reference_incident.txt").read_text()).diagnosis
    status = {h.id: h for h in d.hypotheses}
    assert status["crashed-worker"].status == "ruled out"
    oom = status["oom"]
    assert oom.status == "ruled out" and "415 GiB available" in oom.against[0] and "RSS summed" in oom.against[0]


def test_parts_used_and_ignored_are_reported() -> None:
    result = diagnose_text((FIXTURES / "reference_incident.txt").read_text())
    kinds = {p.kind for p in result.parts if p.used}
    assert kinds == {"curl", "free", "ps", "log"}
    ignored = [p for p in result.parts if not p.used]
    assert any(p.kind == "text" and p.first_line == 1 for p in ignored)


def _cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "triage_tui", "diagnose", *args], input=stdin, capture_output=True,
                          text=True, timeout=60)


def test_cli_markdown_and_json() -> None:
    md = _cli(str(FIXTURES / "stopped.txt"))
    assert md.returncode == 0, md.stderr
    assert "## Parts of the input" in md.stdout and "used lines" in md.stdout
    assert "### 1. Stopped: PID 6110 is in state T — likely" in md.stdout and "next check:" in md.stdout
    js = _cli("--format", "json", stdin=(FIXTURES / "oom.txt").read_text())
    data = json.loads(js.stdout)
    assert data["hypotheses"][0]["id"] == "oom"
    top = data["hypotheses"][0]
    assert set(top) == {"id", "title", "status", "score", "for", "against", "next_check", "kind", "evidence",
                        "cap", "cap_reason", "pids"}
    assert top["score"] == round(max(0.0, min(top["cap"], sum(row["weight"] for row in top["evidence"]))), 2)
    scores = [h["score"] for h in data["hypotheses"] if h["status"] != "ruled out" and h["id"] != "rss-illusion"]
    assert scores == sorted(scores, reverse=True)


def test_cli_several_files_are_read_together() -> None:
    out = _cli("--format", "json", str(FIXTURES / "gpu_spin.txt"), str(FIXTURES / "stopped.txt"))
    data = json.loads(out.stdout)
    assert {p["kind"] for p in data["parts"] if p["used"]} >= {"nvidia-smi", "ps"}


def test_cli_unreadable_file_is_one_error_line(tmp_path) -> None:
    out = _cli(str(tmp_path / "missing.txt"))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "cannot read" in out.stderr and "Traceback" not in out.stderr


def test_cli_empty_input_says_so() -> None:
    out = _cli(stdin="  \n\n")
    assert out.returncode != 0 and "empty" in out.stderr


def test_cli_input_with_nothing_readable_fails_after_listing_parts() -> None:
    out = _cli(stdin="hello, my server is broken\nplease help\n")
    assert out.returncode == 1 and "ignored line" in out.stdout and "found nothing triage reads" in out.stderr


def test_cli_stdin_that_is_not_clean_text_or_is_closed_gives_one_line() -> None:
    strict = dict(os.environ, PYTHONIOENCODING="ascii:strict")  # a locale whose decoder refuses the bytes
    undecodable = subprocess.run([sys.executable, "-m", "triage_tui", "diagnose"], input=b"free\n\xff\xfe x\n",
                                 capture_output=True, env=strict, timeout=60)
    assert b"Traceback" not in undecodable.stderr and undecodable.returncode == 1
    closed = subprocess.run([sys.executable, "-m", "triage_tui", "diagnose"], stdin=None, capture_output=True,
                            text=True, timeout=60, preexec_fn=lambda: os.close(0))
    assert closed.returncode == 1 and closed.stderr == "triage: error: no FILE given and standard input is closed\n"

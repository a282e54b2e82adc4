"""The sanitising layer: every hostile string comes out visible, one line, and inert in Markdown."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from tests.hostile_strings import HOSTILE, raw_controls
from triage_tui.model.snapshot import LogLine
from triage_tui.model.stacks import Frame, ProcessStacks, StackCapture, StackGroup, ThreadStack
from triage_tui.render.markdown import render_report_markdown
from triage_tui.render.plain_text import code_block, md_code, md_inline, terminal_text, visible
from triage_tui.render.report_json import render_report_json
from triage_tui.render.stacks_text import render_capture
from triage_tui.demo.fixture import LAUNCHER, build_snapshots
from triage_tui.model.moment import Moment


@pytest.mark.parametrize("text", HOSTILE)
def test_visible_leaves_no_control_and_keeps_one_line(text: str) -> None:
    out = visible(text)
    assert raw_controls(out) == [] and "\n" not in out and "\t" not in out
    out.encode("utf-8")  # a lone surrogate would raise here (and in the terminal's write)


def test_visible_escapes_as_python_reads_them_and_keeps_the_rest() -> None:
    assert visible("\x1b[2J") == "\\x1b[2J"
    assert visible("a\tb\nc\x00\x9b\u202e\udcff") == "a\\tb\\nc\\x00\\x9b\\u202e\\udcff"
    assert visible("a\tb\nc", keep_newlines=True) == "a\tb\nc"
    assert visible("GPU 0 · 76017MiB é 🙂 [heap]") == "GPU 0 · 76017MiB é 🙂 [heap]"


def test_md_inline_is_inert() -> None:
    out = md_inline("[x](https://e.invalid) <b>bold</b> `code` a|b &lt;")
    assert "<b>" not in out and "](" not in out.replace("\\](", "") and "`" not in out.replace("\\`", "")
    assert "&amp;lt;" in out and "\\|" in out


def test_code_block_cannot_be_closed_from_inside() -> None:
    block = code_block(["```", "````", "<script>x</script>"])
    fence = block[0]
    assert set(fence) == {"`"} and len(fence) == 5 and block[-1] == fence
    assert all(not line.startswith(fence) for line in block[1:-1])
    assert md_code("a`b").startswith("``") and md_code("|").count("\\|") == 1


def _hostile_snapshot():
    snap = build_snapshots(6)[-1]
    extra = tuple(dataclasses.replace(snap.processes[1], pid=70000 + i, name=s) for i, s in enumerate(HOSTILE))
    tail = dataclasses.replace(snap.logs[0], path="/var/log/[/]\x1b[2J.log",
                               lines=tuple(LogLine(s, snap.taken_at, "info") for s in HOSTILE), partial="```")
    frames = tuple(Frame(s, s, 1) for s in HOSTILE)
    capture = StackCapture(
        taken_at=snap.taken_at, pids=(LAUNCHER,),
        processes=(ProcessStacks(LAUNCHER, HOSTILE[9], (ThreadStack(LAUNCHER, LAUNCHER, HOSTILE[10], "idle", frames, "collective"),)),),
        groups=(StackGroup("g", frames, ((LAUNCHER, LAUNCHER),), (LAUNCHER,), "collective", HOSTILE[8], True, HOSTILE[16]),),
        duration_ms=1.0, notes=HOSTILE)
    return Moment(dataclasses.replace(snap, processes=snap.processes + extra, logs=(tail,)), stacks=capture)


def _fences_balanced(md: str) -> bool:
    """CommonMark: a block opened by N backticks closes only at a line of at least N backticks."""
    open_len = 0
    for line in md.splitlines():
        m = re.match(r"^(`{3,})\s*$", line) or re.match(r"^(`{3,})[^`]*$", line)
        if not m:
            continue
        n = len(m.group(1))
        if open_len == 0:
            open_len = n
        elif n >= open_len:
            open_len = 0
    return open_len == 0


def test_markdown_report_shows_hostile_text_inert_and_escaped() -> None:
    moment = _hostile_snapshot()
    md = render_report_markdown([moment], [f"12:00:00 {s}" for s in HOSTILE])
    assert raw_controls(md) == []
    assert _fences_balanced(md)
    # outside code blocks, no raw HTML tag and no link survives
    prose = re.sub(r"^(`{3,}).*?^\1$", "", md, flags=re.S | re.M)
    prose = re.sub(r"(?<![`\\])(`+)(?!`).+?(?<!`)\1(?!`)", "", prose)  # code spans are literal too
    assert not re.search(r"(?<!\\)<(script|img)", prose) and not re.search(r"(?<!\\)\[link=", prose)
    # inside the log's code block every line is shown as written (made visible)
    for s in HOSTILE:
        assert visible(s) in md
    assert "\\x1b[2J" in md


def test_stacks_text_and_json_faces_hold_no_raw_control() -> None:
    moment = _hostile_snapshot()
    assert moment.stacks is not None
    text = render_capture(moment.stacks)
    assert raw_controls(text) == []
    assert "\\x1b]0;pwned title\\x07" in text
    js = render_report_json(moment)
    assert raw_controls(js) == [] and all(ord(c) < 128 for c in js)
    assert json.loads(js)["processes"][-1]["name"] == HOSTILE[-1]  # JSON keeps the data, escaped as JSON


def test_terminal_text_keeps_lines_and_escapes_the_rest() -> None:
    assert terminal_text("a\n\tb\x1b[2J\u202e") == "a\n\tb\\x1b[2J\\u202e"


def test_the_job_report_shows_hostile_node_text_inert_and_escaped() -> None:
    from triage_tui.model.job import JobDiagnosis, JobHypothesis, JobMoment, JobStackGroup, NodeSummary, RankRef
    from triage_tui.render.job_markdown import render_job_markdown, render_job_stacks

    frames = tuple(Frame(s, s, 1) for s in HOSTILE[:4])
    nodes = tuple(NodeSummary(node=f"n{i}", reachable=i % 2 == 0, reason=s, gpus=s, top_cause="oom", top_title=s)
                  for i, s in enumerate(HOSTILE))
    hyps = tuple(JobHypothesis("node-differs", s, "likely", 0.8, node="n0", for_=(s,), next_check=s) for s in HOSTILE[:3])
    groups = (JobStackGroup(frames, (RankRef("n0", 1),), ("n0",), "collective", True, HOSTILE[15]),)
    moment = JobMoment(taken_at=1_780_000_000.0, evidence=(), diagnosis=JobDiagnosis(1_780_000_000.0, nodes, hyps, groups))
    for text in (render_job_markdown(moment), render_job_stacks(moment)):  # stacks is plain text: no control
        assert raw_controls(text) == []
    md = render_job_markdown(moment)
    assert _fences_balanced(md) and not re.search(r"(?<!\\)<(script|img)", md)
    assert "\\x1b\\[2J" in md and "a\\|b\\|c" in md  # escaped, and a pipe never splits a table cell

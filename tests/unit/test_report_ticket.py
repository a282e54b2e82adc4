"""#17: the Markdown report reads as a ticket: the verdict in its first lines, three pieces of evidence,
the next check as shell words, the odd rank's stack; the quiet hypotheses as one short list; logs
verbatim; long tables capped; no app keystroke. On the committed recording of a real demo run."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from triage_tui.model.snapshot import LogLine, LogTail, ProcessInfo
from triage_tui.record.export import report_from_record
from triage_tui.record.reader import read_record
from triage_tui.render.markdown import render_report_markdown
from triage_tui.render.verdict import split_next_check

RECORD = Path(__file__).resolve().parents[2] / "screenshots" / "demo-incident.jsonl"


def test_the_demo_report_has_the_verdict_in_its_first_15_lines() -> None:
    recording = read_record(RECORD)
    top = recording.moments[-1].diagnosis.hypotheses[0]  # the engine's top cause
    lines = report_from_record(RECORD).splitlines()
    head = "\n".join(lines[:15])
    assert "**Verdict:** likely: " in head and top.title in head and f"`{top.id}`" in head
    summary = "\n".join(lines[: lines.index("## Details")])
    assert re.search(r"^1\. .+\n2\. .+\n3\. ", summary, re.M)  # three strongest pieces of evidence
    assert "**Next check:** py-spy dump" in summary
    assert "**The odd rank's stack** (PID" in summary and "```" in summary


def test_quiet_hypotheses_are_one_short_list_and_no_keystroke_leaks() -> None:
    text = report_from_record(RECORD)
    last = read_record(RECORD).moments[-1]
    ruled_out = [h for h in last.diagnosis.hypotheses if h.status == "ruled out"]
    assert ruled_out and "**Ruled out:**" in text
    sections = re.findall(r"^### \d+\. (.+?) \(`", text, re.M)
    assert not any(h.title in sections for h in ruled_out)  # not a section each
    assert "S on it" not in text and "press S" not in text and "(S)" not in text


def test_long_tables_end_in_n_more_and_logs_are_verbatim() -> None:
    moment = read_record(RECORD).moments[-1]
    last = moment.snapshot
    many = tuple(ProcessInfo(pid=50000 + i, ppid=last.processes[0].pid, name=f"w{i}") for i in range(80))
    log = LogTail(path="/var/log/x.log", lines=(LogLine("WARNING: careful", level="warning", seen_at=1.0),))
    wide = dataclasses.replace(last, processes=last.processes + many, logs=(log,))
    text = render_report_markdown([dataclasses.replace(moment, snapshot=wide)])
    assert re.search(r"… and \d+ more rows\.", text)
    assert text.count("| w") <= 31
    block = text[text.index("### /var/log/x.log"):]
    assert "\nWARNING: careful\n" in block and "[warning]" not in block


def test_next_checks_split_into_shell_words_and_a_key() -> None:
    check = split_next_check("py-spy dump --native the odd rank PID 7 and read its frame: S on it")
    assert check.shell == "py-spy dump --native the odd rank PID 7 and read its frame" and check.key == "S"
    check = split_next_check("capture stacks of all ranks (S) and compare the collective each is in")
    assert check.shell == "capture stacks of all ranks and compare the collective each is in" and check.key == "S"
    assert split_next_check("dmesg -T | grep -i oom").key == ""


def test_a_report_without_a_verdict_names_a_command_not_a_key() -> None:
    from triage_tui.model.moment import Moment
    from triage_tui.model.snapshot import Snapshot
    from triage_tui.render.markdown import render_report_markdown

    text = render_report_markdown([Moment(Snapshot(taken_at=1_780_000_000.0)), Moment(Snapshot(taken_at=1_780_000_030.0))])
    assert "no verdict yet" in text and "press S" not in text and "triage stacks PID" in text

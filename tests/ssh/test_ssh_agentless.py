"""Agentless mode: one plain shell script per refresh, parsed here; hostile input never reaches the shell."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import psutil
import pytest

from triage_tui.host.base import CollectOptions, StackOptions, TargetError
from triage_tui.host.ssh import SshHost
from triage_tui.host.ssh_agentless import build_script, split_sections
from triage_tui.model.unavailable import Unavailable, is_known
from triage_tui.parse.meminfo import free_columns, parse_meminfo
from triage_tui.parse.ps_columns import parse_cpu_time, parse_ps_columns, subtree
from triage_tui.parse.ss_listen import parse_ss_listen

from .conftest import Node


def test_agentless_collects_the_real_tree_and_says_what_it_cannot_see(node: Node, sleeper_tree: subprocess.Popen) -> None:
    host = SshHost(node.options(), agentless=True)
    try:
        target = host.resolve([str(sleeper_tree.pid)])
        first = host.collect(target, CollectOptions())
        second = host.collect(target, CollectOptions())  # now /proc/PID/status is read for the whole tree
        stacks = host.capture_stacks([sleeper_tree.pid], StackOptions())
    finally:
        host.close()
    expected = {sleeper_tree.pid, *(c.pid for c in psutil.Process(sleeper_tree.pid).children())}
    assert {p.pid for p in first.processes} == expected
    assert {p.pid for p in second.processes} == expected
    for p in second.processes:
        assert is_known(p.rss_bytes) and is_known(p.rss_anon_bytes) and p.name.startswith("python")
        assert isinstance(p.pss_bytes, Unavailable) and p.pss_bytes.reason.startswith("agentless mode")
    assert second.memory.system.total_bytes == psutil.virtual_memory().total
    assert isinstance(second.memory.target.pss_sum_bytes, Unavailable)
    assert any(s.name == "mode" and "no PSS/USS" in s.detail for s in second.sources)
    assert "agentless mode" in stacks.notes[0]


def test_agentless_hostile_log_path_and_patterns_stay_data(node: Node, sleeper_tree: subprocess.Popen, tmp_path) -> None:
    pwned = tmp_path / "pwned-agentless"
    weird_dir = tmp_path / "a b"
    weird_dir.mkdir()
    # a file name cannot hold "/": this payload touches a unique name in the remote shell's cwd (the home dir)
    in_home = Path.home() / f"pwned-{uuid.uuid4().hex}"
    log = weird_dir / f"it's \"x\"; $(touch {in_home.name}) `touch {in_home.name}`.log"
    log.write_text("starting\nERROR boom\nhalf a li")
    host = SshHost(node.options(), agentless=True)
    try:
        for spec in (f"name:$(touch {pwned})", f"1; touch {pwned}", f"name:' ; touch {pwned} '"):
            with pytest.raises(TargetError):
                host.resolve([spec])
        target = host.resolve([r"name:time\.sleep\(600\)"])
        assert [r.pid for r in target.roots] == [sleeper_tree.pid]  # children match too but sit in its tree
        snapshot = host.collect(target, CollectOptions(logs=(str(log), f"/nonexistent/$(touch {pwned})")))
    finally:
        host.close()
    assert not pwned.exists() and not in_home.exists()
    tail, missing = snapshot.logs
    assert [line.text for line in tail.lines] == ["starting", "ERROR boom"] and tail.partial == "half a li"
    assert tail.lines[1].level == "error" and tail.size_bytes == len(log.read_bytes())
    assert missing.error is not None and "agentless mode" in missing.error.reason


def test_ps_columns_and_tree() -> None:
    text = (
        "    1     0 Ss       1  1000  2000 00:00:01 root     /sbin/init\n"
        "   10     1 Sl      40 20480 90000 1-02:03:04 alice  python -m sglang --tp 8\n"
        "   11    10 S        3   100   200 00:00:00 alice    python worker.py\n"
        "garbage line\n"
    )
    rows = parse_ps_columns(text)
    assert [r.pid for r in rows] == [1, 10, 11]
    assert rows[1].rss_bytes == 20480 * 1024 and rows[1].args == "python -m sglang --tp 8"
    assert rows[1].cpu_time_s == parse_cpu_time("1-02:03:04") == 86400 + 2 * 3600 + 3 * 60 + 4
    assert [r.pid for r in subtree(rows, [10])] == [10, 11]


def test_meminfo_gives_free_columns() -> None:
    info = parse_meminfo("MemTotal: 1000 kB\nMemFree: 100 kB\nMemAvailable: 600 kB\nBuffers: 50 kB\nCached: 300 kB\n"
                         "SReclaimable: 50 kB\nShmem: 20 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\nHugePages_Total: 4\n")
    free = free_columns(info)
    assert free["used"] == (1000 - 100 - 400) * 1024 and free["available"] == 600 * 1024
    assert info["HugePages_Total"] == 4


def test_ss_listen_rows() -> None:
    rows = parse_ss_listen(
        'LISTEN 0 128 127.0.0.1:8000 0.0.0.0:* users:(("python",pid=12,fd=3),("python",pid=13,fd=3))\n'
        "LISTEN 0 128 [::]:22 [::]:*\n"
    )
    assert (rows[0].port, rows[0].pids, rows[1].family, rows[1].pids) == (8000, (12, 13), "tcp6", ())


def test_a_log_line_cannot_forge_a_section() -> None:
    script = build_script("@@triage-abc@@ ", [1], ["/x y"])
    assert "'/x y'" in script  # quoted
    out = "@@triage-abc@@ log 0\n@@triage-fake@@ ps\nreal line\n|\n@@triage-abc@@ now\n123.5\n"
    sections = split_sections(out, "@@triage-abc@@ ")
    assert sections.get("log 0").startswith("@@triage-fake@@ ps") and "ps" not in sections.parts

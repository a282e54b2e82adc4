"""Agentless mode: one plain shell script per refresh, parsed here; hostile input never reaches the shell."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from triage_tui.host.base import CollectOptions, StackOptions, TargetError
from triage_tui.host.ssh import SshHost
from triage_tui.host.ssh_agentless import MIN_CPU_INTERVAL_S, build_script, split_sections, subtree
from triage_tui.model.unavailable import Unavailable, is_known
from triage_tui.parse.ss_listen import parse_ss_listen

from .conftest import Node


def test_agentless_collects_the_real_tree_and_says_what_it_cannot_see(node: Node, sleeper_tree: subprocess.Popen) -> None:
    host = SshHost(node.options(), agentless=True)
    try:
        target = host.resolve([str(sleeper_tree.pid)])
        first = host.collect(target, CollectOptions())
        second = host.collect(target, CollectOptions())  # now /proc/PID/status is read for the whole tree
        time.sleep(MIN_CPU_INTERVAL_S)  # a CPU % is never taken over less (the figure, not a timed assertion)
        third = host.collect(target, CollectOptions())  # and a CPU % has two samples for every process
        fourth = host.collect(target, CollectOptions())  # soon after the third: measured against the second
        stacks = host.capture_stacks([sleeper_tree.pid], StackOptions())
    finally:
        host.close()
    expected = {sleeper_tree.pid, *(c.pid for c in psutil.Process(sleeper_tree.pid).children())}
    assert {p.pid for p in first.processes} == expected
    assert {p.pid for p in second.processes} == expected
    for p in second.processes:
        assert is_known(p.rss_bytes) and is_known(p.rss_anon_bytes) and p.name.startswith("python")
        # what a shell can read: PSS/USS from smaps_rollup, CPU % from the stat delta of two refreshes
        assert is_known(p.pss_bytes) and is_known(p.uss_bytes)
    assert all(is_known(p.cpu_percent) for p in third.processes)
    # a refresh right after another (a report's last look) still has a CPU %: over the older baseline
    assert all(is_known(p.cpu_percent) for p in fourth.processes), [p.cpu_percent for p in fourth.processes]
    assert second.memory.system.total_bytes == psutil.virtual_memory().total
    assert is_known(second.memory.target.pss_sum_bytes)
    assert all(isinstance(p.cpu_percent, Unavailable) for p in first.processes)  # one refresh: no CPU % yet
    assert any(s.name == "mode" and "no wait-for graph" in s.detail for s in second.sources)  # said once
    assert "agentless mode" in stacks.notes[0]
    assert second.waits == () and second.waits_source.error is not None
    assert "agent mode only" in str(second.waits_source.error)  # said plainly, never an empty graph
    (sleeping,) = stacks.processes  # py-spy ran on the node (its own, or ours uploaded)
    assert sleeping.error is None and sleeping.threads[0].wait_kind == "sleep"


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
        token = re.search(r"sleeper-[0-9a-f]+", sleeper_tree.args[2]).group(0)  # type: ignore[union-attr]
        target = host.resolve([f"name:{token}"])
        assert [r.pid for r in target.roots] == [sleeper_tree.pid]  # children match too but sit in its tree
        snapshot = host.collect(target, CollectOptions(logs=(str(log), f"/nonexistent/$(touch {pwned})")))
    finally:
        host.close()
    assert not pwned.exists() and not in_home.exists()
    tail, missing = snapshot.logs
    assert [line.text for line in tail.lines] == ["starting", "ERROR boom"] and tail.partial == "half a li"
    assert tail.lines[1].level == "error" and tail.size_bytes == len(log.read_bytes())
    assert missing.error is not None and "agentless mode" in missing.error.reason


def test_subtree_keeps_parents_before_children() -> None:
    from triage_tui.model.snapshot import ProcessInfo

    rows = [ProcessInfo(pid=1, ppid=0, name="init"), ProcessInfo(pid=11, ppid=10, name="w"),
            ProcessInfo(pid=10, ppid=1, name="srv"), ProcessInfo(pid=12, ppid=11, name="ww")]
    assert [r.pid for r in subtree(rows, [10])] == [10, 11, 12]


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


def test_agentless_reports_a_segfault_of_a_tree_pid_from_the_node_kernel_log(node: Node) -> None:
    from triage_tui.collect.kernel import KernelLogCollector
    from triage_tui.model.snapshot import Target, TargetRoot

    # The kernel rate-limits "segfault at" lines (printk_ratelimit: a burst of 10 per 5 s, shared with every
    # other crash on the machine): crash until this machine's own kernel log names one, then ask the node.
    for _ in range(10):
        crash = subprocess.Popen([sys.executable, "-c", "import ctypes; ctypes.string_at(0)"])
        assert crash.wait(timeout=60) == -11  # the kernel logs the segfault before the parent is woken
        local = KernelLogCollector().collect([crash.pid])
        if any(e.kind == "segfault" for e in local.events):
            break
    else:
        raise AssertionError("the local kernel log never named a segfault: rate-limited or unreadable")
    host = SshHost(node.options(), agentless=True)
    try:
        snapshot = host.collect(Target(specs=(str(crash.pid),), roots=(TargetRoot(crash.pid, "test"),)), CollectOptions())
    finally:
        host.close()
    assert snapshot.kernel.error is None
    assert [(e.kind, e.pid) for e in snapshot.kernel.events] == [("segfault", crash.pid)]


def test_a_hung_remote_script_is_ended_on_the_node(node: Node) -> None:
    """Our side giving up does not stop a remote command; the node's own `timeout` does."""
    from triage_tui.host.ssh_connect import connect
    from triage_tui.host.ssh_exec import bounded_shell, run_command

    marker = f"exec sleep 577.{uuid.uuid4().int % 1000:03d}\n"
    conn = connect(node.options())
    try:
        result = run_command(conn, bounded_shell(1), timeout_s=60, stdin=marker.encode())
    finally:
        conn.close()
        leftovers = [p for p in psutil.process_iter(["cmdline"]) if " ".join(p.info["cmdline"] or ()) == marker.split(" ", 1)[1].strip()]
        for p in leftovers:
            p.kill()
    assert result.exit_status == 124  # timeout(1) ended it
    assert leftovers == []

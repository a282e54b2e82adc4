"""Agentless stack capture against a real sshd: the demo incident's stack groups through a ProxyJump hop
match a local capture; an uploaded py-spy lives in a private 0700 directory that is gone afterwards; a
process the capture left stopped is resumed with SIGCONT and recorded."""

from __future__ import annotations

import glob
import json
import os
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest

from triage_tui.collect.stacks import capture_stacks as capture_raw
from triage_tui.collect.thread_states import process_state
from triage_tui.demo.incident import DemoInfo
from triage_tui.diagnose.stack_groups import with_groups
from triage_tui.host import ssh_agentless_stacks
from triage_tui.host.base import StackOptions
from triage_tui.host.ssh import SshHost
from triage_tui.host.ssh_agentless_stacks import PyspyOnNode
from triage_tui.host.ssh_connect import connect
from triage_tui.model.stacks import StackCapture

from .conftest import WORKERS, Node

NO_PYSPY_ON_NODE = 'echo "arch=$(uname -m)"; echo "pyspy="'  # the probe's answer on a node without py-spy


def capture_stacks(pids: Sequence[int], options: StackOptions, **kwargs: Any) -> StackCapture:
    """The capture as the host hands it out: the collector's raw capture, grouped by the diagnosis layer."""
    return with_groups(capture_raw(pids, options, **kwargs))


def _ours_in_tmp() -> set[str]:
    """What triage's agentless capture creates in the node's temp dir (the node is this machine)."""
    return set(glob.glob("/tmp/triage-pyspy.*")) | set(glob.glob("/tmp/triage-stacks.*"))


def _groups(capture: StackCapture | dict) -> list[tuple]:
    groups = capture["groups"] if isinstance(capture, dict) else [g.__dict__ for g in capture.groups]
    # wait_kind too: without the node's source lines the kernel's wait channel must still tell the same kind
    return sorted((tuple(g["pids"]), g["odd_one_out"], g["departs_at"], g["wait_kind"]) for g in groups)


def test_cli_agentless_stacks_through_a_jump_match_a_local_capture(jumped: Node, demo: DemoInfo) -> None:
    before = _ours_in_tmp()
    done = subprocess.run(
        [sys.executable, "-m", "triage_tui", "stacks", "--ssh", "node", "--ssh-config", str(jumped.env.config),
         "--agentless", str(demo.launcher_pid), "--json"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    remote = json.loads(done.stdout)
    local = capture_stacks([demo.launcher_pid, *demo.worker_pids], StackOptions(timeout_s=20))
    assert sorted(remote["pids"]) == sorted([demo.launcher_pid, *demo.worker_pids])
    assert all(p["error"] is None and p["threads"] for p in remote["processes"]), remote["processes"]
    assert _groups(remote) == _groups(local)
    odd = [g for g in remote["groups"] if g["odd_one_out"]]
    assert [g["pids"] for g in odd] == [[demo.odd_pid]] and odd[0]["departs_at"]
    ranks = [g for g in remote["groups"] if len(g["pids"]) == WORKERS - 1]
    assert ranks and set(ranks[0]["pids"]) == set(demo.worker_pids) - {demo.odd_pid}
    assert remote["notes"] and remote["notes"][0].startswith("agentless mode")
    assert _ours_in_tmp() <= before, "the capture's output directory is removed on the node"


def test_uploaded_pyspy_is_private_and_gone_after_close(node: Node, demo: DemoInfo,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ssh_agentless_stacks, "PROBE_SCRIPT", NO_PYSPY_ON_NODE)
    before = _ours_in_tmp()
    host = SshHost(node.options(), agentless=True)
    try:
        capture = host.capture_stacks(demo.worker_pids, StackOptions(timeout_s=20))
        assert host._pyspy is not None
        private_dir = host._pyspy.private_dir
        assert private_dir.startswith("/tmp/triage-pyspy.") and stat.S_IMODE(os.stat(private_dir).st_mode) == 0o700
        again = host.capture_stacks(demo.worker_pids, StackOptions(timeout_s=20))  # the same upload, reused
        assert host._pyspy.private_dir == private_dir
    finally:
        host.close()
    assert not os.path.exists(private_dir), "the uploaded py-spy's directory is removed on close"
    assert _ours_in_tmp() <= before
    assert "uploaded" in capture.notes[0]
    local = capture_stacks(demo.worker_pids, StackOptions(timeout_s=20))
    assert _groups(capture) == _groups(again) == _groups(local)


def test_process_left_stopped_by_the_capture_is_resumed_and_recorded(node: Node, sleeper_tree: subprocess.Popen,
                                                                     tmp_path: Path) -> None:
    victim, other = (c.pid for c in psutil.Process(sleeper_tree.pid).children())
    # A py-spy that stops its target and hangs (what a tracer dying attached leaves behind), on the node.
    fake = tmp_path / "py-spy"
    fake.write_text(f'#!/bin/sh\nfor a; do [ "$prev" = --pid ] && pid=$a; prev=$a; done\n'
                    f'if [ "$pid" = {victim} ]; then kill -STOP $pid; exec sleep 100000; fi\n'
                    f'exec {_real_pyspy()} "$@"\n')
    fake.chmod(0o755)
    conn = connect(node.options())
    try:
        capture = PyspyOnNode(path=str(fake), note="test py-spy").capture(
            conn, [victim, other], StackOptions(timeout_s=2.0), 30.0, lambda sent, received: None)
    finally:
        conn.close()
    assert process_state(victim) != "T", "triage must not leave its own stop behind"
    rows = {p.pid: p for p in capture.processes}
    assert rows[victim].resumed and "did not finish" in rows[victim].error.reason
    assert rows[victim].source == "kernel" and rows[victim].threads, "the kernel's view still arrives"
    assert f"resumed PID {victim} with SIGCONT: the capture had left it stopped (T)" in capture.notes
    assert not rows[other].resumed and rows[other].error is None
    assert rows[other].threads[0].wait_kind == "sleep"


def _real_pyspy() -> str:
    from triage_tui.host.ssh_agent_bundle import local_pyspy_binary

    found = local_pyspy_binary()
    assert found, "py-spy is a test dependency"
    return found


def test_stat_lines_with_a_hostile_command_name_parse_by_the_last_parenthesis() -> None:
    rest = " ".join(["S", "7", *["0"] * 17, "4242", "0"])  # state, ppid, ..., field 22 = start time
    stat_line = f"123 (a) T 1 (x) {rest}"
    parsed = ssh_agentless_stacks.parse_stat(stat_line)
    assert (parsed.state, parsed.name, parsed.ppid, parsed.start_ticks) == ("S", "a) T 1 (x", 7, 4242)
    assert ssh_agentless_stacks.parse_stat("") == ssh_agentless_stacks.ProcStat()
    script = ssh_agentless_stacks.capture_script("@@m@@ ", [5, 6], StackOptions(native=True, concurrency=1), "/o'dd/py-spy")
    assert "spy='/o'\"'\"'dd/py-spy'" in script and "flags='--native'" in script
    assert "job 5 & wait" in script and "job 6 & wait" in script  # one at a time with concurrency=1

"""The built-in incident watched through a ProxyJump hop gives what a local run gives: processes, memory
figures and stack groups (agent mode), and the same tree and RSS (agentless); the CLI faces with --ssh too."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from triage_tui.demo.incident import DemoInfo
from triage_tui.host.base import CollectOptions, StackOptions
from triage_tui.host.select import local_host
from triage_tui.host.ssh import SshHost

from .conftest import WORKERS, Node


def _settled(host, spec: str):
    """Two refreshes (deltas), then wait for the off-thread PSS reads and refresh again, as `report` does."""
    target = host.resolve([spec])
    host.collect(target, CollectOptions())
    host.wait_for_budgeted_reads(20.0)
    return host.collect(target, CollectOptions())


def _close_to(a: int, b: int, rel: float = 0.1) -> bool:
    return abs(a - b) <= rel * max(a, b)


def test_agent_mode_through_a_jump_matches_the_local_run(jumped: Node, demo: DemoInfo) -> None:
    remote, local = SshHost(jumped.options(known_hosts=None)), local_host()
    try:
        there, here = _settled(remote, str(demo.launcher_pid)), _settled(local, str(demo.launcher_pid))
        assert remote.mode == "agent"
        assert {(p.pid, p.name) for p in there.processes} == {(p.pid, p.name) for p in here.processes}
        assert len(there.processes) == WORKERS + 1
        for field in ("rss_sum_bytes", "pss_sum_bytes", "file_sum_bytes"):
            assert _close_to(getattr(there.memory.target, field), getattr(here.memory.target, field)), field
        assert there.memory.target.pss_covered == here.memory.target.pss_covered == WORKERS + 1
        assert {t.path for t in there.logs} == {t.path for t in here.logs} and demo.log_path in {t.path for t in there.logs}

        options = StackOptions(timeout_s=20)
        theirs, ours = remote.capture_stacks(demo.worker_pids, options), local.capture_stacks(demo.worker_pids, options)

        def groups(capture):
            return sorted((g.pids, g.odd_one_out, g.wait_kind) for g in capture.groups)

        assert groups(theirs) == groups(ours)
        assert any(g.odd_one_out and g.pids == (demo.odd_pid,) for g in theirs.groups)
    finally:
        remote.close()
        local.close()


def test_agentless_through_a_jump_sees_the_same_tree(jumped: Node, demo: DemoInfo) -> None:
    remote, local = SshHost(jumped.options(known_hosts=None), agentless=True), local_host()
    try:
        there, here = _settled(remote, str(demo.launcher_pid)), _settled(local, str(demo.launcher_pid))
    finally:
        remote.close()
        local.close()
    assert {(p.pid, p.ppid, p.name) for p in there.processes} == {(p.pid, p.ppid, p.name) for p in here.processes}
    for p in there.processes:
        assert _close_to(p.rss_bytes, here.process(p.pid).rss_bytes)
        assert _close_to(p.rss_file_bytes, here.process(p.pid).rss_file_bytes)


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "triage_tui", *argv], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize("mode", [[], ["--agentless"]], ids=["agent", "agentless"])
def test_report_face_with_ssh(jumped: Node, demo: DemoInfo, mode: list[str]) -> None:
    done = _cli("report", "--ssh", "node", "--ssh-config", str(jumped.env.config), *mode, str(demo.launcher_pid),
                "--format", "json", "--duration", "1", "--interval", "0.5")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(p["pid"] for p in report["processes"]) == sorted([demo.launcher_pid, *demo.worker_pids])


def test_stacks_face_with_ssh(jumped: Node, demo: DemoInfo) -> None:
    done = _cli("stacks", "--ssh", "node", "--ssh-config", str(jumped.env.config), str(demo.launcher_pid), "--json")
    assert done.returncode == 0, done.stderr
    capture = json.loads(done.stdout)
    assert any(g["odd_one_out"] and g["pids"] == [demo.odd_pid] for g in capture["groups"])


def test_faces_give_one_line_for_an_unknown_host_key(jumped: Node, demo: DemoInfo) -> None:
    jumped.env.known_hosts.write_text("")
    done = _cli("report", "--ssh", "node", "--ssh-config", str(jumped.env.config), str(demo.launcher_pid))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "unknown host key" in done.stderr and "--accept-new-host-key" in done.stderr

"""The sshd side going away mid-run: the snapshot says "disconnected since", the timeline keeps what it had,
the host reconnects, and the orphaned agent and its directory do not outlive the connection."""

from __future__ import annotations

import os
import subprocess

import psutil

from triage_tui.host.base import CollectOptions
from triage_tui.host.ssh import SshHost
from triage_tui.incident import Incident

from .conftest import Node, agent_processes

MAX_TICKS = 20  # reconnect attempts are bounded (backoff 0 in tests, so each tick tries once)


def _ssh_source(snapshot):
    return next(s for s in snapshot.sources if s.name == "ssh")


def test_session_killed_mid_run_then_reconnected(node: Node, sleeper_tree: subprocess.Popen) -> None:
    host = SshHost(node.options(), backoff_start_s=0.0)
    incident = Incident(host, host.resolve([str(sleeper_tree.pid)]))
    try:
        first = incident.tick().snapshot
        assert len(first.processes) == 3
        old_dir = host.agent_dir
        old_agent = psutil.Process(host._agent.agent_pid)  # type: ignore[union-attr]

        # kill the per-connection sshd processes (not the listener, and not the agent: the agent must
        # notice by itself that its channel is gone)
        for child in node.server.session_children():
            for proc in [child, *child.children(recursive=True)]:
                if proc.name() == "sshd" and proc.pid != old_agent.pid:
                    proc.kill()
        old_agent.wait(timeout=30)  # stdin hit EOF: the agent exits by itself
        assert not os.path.exists(old_dir) and agent_processes(old_dir) == []

        # the drop is noticed on the next refresh, which reconnects (backoff 0) and says so; a slower
        # reconnect would give "disconnected since" snapshots in between (the next test shows those)
        for _ in range(MAX_TICKS):
            again = incident.tick().snapshot
            if _ssh_source(again).status == "ok":
                break
            assert "disconnected since" in _ssh_source(again).detail and again.processes == ()
        assert _ssh_source(again).status == "ok" and len(again.processes) == 3
        assert "reconnected at" in _ssh_source(again).detail
        assert host.agent_dir != old_dir
        assert incident.timeline[0].snapshot is first and len(first.processes) == 3  # kept what it had
    finally:
        incident.close()


def test_listener_restarted_on_the_same_port(node: Node, sleeper_tree: subprocess.Popen) -> None:
    host = SshHost(node.options(), backoff_start_s=0.0, agentless=True)
    try:
        target = host.resolve([str(sleeper_tree.pid)])
        assert _ssh_source(host.collect(target, CollectOptions())).status == "ok"
        node.server.stop()
        down1 = host.collect(target, CollectOptions())
        down2 = host.collect(target, CollectOptions())
        assert _ssh_source(down1).status == _ssh_source(down2).status == "failing"
        # the outage is dated from when it began, not from the latest failed attempt
        since = _ssh_source(down1).detail.split(": ")[0]
        assert since.startswith("disconnected since") and _ssh_source(down2).detail.startswith(since)

        node.server.start()
        for _ in range(MAX_TICKS):
            back = host.collect(target, CollectOptions())
            if _ssh_source(back).status == "ok":
                break
        assert _ssh_source(back).status == "ok" and len(back.processes) == 3
    finally:
        host.close()

"""The sshd side going away mid-run: the snapshot says "disconnected since", the timeline keeps what it had,
the host reconnects, and the orphaned agent and its directory do not outlive the connection."""

from __future__ import annotations

import os
import subprocess

import psutil
import pytest

from triage_tui.host.base import CollectOptions
from triage_tui.host.ssh import SshHost
from triage_tui.incident import HostOutage, Incident

from .conftest import Node, agent_processes

MAX_TICKS = 20  # reconnect attempts are bounded (backoff 0 in tests, so each tick tries once)


def _ssh_source(snapshot):
    return next(s for s in snapshot.sources if s.name == "ssh")


def test_session_killed_mid_run_then_reconnected(node: Node, sleeper_tree: subprocess.Popen) -> None:
    host = SshHost(node.options(), backoff_start_s=0.0)
    incident = Incident(host, host.resolve([str(sleeper_tree.pid)]))
    try:
        first_moment = incident.tick()
        first = first_moment.snapshot
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
            try:
                again = incident.tick().snapshot
            except HostOutage as outage:
                # an outage is not "no process found": the last good moment stands and nothing is judged
                assert "disconnected since" in str(outage) and incident.latest is first_moment
                continue
            if _ssh_source(again).status == "ok":
                break
        assert _ssh_source(again).status == "ok" and len(again.processes) == 3
        assert "reconnected at" in _ssh_source(again).detail
        assert host.agent_dir != old_dir
        assert incident.timeline[0].snapshot is first and len(first.processes) == 3  # kept what it had
    finally:
        incident.close()


def test_an_outage_keeps_the_last_good_moment_and_freezes_the_hypotheses(node: Node, sleeper_tree: subprocess.Popen) -> None:
    host = SshHost(node.options(), backoff_start_s=0.0, agentless=True)
    incident = Incident(host, host.resolve([str(sleeper_tree.pid)]))
    try:
        good = incident.tick()
        judged = good.diagnosis.hypotheses
        node.server.stop()
        for _ in range(3):
            with pytest.raises(HostOutage, match="disconnected since"):
                incident.tick()
            assert incident.latest is good and incident.latest.diagnosis.hypotheses == judged  # frozen, "last good" too
            assert "disconnected since" in incident.outage
        assert all(o.id != "target-gone" for m in incident.timeline for o in m.diagnosis.observations)
        node.server.start()
        for _ in range(MAX_TICKS):
            try:
                back = incident.tick()
            except HostOutage:
                continue
            break
        assert len(back.snapshot.processes) == 3 and incident.outage == ""
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

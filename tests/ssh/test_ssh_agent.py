"""Agent mode against a real sshd: the node runs the same collectors as a local run, over one channel."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import zipfile

import psutil
import pytest

from triage_tui.host import ssh_agent_client
from triage_tui.host.agent import PROTOCOL_VERSION, AgentServer, make_node_host
from triage_tui.host.base import CollectOptions, StackOptions, TargetError
from triage_tui.host.ssh import SshHost
from triage_tui.host.ssh_agent_bundle import build_zip
from triage_tui.host.ssh_agent_client import AgentSession
from triage_tui.host.ssh_connect import SshError, connect
from triage_tui.model.snapshot import SCHEMA_VERSION
from triage_tui.model.unavailable import is_known

from .conftest import Node, agent_processes


def _rows(snapshot) -> dict[int, tuple]:
    return {p.pid: (p.ppid, p.name, p.cmdline) for p in snapshot.processes if not p.exited}


def test_agent_mode_sees_the_tree_a_local_run_sees_and_leaves_nothing(node: Node, sleeper_tree: subprocess.Popen) -> None:
    host = SshHost(node.options())
    local = make_node_host()
    try:
        target = host.resolve([str(sleeper_tree.pid)])
        remote = host.collect(target, CollectOptions())
        here = local.collect(local.resolve([str(sleeper_tree.pid)]), CollectOptions())
        assert host.mode == "agent"
        hello = host._agent.hello  # type: ignore[union-attr]
        # the node's own python3, never the target's interpreter (#19), isolated and without site-packages
        assert hello["python"] != psutil.Process(sleeper_tree.pid).exe() and hello["flags"] == {"isolated": 1, "no_site": 1}
        assert len(_rows(remote)) == 3 and _rows(remote) == _rows(here)
        for p in remote.processes:
            mine = here.process(p.pid)
            assert mine is not None and is_known(p.rss_bytes)
            assert abs(p.rss_bytes - mine.rss_bytes) <= 0.1 * mine.rss_bytes  # sleeping: RSS barely moves
        assert any(s.name == "ssh" and s.status == "ok" for s in remote.sources)

        kids = [c.pid for c in psutil.Process(sleeper_tree.pid).children()]
        capture = host.capture_stacks(kids, StackOptions(timeout_s=20))
        local_capture = local.capture_stacks(kids, StackOptions(timeout_s=20))
        assert [ps.error for ps in capture.processes] == [None, None]
        # the two identical sleeping children share one group, as they do locally
        assert sorted(tuple(g.pids) for g in capture.groups) == sorted(tuple(g.pids) for g in local_capture.groups)
        assert any(set(g.pids) == set(kids) for g in capture.groups)
        private_dir = host.agent_dir
        assert private_dir and os.path.isdir(private_dir)
        # nothing installed was imported on the node: psutil's C extension is not mapped into the agent
        with open(f"/proc/{hello['pid']}/maps") as f:
            assert "psutil" not in f.read()
    finally:
        host.close()
        local.close()
    assert not os.path.exists(private_dir)
    assert agent_processes(private_dir) == []


def test_private_directory_is_0700_and_gone_when_the_channel_closes(node: Node) -> None:
    conn = connect(node.options())
    try:
        session = AgentSession.start(conn, (), timeout_s=30)
        mode = stat.S_IMODE(os.stat(session.private_dir).st_mode)
        assert mode == 0o700
        assert session.hello["schema"] == SCHEMA_VERSION and os.path.exists(os.path.join(session.private_dir, "triage.zip"))
        agent = psutil.Process(session.hello["pid"])
        session.channel.close()  # no bye: the agent must notice EOF on stdin by itself
        agent.wait(timeout=30)
        assert not os.path.exists(session.private_dir)
    finally:
        conn.close()


def test_schema_mismatch_is_refused_with_a_clear_message(node: Node, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ssh_agent_client, "SCHEMA_VERSION", SCHEMA_VERSION + 100)
    closed: list[str] = []  # the directory of the session start() gave up on (other tests make their own)
    close = AgentSession.close
    monkeypatch.setattr(AgentSession, "close", lambda self, *a, **k: (closed.append(self.private_dir), close(self, *a, **k)))
    conn = connect(node.options())
    try:
        with pytest.raises(SshError, match="mismatch"):
            AgentSession.start(conn, (), timeout_s=30)
    finally:
        conn.close()
    assert closed and closed[0].startswith("/tmp/triage-agent.") and not os.path.exists(closed[0])


def test_hostile_targets_and_log_paths_are_data_not_shell(node: Node, sleeper_tree: subprocess.Popen, tmp_path) -> None:
    pwned = tmp_path / "pwned-agent"
    payload = f"$(touch {pwned})"
    host = SshHost(node.options())
    try:
        for spec in (f"name:{payload}", f"1; touch {pwned}", f"name:' \"; touch {pwned} #", f"`touch {pwned}`"):
            with pytest.raises(TargetError):
                host.resolve([spec])
        target = host.resolve([str(sleeper_tree.pid)])
        snapshot = host.collect(target, CollectOptions(logs=(f"/tmp/a b/{payload}';\"x.log",)))
        assert len(snapshot.processes) == 3
    finally:
        host.close()
    assert not pwned.exists()


def test_bundle_ships_collectors_without_the_ui() -> None:
    names = zipfile.ZipFile(io.BytesIO(build_zip())).namelist()
    assert "triage_tui/host/agent.py" in names and "triage_tui/model/codec.py" in names
    assert not any(n.startswith("triage_tui/ui/") or "__pycache__" in n for n in names)
    # the client side never travels: the node needs no paramiko, and no SSH code of ours runs there
    assert not any(n.startswith("triage_tui/host/ssh") or n.startswith("triage_tui/commands/") for n in names)


def test_agent_server_protocol_errors_are_answers_not_crashes(tmp_path) -> None:
    server = AgentServer(str(tmp_path))
    assert server.answer('{"id": 1, "op": "collect"}')["error"] == "hello first"
    bad = server.answer(json.dumps({"id": 2, "op": "hello", "schema": SCHEMA_VERSION + 1, "protocol": PROTOCOL_VERSION}))
    assert not bad["ok"] and "mismatch" in bad["error"] and bad["id"] == 2
    assert server.answer("not json")["kind"] == "protocol"
    good = server.answer(json.dumps({"id": 3, "op": "hello", "schema": SCHEMA_VERSION, "protocol": PROTOCOL_VERSION}))
    assert good["ok"] and good["dir"] == str(tmp_path)
    assert server.answer('{"id": 4, "op": "resolve", "specs": ["name:["]}')["kind"] == "target"
    assert server.answer('{"id": 5, "op": "frobnicate"}')["kind"] == "protocol"
    mappings = server.answer(json.dumps({"id": 6, "op": "mappings_by_file", "pid": os.getpid(), "targets": []}))
    assert any("python" in m["path"] for m in mappings["mappings"])
    gone = server.answer(json.dumps({"id": 7, "op": "mappings_by_file", "pid": 2**22 + 7, "targets": []}))
    assert gone["ok"] and "no such process" in gone["unavailable"]["unavailable"]


def test_pyspy_uploaded_when_the_node_has_none_and_gone_after(node: Node, sleeper_tree: subprocess.Popen,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    original = ssh_agent_client.probe_script
    # the node "has no py-spy": the probe looks on a PATH without it
    monkeypatch.setattr(ssh_agent_client, "probe_script", lambda: "PATH=/usr/bin:/bin; " + original())
    steps: list[str] = []
    host = SshHost(node.options(), progress=steps.append)
    try:
        target = host.resolve([str(sleeper_tree.pid)])
        # connecting shows its steps and what it costs, not a blank screen
        said = " | ".join(steps)
        for step in ("resolving node", "connecting to node", "host key of node verified", "authenticating as root",
                     "uploading the agent", "KB", "uploading py-spy", "MB"):
            assert step in said, said
        assert steps[-1] == "ready"
        snapshot = host.collect(target, CollectOptions())
        assert snapshot.host == "node"  # the name as the user typed it, as agentless says it too
        mode = next(x.detail for x in snapshot.sources if x.name == "mode")
        assert mode.startswith("agent mode: python ") and "ssh -G" in mode
        from triage_tui.ui.header import render_header

        header = render_header(snapshot, 2.0, snapshot.taken_at).plain
        assert header.startswith("triage node ") and "agent mode: python" in header
        uploaded = os.path.join(host.agent_dir, "py-spy")
        assert host._agent.hello["pyspy"] == uploaded  # type: ignore[union-attr]
        assert stat.S_IMODE(os.stat(uploaded).st_mode) == 0o700
        kid = psutil.Process(sleeper_tree.pid).children()[0].pid
        capture = host.capture_stacks([kid], StackOptions(timeout_s=20))
        assert capture.processes[0].error is None and capture.processes[0].threads
    finally:
        host.close()
    assert not os.path.exists(uploaded)


def test_pyspy_not_uploaded_to_another_architecture() -> None:
    from triage_tui.host.ssh_agent_bundle import ProbeResult, pyspy_upload_plan

    binary, note = pyspy_upload_plan(ProbeResult("riscv128", "", "python3"))
    assert binary is None and "riscv128" in note
    binary, note = pyspy_upload_plan(ProbeResult("x86_64", "/usr/bin/py-spy", "python3"))
    assert binary is None and "node's py-spy" in note


def test_capture_from_another_thread_during_refreshes_gets_its_own_answer(node: Node, sleeper_tree: subprocess.Popen) -> None:
    """The app captures stacks from one thread while the Incident ticks in another: one channel, no mixed replies."""
    from concurrent.futures import ThreadPoolExecutor

    host = SshHost(node.options())
    try:
        target = host.resolve([str(sleeper_tree.pid)])
        kids = [c.pid for c in psutil.Process(sleeper_tree.pid).children()]
        with ThreadPoolExecutor(max_workers=2) as pool:
            snapshots = pool.submit(lambda: [host.collect(target, CollectOptions()) for _ in range(5)])
            capture = pool.submit(host.capture_stacks, kids, StackOptions(timeout_s=20))
            assert sorted(capture.result(timeout=120).pids) == sorted(kids)
            assert all(len(s.processes) == 3 for s in snapshots.result(timeout=120))
    finally:
        host.close()


def test_node_without_a_usable_python_falls_back_to_agentless(node: Node, sleeper_tree: subprocess.Popen,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    original = ssh_agent_client.probe_script
    # the node "has no python3": the probe looks for an interpreter name nothing has
    monkeypatch.setattr(ssh_agent_client, "probe_script", lambda: original().replace("python3", "nopython9"))
    host = SshHost(node.options())
    try:
        snapshot = host.collect(host.resolve([str(sleeper_tree.pid)]), CollectOptions())
        assert host.mode == "agentless" and "no Python" in host.mode_notes[0]
        assert len(snapshot.processes) == 3
    finally:
        host.close()
    # (the probe is read-only: it makes no directory, so there is nothing to remove)


def test_agent_mode_reads_the_wait_for_graph_on_the_node(node: Node) -> None:
    from tests.realproc import wait_programs as programs

    with programs.started(programs.PIPE_CYCLE) as info:
        a, b = info["a"], info["b"]
        programs.settle_in([a, b], ["read"])
        host = SshHost(node.options())
        try:
            remote = host.collect(host.resolve([str(info["launcher"])]), CollectOptions())
            assert host.mode == "agent"
        finally:
            host.close()
        by_pid = {w.pid: w for w in remote.waits if w.tid == w.pid}
        assert remote.waits_source.error is None
        assert by_pid[a].kind == "pipe" and by_pid[a].peer_pids == (b,)
        assert by_pid[b].kind == "pipe" and by_pid[b].peer_pids == (a,)

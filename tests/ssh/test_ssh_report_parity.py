"""#16 acceptance over a real sshd: `report --ssh … --format json` in agent mode on a bare python3 (the agent
runs `-I -S`: no psutil, nothing installed) and in agentless mode both have PSS, CPU % and port probes for
the same tree, and agent mode finds a renamed worker (prctl PR_SET_NAME, as sglang's scheduler) by `name:`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import SshEnv, host_block

ROOT = Path(__file__).resolve().parents[2]
RENAMED = "sched::TP"  # + 5 hex digits per tree (comm is 15 bytes at most): a tree left by another test, or a
# zombie its parent's death left to a slow-reaping init, never matches this one's name

_SERVER = r"""
import ctypes, socket, subprocess, sys, threading, time
listener = socket.socket(); listener.bind(("127.0.0.1", 0)); listener.listen(8)
def serve():
    while True:
        conn, _ = listener.accept(); conn.close()
threading.Thread(target=serve, daemon=True).start()
worker = subprocess.Popen([sys.executable, "-c",
    "import ctypes, time\n"
    "ctypes.CDLL(None).prctl(15, b'RENAMED', 0, 0, 0)\n"
    "end = 0\n"
    "while True:\n"
    "    t = time.monotonic()\n"
    "    while time.monotonic() - t < 0.05: pass\n"
    "    time.sleep(0.05)\n"])
print(listener.getsockname()[1], worker.pid, flush=True)
time.sleep(600)
"""


@pytest.fixture
def server_tree() -> Iterator[tuple[subprocess.Popen, int, int, str]]:
    name = RENAMED + os.urandom(3).hex()[:5]
    proc = subprocess.Popen([sys.executable, "-c", _SERVER.replace("RENAMED", name)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port, worker = (int(x) for x in proc.stdout.readline().split())
        while True:  # the worker has renamed itself (its comm), not a timing guess
            with open(f"/proc/{worker}/comm") as f:
                if f.read().strip() == name:
                    break
        yield proc, port, worker, name
    finally:
        subprocess.run(["pkill", "-KILL", "-P", str(proc.pid)], check=False, timeout=30)
        proc.kill()
        proc.wait(timeout=30)


def _report(env: SshEnv, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "triage_tui", "report", "--ssh", "node", "--ssh-config", str(env.config),
                           "--duration", "4", "--interval", "1", "--format", "json", "--no-record", *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _node(env: SshEnv) -> None:
    server = env.sshd()
    env.trust(server)
    env.write_config(host_block("node", server, env.user_key, f"  UserKnownHostsFile {env.known_hosts}\n"))


def _figures(report: dict) -> dict[int, tuple]:
    return {p["pid"]: (p["cpu_percent"], p["pss_bytes"], p["name"]) for p in report["processes"]}


@pytest.mark.parametrize("agentless", [False, True])
def test_report_over_ssh_has_pss_cpu_and_port_probes(ssh_env: SshEnv, server_tree, agentless: bool) -> None:
    proc, port, worker, _ = server_tree
    _node(ssh_env)
    # --no-stacks: the capture a report takes by default pauses the worker, and its CPU % over the refresh
    # after it would read the pause, not the spinning this test is about
    report = _report(ssh_env, *(["--agentless"] if agentless else []), "--no-stacks", "--port", str(port), str(proc.pid))
    mode = " ".join(s["detail"] for s in report["sources"] if s["name"] in ("mode", "ssh"))
    assert ("agentless" in mode) == agentless, mode
    figures = _figures(report)
    assert {proc.pid, worker} <= set(figures)
    for pid in (proc.pid, worker):
        cpu, pss, _ = figures[pid]
        assert isinstance(cpu, (int, float)) and isinstance(pss, int) and pss > 0, (pid, figures[pid])
    assert figures[worker][0] > 0  # it spins half the time
    probes = {p["address"]: p["result"] for p in report["ports"]["probes"]}
    # a shell's /dev/tcp sees "accepted"; the agent probes like a client and sees this server close unanswered
    assert probes.get("127.0.0.1") in ("accepted", "no answer"), report["ports"]


def test_agent_mode_finds_a_renamed_worker_by_name(ssh_env: SshEnv, server_tree) -> None:
    proc, port, worker, name = server_tree
    _node(ssh_env)
    report = _report(ssh_env, f"name:^{name}$")
    assert [r["pid"] for r in report["target"]["roots"]] == [worker]
    assert _figures(report)[worker][2] == name
    # and the agent ran on the node's python3 without anything installed
    assert "-I -S" in " ".join(s["detail"] for s in report["sources"] if s["name"] == "mode")

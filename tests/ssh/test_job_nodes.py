"""A job on three "nodes": three real sshds on loopback, each in its own PID and mount namespace
(`unshare --pid --fork --mount-proc`) so that each node sees only its own processes, each running a piece
of the job; n3's piece has a rank that died. The multi-node faces name n3 and its dead rank, and a stopped
node is reported unreachable while the others still report."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import SshEnv, Sshd, host_block

PROGRAM = Path(__file__).with_name("job_programs.py")
RANKS = 3


def _node(env: SshEnv, role: str, ready: Path) -> Sshd:
    """An sshd that is PID 1 of its own namespace, with the job's piece (launcher + ranks) beside it."""
    piece = f"{sys.executable} {PROGRAM} {role} {RANKS} {ready} job_launcher >/dev/null 2>&1 &"
    prefix = ("unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", piece + ' exec "$@"', "sh")
    server = env.sshd(command_prefix=prefix)
    env.trust(server)
    return server


def _wait_ready(*files: Path) -> None:
    deadline = time.monotonic() + 60
    while not all(f.exists() for f in files):
        if time.monotonic() > deadline:
            pytest.fail(f"the job's pieces did not start: {[str(f) for f in files if not f.exists()]}")
        time.sleep(0.1)


@pytest.fixture
def job(ssh_env: SshEnv, tmp_path: Path) -> dict[str, Sshd]:
    roles = {"n1": "wait", "n2": "wait", "n3": "crash"}
    ready = {name: tmp_path / f"ready-{name}" for name in roles}
    servers = {name: _node(ssh_env, role, ready[name]) for name, role in roles.items()}
    known = f"  UserKnownHostsFile {ssh_env.known_hosts}\n"
    ssh_env.write_config("".join(host_block(name, s, ssh_env.user_key, known) for name, s in servers.items()))
    _wait_ready(*ready.values())
    return servers


def _report(env: SshEnv, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "triage_tui", "report", "--ssh", "n[1-3]", "--ssh-config", str(env.config),
         "name:job_launcher", "--format", "json", "--duration", "3", "--interval", "1", *extra],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240)


def test_the_node_and_rank_that_differ_are_the_jobs_top_cause(ssh_env: SshEnv, job: dict[str, Sshd]) -> None:
    done = _report(ssh_env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(n["node"] for n in report["nodes"]) == ["n1", "n2", "n3"]
    assert all(n["reachable"] for n in report["nodes"])
    assert report["nodes"][0]["node"] == "n3"  # the node that differs comes first
    top = report["hypotheses"][0]
    assert top["node"] == "n3" and top["id"] == "crashed-worker", top
    n3 = report["nodes"][0]
    zombies = [p["pid"] for p in n3["processes"] if p["state"] == "Z"]
    assert zombies and [r["pid"] for r in top["ranks"]] == zombies
    for node in report["nodes"]:  # each node saw only its own piece: a launcher and its ranks
        assert len(node["processes"]) == RANKS + 1, node["node"]


def test_a_stopped_node_is_unreachable_and_the_others_still_report(ssh_env: SshEnv, job: dict[str, Sshd]) -> None:
    job["n2"].stop()
    done = _report(ssh_env, "--node-timeout", "20")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    nodes = {n["node"]: n for n in report["nodes"]}
    assert not nodes["n2"]["reachable"] and "cannot connect" in nodes["n2"]["reason"], nodes["n2"]["reason"]
    assert nodes["n1"]["reachable"] and nodes["n3"]["reachable"]
    assert len(nodes["n1"]["processes"]) == RANKS + 1
    assert any(h["id"] == "node-unreachable" and h["node"] == "n2" for h in report["hypotheses"])

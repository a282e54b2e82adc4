"""A job on three "nodes": three real sshds on loopback, each in its own PID and mount namespace
(`unshare --pid --fork --mount-proc`) so that each node sees only its own processes, each running a piece
of the job; n3's piece has a rank that died. The multi-node faces name n3 and its dead rank, and a stopped
node is reported unreachable while the others still report."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.ui.test_tmux_demo import REPO, tmux, wait_for

from .conftest import Sshd, SshEnv, host_block

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


def _job(ssh_env: SshEnv, tmp_path: Path, roles: dict[str, str]) -> dict[str, Sshd]:
    ready = {name: tmp_path / f"ready-{name}" for name in roles}
    servers = {name: _node(ssh_env, role, ready[name]) for name, role in roles.items()}
    known = f"  UserKnownHostsFile {ssh_env.known_hosts}\n"
    ssh_env.write_config("".join(host_block(name, s, ssh_env.user_key, known) for name, s in servers.items()))
    _wait_ready(*ready.values())
    return servers


@pytest.fixture
def job(ssh_env: SshEnv, tmp_path: Path) -> dict[str, Sshd]:
    return _job(ssh_env, tmp_path, {"n1": "wait", "n2": "wait", "n3": "crash"})


def _report(env: SshEnv, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "triage_tui", "report", "--ssh", "n[1-3]", "--ssh-config", str(env.config),
         "name:job_launcher", "--format", "json", "--duration", "3", "--interval", "1", *extra],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240)


def test_the_node_and_rank_that_differ_are_the_jobs_top_cause(ssh_env: SshEnv, job: dict[str, Sshd],
                                                              tmp_path: Path) -> None:
    done = _report(ssh_env, "--record", str(tmp_path / "job-record"))
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
    # the record holds every node: one ordinary record each, which report --from reads back
    assert sorted(p.name for p in (tmp_path / "job-record").iterdir()) == ["n1.jsonl.gz", "n2.jsonl.gz", "n3.jsonl.gz"]
    again = subprocess.run([sys.executable, "-m", "triage_tui", "report", "--from", str(tmp_path / "job-record" / "n3.jsonl.gz"),
                            "--format", "json"], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert again.returncode == 0, again.stderr
    assert {p["pid"] for p in json.loads(again.stdout)["processes"]} == {p["pid"] for p in n3["processes"]}


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


def test_nodes_view_in_tmux_shows_the_differing_node_first_and_drills_in(ssh_env: SshEnv, job: dict[str, Sshd]) -> None:
    socket = f"triage-job-{uuid.uuid4().hex[:8]}"
    command = (f"cd {shlex.quote(str(REPO))} && {shlex.quote(sys.executable)} -m triage_tui --ssh 'n[1-3]' "
               f"--ssh-config {shlex.quote(str(ssh_env.config))} name:job_launcher --interval 1 --no-record;"
               " echo TRIAGE-EXITED rc=$?; exec sleep 600")
    tmux(socket, "new-session", "-d", "-s", "job", "-x", "120", "-y", "30", command)
    try:
        def screen() -> str:
            return tmux(socket, "capture-pane", "-p", "-t", "job")

        def rows() -> list[str]:
            return re.findall(r"^\s*(n[123])\s+(?!— )\S", screen(), re.M)  # table rows, not the detail's "n3 — …"

        def three_rows() -> list[str]:
            found = rows()
            return found if len(found) == 3 and "crashed-worker" in screen() else []

        order = wait_for(three_rows, "three node rows with n3's cause")
        assert order[0] == "n3", screen()
        assert "verdict: n3 differs" in screen()
        # under the table, the selected node as its own engine reads it: its causes with their weighted rows
        detail = wait_for(lambda: re.search(r"^\s*n3 — (agent|agentless), \d+ processes", screen(), re.M)
                          and re.search(r"^\s*1\. .*— (likely|possible) \d\.\d\d", screen(), re.M) and screen(),
                          "n3's detail")
        assert re.search(r"^\s*\+0\.\d\d ", detail, re.M), detail
        assert "? help" in detail and "q quit" in detail  # the key line, as in the single-node app
        tmux(socket, "send-keys", "-t", "job", "Down")
        wait_for(lambda: re.search(rf"^\s*{order[1]} — ", screen(), re.M), "the detail following the cursor")
        tmux(socket, "send-keys", "-t", "job", "Up")
        wait_for(lambda: re.search(r"^\s*n3 — ", screen(), re.M), "n3 selected again")
        tmux(socket, "send-keys", "-t", "job", "Enter")
        # n3's own app: its tree, with the dead rank a zombie
        try:
            wait_for(lambda: "1 Processes" in screen() and re.search(r"python[\d.]*\s+Z\s", screen()), "n3's full app")
        except AssertionError as exc:  # say what was on the screen instead
            raise AssertionError(f"{exc}; the screen:\n{screen()}") from None
        tmux(socket, "send-keys", "-t", "job", "q")
        wait_for(lambda: len(rows()) == 3, "the Nodes view again")
        tmux(socket, "send-keys", "-t", "job", "q")
        final = wait_for(lambda: "TRIAGE-EXITED" in screen() and screen(), "triage exiting")
        assert "TRIAGE-EXITED rc=0" in final and "Traceback" not in final
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, timeout=10)


def test_stacks_of_every_node_grouped_across_the_job_name_the_odd_rank_and_its_node(
        ssh_env: SshEnv, tmp_path: Path) -> None:
    _job(ssh_env, tmp_path, {"n1": "wait", "n2": "elsewhere", "n3": "wait"})
    done = subprocess.run(
        [sys.executable, "-m", "triage_tui", "stacks", "--ssh", "n[1-3]", "--ssh-config", str(ssh_env.config),
         "name:job_launcher", "--json", "--timeout", "30"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    n2 = next(n for n in report["nodes"] if n["node"] == "n2")
    odd_pid = max(p["pid"] for p in n2["processes"])  # the last rank started: the one that sleeps elsewhere
    assert report["stacks"]["odd_ranks"] == [{"node": "n2", "pid": odd_pid}], report["stacks"]
    odd = [g for g in report["stacks"]["groups"] if g["odd_one_out"]]
    assert odd and odd[0]["frames"][0]["function"] == "somewhere_else" and odd[0]["departs_at"]
    majority = max(report["stacks"]["groups"], key=lambda g: len(g["ranks"]))
    assert set(majority["nodes"]) == {"n1", "n2", "n3"}  # the ranks that agree, across every node

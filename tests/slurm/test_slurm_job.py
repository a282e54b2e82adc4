"""`triage report --slurm JOBID` on a real local Slurm: the job's node and the job's processes are found
through scontrol (show job, show hostnames, listpids), without a TARGET."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import Cluster

REPO = Path(__file__).resolve().parents[2]

JOB = """#!/bin/bash
export PYTHONPATH={repo}
srun --overlap -n1 {python} -c '
import time
from triage_tui.demo.incident import DemoIncident
info = DemoIncident(workers=3, weights_mb=8).start()
open("{info}", "w").write(" ".join(map(str, (info.launcher_pid, *info.worker_pids))))
time.sleep(600)
'
"""


def _wait_file(path: Path) -> str:
    deadline = time.monotonic() + 120
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"the job's demo did not start ({path})"
        time.sleep(0.2)
    return path.read_text()


@pytest.fixture
def demo_job(slurm: Cluster, tmp_path: Path) -> Iterator[tuple[str, set[int]]]:
    """A running job whose step runs the demo incident: (job id, the demo's PIDs)."""
    info = tmp_path / "demo-pids"
    job = slurm.sbatch(JOB.format(repo=REPO, python=sys.executable, info=info))
    try:
        slurm.wait_running(job)
        yield job, {int(x) for x in _wait_file(info).split()}
    finally:
        slurm.run("scancel", job)


def _report(slurm: Cluster, job: str, *extra: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "triage_tui", "report", "--slurm", job, *extra, "--format", "json",
                           "--duration", "2", "--interval", "1", "--no-record", "--node-timeout", "170"],
                          env=slurm.env, cwd=REPO, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_report_finds_the_jobs_node_and_processes(slurm: Cluster, demo_job: tuple[str, set[int]]) -> None:
    job, demo = demo_job
    report = _report(slurm, job)
    assert [n["node"] for n in report["nodes"]] == [slurm.node]
    node = report["nodes"][0]
    assert node["reachable"] and node["mode"] == "local", node["reason"]
    assert demo <= {p["pid"] for p in node["processes"]}  # the demo runs inside the job's step


def test_a_job_that_is_not_running_is_one_clear_line(slurm: Cluster) -> None:
    done = subprocess.run([sys.executable, "-m", "triage_tui", "report", "--slurm", "999999", "--no-record"],
                          env=slurm.env, cwd=REPO, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and "Traceback" not in done.stderr  # a runtime failure, not a usage error
    assert done.stderr.count("\n") == 1 and "999999" in done.stderr, done.stderr


def test_srun_starts_the_agent_inside_the_job_where_ssh_is_not_allowed(slurm: Cluster,
                                                                      demo_job: tuple[str, set[int]]) -> None:
    job, demo = demo_job
    node = _report(slurm, job, "--srun")["nodes"][0]
    assert node["reachable"] and node["mode"] == "srun agent" and "processes" in node, node.get("reason")
    assert demo <= {p["pid"] for p in node["processes"]}
    assert any(p["cpu_percent"] is not None and not isinstance(p["cpu_percent"], dict) for p in node["processes"])

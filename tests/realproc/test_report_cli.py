"""`triage report` and `triage demo --report` run as the user would, against the real demo incident."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import psutil
import pytest

from triage_tui.demo.incident import DemoInfo

FAST = ["--duration", "0.5", "--interval", "0.5"]


def triage(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "triage_tui", *argv], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": os.getcwd()})



def _pids(result: subprocess.CompletedProcess[str]) -> set[int]:
    assert result.returncode == 0, result.stderr
    return {p["pid"] for p in json.loads(result.stdout)["processes"]}


def test_pid_regex_and_port_targets_select_the_same_tree(demo: DemoInfo) -> None:
    expected = {demo.launcher_pid, *demo.worker_pids}
    by_pid = _pids(triage("report", str(demo.launcher_pid), "--format", "json", *FAST))
    by_port = _pids(triage("report", f":{demo.port}", "--format", "json", *FAST))
    # the workdir is unique to this demo: it is in the launcher's and the workers' command lines
    by_regex = _pids(triage("report", f"name:{re.escape(demo.workdir)}", "--format", "json", *FAST))
    assert by_pid == by_port == by_regex == expected


def test_json_report_carries_the_schema_fields(demo: DemoInfo) -> None:
    result = triage("report", f":{demo.port}", "--format", "json", "--log", demo.log_path, *FAST)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    for key in ("schema_version", "host", "taken_at", "processes", "memory", "logs", "ports", "gpus",
                "observations", "hypotheses"):
        assert key in data
    for key in ("pid", "ppid", "name", "cmdline", "state", "cpu_percent", "cpu_time_s", "threads", "rss_bytes",
                "pss_bytes", "uss_bytes", "rss_file_bytes", "rss_anon_bytes", "rss_shmem_bytes"):
        assert key in data["processes"][0]
    assert {p["result"] for p in data["ports"]["probes"]} <= {"refused", "error"}
    assert "refused" in {p["result"] for p in data["ports"]["probes"]}
    log = next(t for t in data["logs"] if t["path"] == demo.log_path)
    assert log["seconds_since_last_byte"] >= 0
    assert "100% Completed" in log["lines"][-1]["text"]


@pytest.mark.parametrize("argv, words, code", [
    (["report", "999999999"], "no process with PID", 1),  # runtime failure: nothing has that PID
    (["report", "name:("], "does not compile", 2),  # usage error: the spec is wrong as written
    (["report", "1", "--log", "/nonexistent/triage.log"], "cannot read --log", 1),
    (["report", "1", "--log", "/"], "cannot read --log", 1),
])
def test_bad_input_is_one_line_and_its_exit_code(argv: list[str], words: str, code: int) -> None:
    result = triage(*argv, *FAST)
    assert result.returncode == code
    assert words in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_demo_report_shows_the_incident_and_cleans_up() -> None:
    result = triage("demo", "--report", "--workers", "3", "--weights-mb", "16", "--duration", "1", "--interval", "0.5")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    launcher = int(re.search(r"launcher PID (\d+)", result.stderr).group(1))
    workers = [int(x) for x in re.search(r"\(PIDs ([\d, ]+)\)", result.stderr).group(1).split(", ")]
    rows = [line for line in out.splitlines() if re.match(r"\| \d+ \| \d+ \|", line)]
    assert {int(r.split("|")[1]) for r in rows} == {launcher, *workers}  # all N+1 processes listed
    assert all(r.split("|")[4].strip() in ("S", "R") for r in rows)  # a state for each
    assert "RSS overstates memory here" in out
    ratio = float(re.search(r"(\d+\.\d)× their PSS sum", out).group(1))
    assert ratio >= 2.0
    assert re.search(r"Silent for: \d+(\.\d)? (ms|s|min)\b", out)
    assert "**refused**" in out
    _, alive = psutil.wait_procs([psutil.Process(p) for p in [launcher, *workers] if psutil.pid_exists(p)], timeout=30)
    assert [p for p in alive if p.status() != psutil.STATUS_ZOMBIE] == []


def test_sigterm_to_triage_demo_removes_the_demo() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "triage_tui", "demo", "--report", "--workers", "2", "--weights-mb", "4",
         "--duration", "600", "--interval", "0.5"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    try:
        announced = proc.stderr.readline()  # printed once the demo is READY
        launcher = int(re.search(r"launcher PID (\d+)", announced).group(1))
        workers = [int(x) for x in re.search(r"\(PIDs ([\d, ]+)\)", announced).group(1).split(", ")]
        log_path = re.search(r"log (\S+);", announced).group(1)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        assert proc.returncode != 0
        _, alive = psutil.wait_procs([psutil.Process(p) for p in [launcher, *workers] if psutil.pid_exists(p)],
                                     timeout=30)
        assert [p for p in alive if p.status() != psutil.STATUS_ZOMBIE] == []
        assert not os.path.exists(os.path.dirname(log_path))
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stderr.close()

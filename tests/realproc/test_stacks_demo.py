"""The issue's "done when": `triage stacks` on the demo incident prints one group for the N-1 waiting workers
and calls out the one that differs, with its departing frame, in text and in JSON."""

from __future__ import annotations

import json
import subprocess
import sys

from triage_tui.demo.incident import DemoIncident

from .stack_programs import wait_all_blocked


def test_stacks_on_the_demo_incident_call_out_the_odd_rank() -> None:
    with DemoIncident(workers=4, weights_mb=8) as demo:
        info = demo.info
        # READY comes as each rank is about to block (its handshake is written just before its wait): on a busy
        # machine a rank can still be on its way there, and its stack would group apart from its peers'
        for pid in [info.launcher_pid, *info.worker_pids]:
            wait_all_blocked(pid)
        argv = [sys.executable, "-m", "triage_tui", "stacks", str(info.launcher_pid)]
        text = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        as_json = subprocess.run([*argv, "--json"], capture_output=True, text=True, timeout=120)
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr + as_json.stderr
    waiting = sorted(p for p in info.worker_pids if p != info.odd_pid)
    lines = text.stdout.splitlines()
    assert f"[1] 3 threads in 3 processes: PIDs {', '.join(map(str, waiting))}" in lines
    assert any(line.startswith(f"Odd one out: PID {info.odd_pid} departs at capture_cuda_graphs (worker.py:")
               for line in lines), text.stdout
    data = json.loads(as_json.stdout)
    odd = [g for g in data["groups"] if g["odd_one_out"]]
    assert [g["pids"] for g in odd] == [[info.odd_pid]]
    assert odd[0]["departs_at"].startswith("capture_cuda_graphs (worker.py:")
    assert data["groups"][0]["pids"] == waiting and not data["groups"][0]["odd_one_out"]
    launcher = next(g for g in data["groups"] if g["pids"] == [info.launcher_pid])
    assert not launcher["odd_one_out"]

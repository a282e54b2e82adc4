"""`triage report` end to end on the fake driver set to the reference incident.

A real launcher with eight real workers; the fake NVML reports each worker holding one GPU at
76017 MiB used and 0 %. The JSON report must list the eight GPUs and put each on its worker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from .conftest import MIB, REPO, USED_MIB, FakeDriver, GpuState, incident_state

pytestmark = pytest.mark.timeout(120)

LAUNCHER = 'pids=""; for i in 1 2 3 4 5 6 7 8; do sleep 600 & pids="$pids $!"; done; echo "ready$pids"; wait'


def test_report_json_lists_eight_gpus_each_with_its_worker(fake_driver: FakeDriver, gpu_state: GpuState) -> None:
    launcher = subprocess.Popen(["sh", "-c", LAUNCHER], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert launcher.stdout is not None
        words = launcher.stdout.readline().split()
        assert words[0] == "ready"
        workers = [int(w) for w in words[1:]]
        gpu_state.write(incident_state(workers))
        env = {**os.environ, "LD_LIBRARY_PATH": str(fake_driver.lib_dir), "FAKE_NVML_STATE": str(gpu_state.path),
               "PYTHONPATH": str(REPO)}
        done = subprocess.run(
            [sys.executable, "-m", "triage_tui", "report", str(launcher.pid), "--format", "json", "--duration", "1",
             "--no-record"],
            capture_output=True, text=True, env=env, cwd=REPO, timeout=90,
        )
        assert done.returncode == 0, done.stderr
        snapshot = json.loads(done.stdout)
    finally:
        os.killpg(launcher.pid, signal.SIGKILL)
        launcher.wait()
        if launcher.stdout:
            launcher.stdout.close()

    gpus = snapshot["gpus"]
    assert gpus["source"] == "nvml" and gpus["error"] is None
    assert len(gpus["devices"]) == 8
    for i, device in enumerate(gpus["devices"]):
        assert device["memory_used_bytes"] == USED_MIB * MIB
        assert device["utilization_gpu_percent"] == 0
        assert [(p["pid"], p["local_pid"]) for p in device["processes"]] == [(workers[i], workers[i])]
    rows = {p["pid"]: p for p in snapshot["processes"]}
    for i, pid in enumerate(workers):
        assert rows[pid]["gpus"] == [{"gpu_index": i, "used_bytes": (USED_MIB - 9) * MIB}]
    assert rows[launcher.pid]["gpus"] == []
    gpu_status = [s for s in snapshot["sources"] if s["name"] == "gpus"]
    assert gpu_status and gpu_status[0]["status"] in ("ok", "stale")

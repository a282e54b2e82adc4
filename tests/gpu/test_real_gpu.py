"""The collector on a real NVIDIA driver: the only GPU tests allowed to skip (no GPU here)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from triage_tui.model import from_data
from triage_tui.model.snapshot import GpuReport
from triage_tui.parse.nvidia_smi import QUERY_GPU_ARGS, parse_query_gpu_csv

from .conftest import HERE, REPO, real_nvml_installed

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.timeout(120),
    pytest.mark.skipif(not real_nvml_installed(), reason="needs a real NVIDIA GPU and driver (no libnvidia-ml here)"),
]


def test_real_driver_reads_every_gpu_without_missing_functions() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "FAKE_NVML_STATE")}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, str(HERE / "nvml_scenario.py")], input="poll\n", capture_output=True,
                          text=True, env=env, timeout=90)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["functions_not_found"] == []
    report = from_data(GpuReport, answer["report"])
    assert report.error is None and report.devices
    for device in report.devices:
        assert not device.lost and isinstance(device.name, str) and device.uuid.startswith("GPU-")
        assert isinstance(device.memory_total_bytes, int) and device.memory_total_bytes > 0
    if shutil.which("nvidia-smi"):
        smi = subprocess.run(["nvidia-smi", *QUERY_GPU_ARGS], capture_output=True, text=True, timeout=60)
        by_uuid = {d.uuid: d for d in parse_query_gpu_csv(smi.stdout)}
        for device in report.devices:
            # nvidia-smi prints MiB: NVML's total rounds to the same MiB figure
            assert by_uuid[device.uuid].memory_total_bytes // 2**20 == device.memory_total_bytes // 2**20

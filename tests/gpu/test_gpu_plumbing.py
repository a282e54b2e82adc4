"""The pieces under the GPU collector: the timed call thread, PID mapping, the nvidia-smi runner."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from triage_tui.collect.gpu_pids import GpuPidMapper
from triage_tui.collect.gpu_smi import NvidiaSmiCollector
from triage_tui.collect.nvml_calls import NvmlBusy, NvmlCallThread, NvmlTimeout, global_unavailable, translate

pytestmark = pytest.mark.timeout(60)


# ---------------------------------------------------------------- the call thread
def test_call_thread_returns_results_and_exceptions() -> None:
    calls = NvmlCallThread()
    assert calls.run("add", lambda a, b: a + b, 2, 3, timeout_s=5) == 5
    with pytest.raises(ZeroDivisionError):
        calls.run("div", lambda: 1 / 0, timeout_s=5)
    assert threading.current_thread().name != "nvml-calls"


def test_call_thread_times_out_refuses_while_stuck_and_recovers() -> None:
    calls = NvmlCallThread()
    release = threading.Event()
    ran_second = []
    with pytest.raises(NvmlTimeout):
        calls.run("nvmlDeviceGetPowerUsage", release.wait, timeout_s=0.05)
    assert calls.stuck() is not None and calls.stuck()[0] == "nvmlDeviceGetPowerUsage"
    with pytest.raises(NvmlBusy):  # not queued behind the stuck call
        calls.run("second", lambda: ran_second.append(1), timeout_s=5)
    release.set()
    assert calls.wait_idle(10)
    assert calls.stuck() is None and ran_second == []
    assert calls.run("third", lambda: "ok", timeout_s=5) == "ok"


def test_library_mismatch_error_is_translated_though_not_an_nvml_error() -> None:
    import pynvml

    err = translate("nvmlDeviceGetComputeRunningProcesses", pynvml.NVMLLibraryMismatchError("old lib"))
    assert err.code == 13
    assert "version mismatch" in global_unavailable(translate("nvmlInit", pynvml.NVMLError(18))).reason
    assert "nvidia-ml-py" in global_unavailable(ImportError("no pynvml")).reason


# ---------------------------------------------------------------- PID mapping on fake /proc trees
def _proc(root: Path, pid: int, nspid: str, kthreadd: bool = False, fd_target: str = "") -> None:
    d = root / str(pid)
    d.mkdir(parents=True, exist_ok=True)
    (d / "status").write_text(f"Name:\tx\nPid:\t{pid}\nNSpid:\t{nspid}\n")
    (d / "stat").write_text(f"{pid} ({'kthreadd' if kthreadd else 'x'}) S 0\n")
    if fd_target:
        (d / "fd").mkdir()
        os.symlink(fd_target, d / "fd" / "3")


def test_root_namespace_procfs_maps_a_container_process_by_its_host_pid(tmp_path: Path) -> None:
    _proc(tmp_path, 2, "2", kthreadd=True)
    _proc(tmp_path, 46294, "46294\t12")  # PID 12 inside its container
    mapper = GpuPidMapper(str(tmp_path))
    assert mapper.root_namespace
    assert mapper.local_pid(46294) == 46294
    assert mapper.local_pid(777) is None  # maps to nothing here


def test_container_procfs_cannot_see_host_pids(tmp_path: Path) -> None:
    """Our own /proc of a container: a /proc/P there is another process unless it holds the GPU."""
    _proc(tmp_path, 1, "1")
    _proc(tmp_path, 2, "2")  # no kthreadd: a nested namespace
    _proc(tmp_path, 40, "40", fd_target="/dev/nvidia0")  # the driver translated the PID: accepted
    _proc(tmp_path, 41, "41", fd_target="/tmp/unrelated")  # same number, not a GPU process
    mapper = GpuPidMapper(str(tmp_path))
    assert not mapper.root_namespace
    assert mapper.local_pid(40) == 40
    assert mapper.local_pid(41) is None
    assert mapper.local_pid(46294) is None


def test_real_proc_maps_our_own_pid() -> None:
    assert GpuPidMapper().local_pid(os.getpid()) == os.getpid()


# ---------------------------------------------------------------- the nvidia-smi runner
def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "nvidia-smi"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_smi_failure_gives_its_first_line(tmp_path: Path) -> None:
    smi = _script(tmp_path, "echo 'Failed to initialize NVML: Driver/library version mismatch'\nexit 18\n")
    report = NvidiaSmiCollector(binary=smi)()
    assert report.source == "nvidia-smi" and report.devices == ()
    assert report.error.reason == "nvidia-smi failed: Failed to initialize NVML: Driver/library version mismatch"


def test_smi_that_hangs_is_killed_at_its_timeout(tmp_path: Path) -> None:
    smi = _script(tmp_path, "exec sleep 60\n")
    report = NvidiaSmiCollector(binary=smi, timeout_s=0.2)()
    assert report.error is not None and "did not answer within 0.2 s" in report.error.reason


def test_smi_missing(tmp_path: Path) -> None:
    report = NvidiaSmiCollector(binary=str(tmp_path / "nope"))()
    assert report.error.reason == "nvidia-smi not found on PATH"


def test_smi_garbage_output_is_one_line(tmp_path: Path) -> None:
    report = NvidiaSmiCollector(binary=_script(tmp_path, "echo 'something else entirely'\n"))()
    assert report.error is not None and report.error.reason.startswith("unexpected nvidia-smi output")


def test_smi_process_query_failing_keeps_the_gpus(tmp_path: Path) -> None:
    smi = _script(tmp_path, 'case "$1" in --query-gpu=*) '
                            "echo '0, A100, GPU-a, 0000:01:00.0, 100, 50, 50, 1, 2, 30, 10.0, 20.0, 550.1';; "
                            "*) echo 'boom'; exit 3;; esac\n")
    (device,) = NvidiaSmiCollector(binary=smi)().devices
    assert device.memory_used_bytes == 50 * 1024 * 1024
    assert device.error is not None and "processes: nvidia-smi failed: boom" in device.error.reason

"""The GPU collector, through the unmodified nvidia-ml-py, against the fake libnvidia-ml."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from triage_tui.collect.gpu import join_gpus_to_processes
from triage_tui.model import Unavailable
from triage_tui.model.snapshot import GpuReport, ProcessInfo

from .conftest import MIB, RESERVED_MIB, TOTAL_MIB, USED_MIB, incident_state, real_nvml_installed

pytestmark = pytest.mark.timeout(120)

OLD_DRIVER_MISSING = {
    "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlDeviceGetGraphicsRunningProcesses_v3",
}


def test_reference_incident_eight_gpus_loaded_and_idle(scenario, gpu_state, workers) -> None:
    pids = workers(8)
    gpu_state.write(incident_state(pids))
    report = scenario().poll()
    assert report.source == "nvml" and report.error is None
    assert report.driver_version == "570.86.15" and report.cuda_driver_version == "12.8"
    assert [d.index for d in report.devices] == list(range(8))
    for i, device in enumerate(report.devices):
        assert device.name == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
        assert device.uuid == f"GPU-{i:08x}-1111-2222-3333-444455556666"
        assert device.pci_bus_id == f"00000000:{0x11 + i:02X}:00.0"
        assert device.memory_used_bytes == USED_MIB * MIB
        assert device.memory_total_bytes == TOTAL_MIB * MIB
        assert device.memory_reserved_bytes == RESERVED_MIB * MIB
        assert device.memory_free_bytes == (TOTAL_MIB - USED_MIB - RESERVED_MIB) * MIB
        assert device.utilization_gpu_percent == 0 and device.utilization_memory_percent == 0
        assert device.temperature_c == 34 + i
        assert device.power_draw_w == 31.0 and device.power_limit_w == 600.0
        assert not device.lost and device.error is None
        assert len(device.processes) == 1
        gp = device.processes[0]
        assert (gp.pid, gp.local_pid, gp.kind) == (pids[i], pids[i], "compute")
        assert gp.used_bytes == (USED_MIB - 9) * MIB
        assert gp.name == "cat"  # the worker exec'd cat; NVML read its name


def test_join_puts_each_gpu_on_its_worker(scenario, gpu_state, workers) -> None:
    pids = workers(8)
    gpu_state.write(incident_state(pids))
    report = scenario().poll()
    bystander = ProcessInfo(pid=1, ppid=0, name="init")
    rows = tuple(ProcessInfo(pid=p, ppid=1, name="worker") for p in pids) + (bystander,)
    joined = join_gpus_to_processes(rows, report)
    for i, row in enumerate(joined[:8]):
        assert [(h.gpu_index, h.used_bytes) for h in row.gpus] == [(i, (USED_MIB - 9) * MIB)]
    assert joined[8] is bystander  # holds no GPU: untouched


def test_power_not_supported_is_said_not_zero(scenario, gpu_state, workers) -> None:
    pids = workers(2)
    gpu_state.write(incident_state(pids, extra="gpu 1 fail power 3\ngpu 1 fail limit 3\n"))
    report = scenario().poll()
    assert report.devices[0].power_draw_w == 31.0
    for value in (report.devices[1].power_draw_w, report.devices[1].power_limit_w):
        assert isinstance(value, Unavailable) and value.reason == "not supported"
    assert report.devices[1].memory_used_bytes == USED_MIB * MIB  # the rest of the board still reads


@pytest.mark.parametrize("shape", ["handle", "all"])
def test_lost_gpu_in_either_shape_while_the_others_report(shape, scenario, gpu_state, workers) -> None:
    pids = workers(4)
    gpu_state.write(incident_state(pids, extra=f"gpu 2 fail {shape} 15\n"))
    report = scenario().poll()
    assert report.error is None
    lost = report.devices[2]
    assert lost.lost and lost.error is not None and "GPU is lost" in lost.error.reason
    assert isinstance(lost.memory_used_bytes, Unavailable)
    for i in (0, 1, 3):
        assert not report.devices[i].lost and report.devices[i].memory_used_bytes == USED_MIB * MIB


def test_a_gpu_lost_after_it_was_seen_keeps_its_name(scenario, gpu_state, workers) -> None:
    pids = workers(2)
    gpu_state.write(incident_state(pids))
    sc = scenario()
    assert sc.poll().devices[1].uuid == "GPU-00000001-1111-2222-3333-444455556666"
    gpu_state.write(incident_state(pids, extra="gpu 1 fail handle 15\n"))
    device = sc.poll().devices[1]
    assert device.lost and device.uuid == "GPU-00000001-1111-2222-3333-444455556666"


@pytest.mark.parametrize(("code", "words"), [
    (9, "NVIDIA driver not loaded"),
    (18, "driver/library version mismatch"),
])
def test_driver_problems_give_one_clear_line(code, words, scenario, gpu_state) -> None:
    gpu_state.write(f"init_error {code}\n")
    report = scenario().poll()
    assert report.devices == () and report.error is not None
    assert words in report.error.reason and report.error.hint


def test_driver_loaded_later_is_picked_up(scenario, gpu_state, workers) -> None:
    pids = workers(1)
    gpu_state.write("init_error 9\n")
    sc = scenario(init_retry_s=0.0)
    assert sc.poll().error is not None
    gpu_state.write(incident_state(pids))
    report = sc.poll()
    assert report.error is None and report.devices[0].memory_used_bytes == USED_MIB * MIB


def test_failed_init_is_not_retried_on_every_poll(scenario, gpu_state, workers) -> None:
    pids = workers(1)
    gpu_state.write("init_error 9\n")
    sc = scenario(init_retry_s=3600.0)
    assert sc.poll().error is not None
    gpu_state.write(incident_state(pids))
    assert sc.poll().error.reason == "NVIDIA driver not loaded"


def test_library_missing(scenario, gpu_state) -> None:
    if real_nvml_installed():
        pytest.skip("a real libnvidia-ml is installed here: 'library missing' cannot be staged")
    gpu_state.write("")
    report = scenario(lib="none").poll()
    assert report.devices == () and "libnvidia-ml.so.1 not found" in report.error.reason


def test_library_missing_falls_back_to_nvidia_smi(scenario, gpu_state, tmp_path: Path, workers) -> None:
    if real_nvml_installed():
        pytest.skip("a real libnvidia-ml is installed here: 'library missing' cannot be staged")
    pid = workers(1)[0]
    smi = tmp_path / "bin" / "nvidia-smi"
    smi.parent.mkdir()
    smi.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        "  --query-gpu=*) echo '0, NVIDIA RTX PRO 6000 Blackwell Server Edition, GPU-abc, 00000000:11:00.0, "
        "97887, 76017, 1335, 0, 0, 34, 31.20, 600.00, 570.86.15' ;;\n"
        f"  --query-compute-apps=*) echo 'GPU-abc, {pid}, 76008' ;;\n"
        "  *) exit 9 ;;\n"
        "esac\n"
    )
    smi.chmod(0o755)
    report = scenario(lib="none", with_smi=True, path_dirs=(smi.parent, Path("/usr/bin"), Path("/bin"))).poll()
    assert report.source == "nvidia-smi" and report.error is None
    assert report.driver_version == "570.86.15"
    (device,) = report.devices
    assert device.memory_used_bytes == USED_MIB * MIB and device.power_draw_w == 31.2
    assert [(p.pid, p.local_pid, p.used_bytes) for p in device.processes] == [(pid, pid, 76008 * MIB)]


def test_library_missing_and_no_nvidia_smi_says_both(scenario, gpu_state) -> None:
    if real_nvml_installed():
        pytest.skip("a real libnvidia-ml is installed here: 'library missing' cannot be staged")
    gpu_state.write("")
    report = scenario(lib="none", with_smi=True).poll()
    assert "libnvidia-ml.so.1 not found" in report.error.reason and "nvidia-smi" in report.error.reason


def test_pre_510_driver_falls_back_to_v1_memory_and_v2_process_calls(scenario, gpu_state, workers) -> None:
    pids = workers(2)
    gpu_state.write(incident_state(pids))
    answer = scenario(lib="old")
    report = answer.poll(allow_missing=OLD_DRIVER_MISSING)
    device = report.devices[0]
    # v1 "used" includes the reserved memory; reserved itself is not reported
    assert device.memory_used_bytes == (USED_MIB + RESERVED_MIB) * MIB
    assert isinstance(device.memory_reserved_bytes, Unavailable)
    assert [p.pid for p in device.processes] == [pids[0]] and device.error is None


def test_old_driver_missing_functions_are_recorded_once(scenario, gpu_state, workers) -> None:
    pids = workers(1)
    gpu_state.write(incident_state(pids))
    sc = scenario(lib="old")
    first = sc.poll_raw()["functions_not_found"]
    second = sc.poll_raw()["functions_not_found"]
    assert set(first) == OLD_DRIVER_MISSING and second == first


def test_state_rewritten_between_polls_shows_new_figures(scenario, gpu_state, workers) -> None:
    pids = workers(2)
    gpu_state.write(incident_state(pids))
    sc = scenario()
    assert sc.poll().devices[0].utilization_gpu_percent == 0
    gpu_state.write(incident_state(pids, used_mib=80000, util=100))
    second = sc.poll()
    assert second.devices[0].utilization_gpu_percent == 100
    assert second.devices[1].memory_used_bytes == 80000 * MIB


def test_pid_that_maps_to_nothing_is_kept(scenario, gpu_state, workers) -> None:
    pids = workers(1)
    ghost = 4_194_999  # above any pid_max: no such process here
    gpu_state.write(incident_state(pids, extra=f"gpu 0 proc compute {ghost} {MIB}\n"))
    report = scenario().poll()
    procs = {p.pid: p for p in report.devices[0].processes}
    assert procs[ghost].local_pid is None and procs[ghost].used_bytes == MIB
    assert procs[pids[0]].local_pid == pids[0]


def test_process_in_another_pid_namespace_maps_by_its_host_pid(scenario, gpu_state, tmp_path: Path) -> None:
    """NVML reports the root-namespace PID of a process that sees itself as PID 1."""
    code = ("import sys\n"
            "ns = [l.split()[1:] for l in open('/proc/self/status') if l.startswith('NSpid:')][0]\n"
            "print(' '.join(ns), flush=True)\n"
            "sys.stdin.read()\n")
    import sys

    child = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", sys.executable, "-c", code],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line:
            pytest.fail(f"unshare --pid failed (root is needed): {child.stderr.read() if child.stderr else ''}")
        nspid = [int(x) for x in line.split()]
        assert len(nspid) == 2 and nspid[1] == 1  # it is PID 1 in its own namespace
        host_pid = nspid[0]
        gpu_state.write(incident_state([host_pid]))
        report = scenario().poll()
        (gp,) = report.devices[0].processes
        assert gp.pid == host_pid and gp.local_pid == host_pid
        joined = join_gpus_to_processes((ProcessInfo(pid=host_pid, ppid=child.pid, name="python3",
                                                     nspid=tuple(nspid)),), report)
        assert joined[0].gpus[0].gpu_index == 0
    finally:
        child.kill()
        child.wait()
        for stream in (child.stdin, child.stdout, child.stderr):
            if stream:
                stream.close()


def test_a_hung_call_returns_within_the_timeout_and_later_recovers(scenario, gpu_state, workers, tmp_path) -> None:
    pids = workers(4)
    flag = tmp_path / "hang-flag"
    flag.write_text("hang")
    gpu_state.write(incident_state(pids, extra=f"gpu 2 hang power {flag}\n"))
    sc = scenario(timeout_s=0.5, budget_s=3.0)
    try:
        first = sc.poll()
        assert first.error is not None and "nvmlDeviceGetPowerUsage" in first.error.reason
        assert first.devices[0].error is None and first.devices[0].memory_used_bytes == USED_MIB * MIB
        hung = first.devices[2]
        assert hung.error is not None and "timed out" in hung.error.reason
        assert isinstance(hung.power_draw_w, Unavailable)
        assert hung.memory_used_bytes == USED_MIB * MIB  # read before the hang
        assert all(d.error is not None and "stale" in d.error.reason for d in first.devices[3:])

        # still blocked: no new call is started; the last good figures come back marked stale
        second = sc.poll()
        assert second.error is not None and second.error.reason.startswith("stale")
        assert [d.index for d in second.devices] == [0, 1, 2, 3]
        assert second.devices[0].memory_used_bytes == USED_MIB * MIB
        assert second.devices[0].error is not None and "stale" in second.devices[0].error.reason
        assert second.devices[0].read_at == first.devices[0].read_at
    finally:
        flag.unlink()
    assert sc.wait_idle()
    third = sc.poll()
    assert third.error is None and all(d.error is None for d in third.devices)
    assert third.devices[2].power_draw_w == 31.0


def test_report_round_trips_through_the_codec(scenario, gpu_state, workers) -> None:
    pids = workers(1)
    gpu_state.write(incident_state(pids, extra="gpu 0 fail temp 3\n"))
    report = scenario().poll()
    assert isinstance(report, GpuReport) and report.devices[0].temperature_c == Unavailable(
        "not supported", "this board or driver does not report it")

"""Observations from hand-built snapshot histories: each fact appears when its shape is there, not otherwise."""

from __future__ import annotations

import argparse
import dataclasses

from diagnose_cases import T0, GiB, proc, series

from triage_tui.collect.snapshot import port_of_specs
from triage_tui.commands.report import port_of
from triage_tui.diagnose.observations import Thresholds, expected_workers, observe_snapshots
from triage_tui.model.snapshot import (
    CgroupMemory,
    ExitedProcess,
    GpuDevice,
    GpuReport,
    KernelEvent,
    KernelReport,
    LogLine,
    LogTail,
    MemoryReport,
    PortProbe,
    PortReport,
    Snapshot,
    SystemMemory,
    TargetMemory,
)
from triage_tui.model.unavailable import Unavailable

TH = Thresholds(idle_after_s=5.0, silent_after_s=5.0)


def ids(history, th=TH) -> dict[str, list]:
    out: dict[str, list] = {}
    for o in observe_snapshots(history, th):
        out.setdefault(o.id, []).append(o)
    return out


def snaps(*process_rows, step=2.0, **kw) -> list[Snapshot]:
    return series([Snapshot(processes=tuple(rows), **kw) for rows in process_rows], step)


def test_all_idle_needs_no_cpu_growth_for_the_threshold() -> None:
    still = [[proc(1, cpu_time=5.0), proc(2, 1, cpu_time=3.0)] for _ in range(4)]
    found = ids(snaps(*still))
    assert found["all-idle"][0].figures["idle_s"] == 6.0
    assert "context switches stopped too" in found["all-idle"][0].text
    assert "all-idle" not in ids(snaps(*still[:2]))  # 2 s is not enough
    growing = [[proc(1, cpu_time=5.0 + i), proc(2, 1, cpu_time=3.0)] for i in range(4)]
    assert "all-idle" not in ids(snaps(*growing))


def test_context_switches_that_keep_growing_are_reported() -> None:
    rows = [[proc(1, cpu_time=5.0, ctx_voluntary=100 + 50 * i)] for i in range(4)]
    assert "150 voluntary context switches" in ids(snaps(*rows))["all-idle"][0].text


def test_one_busy_while_the_others_idle() -> None:
    rows = [[proc(1, cpu_time=1.0), proc(2, 1, cpu_time=1.0), proc(3, 1, cpu_time=1.0),
             proc(4, 1, cpu_time=10.0 + 2 * i, state="R")] for i in range(4)]
    found = ids(snaps(*rows))
    assert [o.pids for o in found["busy-process"]] == [(4,)]
    assert found["one-busy-others-idle"][0].pids == (4,)
    assert "all-idle" not in found


def test_expected_workers_missing_and_present() -> None:
    launcher = proc(10, cmdline=("python", "-m", "sglang.launch_server", "--tp-size", "8"))
    assert expected_workers([launcher]) == (8, "--tp-size 8", 10)
    assert expected_workers([proc(1, cmdline=("torchrun", "--nproc-per-node=4", "x.py"))])[0] == 4
    assert expected_workers([proc(1, cmdline=("vllm", "--tensor-parallel-size", "2"))])[0] == 2
    assert expected_workers([proc(1, cmdline=("python", "--tp-size", "1"))]) is None
    # a target's argv is not ours to trust: "²" passes str.isdigit() and int() raises on it
    assert expected_workers([proc(1, cmdline=("python", "--tp-size", "²"))]) is None
    few = ids(snaps([launcher, proc(11, 10)]))
    assert few["workers-missing"][0].figures == {"expected": 8, "found": 1}
    assert "all-alive" not in few
    full = ids(snaps([launcher, *[proc(20 + i, 10) for i in range(8)]]))
    assert "workers-present" in full and "all-alive" in full


def test_exited_worker_with_sigkill_and_zombie_and_stopped() -> None:
    gone = ExitedProcess(pid=7, name="worker", exit_code=-9)
    found = ids(snaps([proc(1), proc(8, 1, state="Z"), proc(9, 1, state="T")], exited=(gone,)))
    assert "exit code -9" in found["worker-exited"][0].text and "SIGKILL" in found["worker-exited"][0].text
    assert found["worker-sigkilled"][0].pids == (7,)
    assert found["zombie"][0].pids == (8,)
    assert found["stopped-process"][0].figures["pid_stopped"] == 9
    assert "none-stopped" not in found and "all-alive" not in found
    unknown = ids(snaps([proc(1)], exited=(ExitedProcess(pid=7, name="w"),)))
    assert "exit status unknown" in unknown["worker-exited"][0].text and "worker-sigkilled" not in unknown


def test_d_state_with_and_without_major_faults() -> None:
    found = ids(snaps([proc(1, state="D", major_faults_delta=420), proc(2, state="D", major_faults_delta=0)]))
    assert found["d-state-faults"][0].figures["major_faults"] == 420
    assert found["d-state"][0].pids == (2,)


def _log(silent, *lines, partial="", written_at=None):
    """A tail last written `silent` s ago; by default a short silence was written during the watch (after T0)."""
    at = written_at if written_at is not None else (T0 + 0.5 if silent < 30 else T0 - silent)
    return LogTail(path="/l", lines=tuple(LogLine(t, T0) for t in lines), partial=partial,
                   seconds_since_last_byte=silent, last_byte_at=at)


def test_a_line_older_than_the_watch_or_an_empty_file_is_no_activity() -> None:
    old = ids(snaps([proc(1)], [proc(1)], logs=(_log(5.0, "INFO ready", written_at=T0 - 5.0),)))
    assert "log-active" not in old and "progress-seen" not in old
    empty = ids(snaps([proc(1)], [proc(1)], logs=(_log(1.0, written_at=T0 + 1.0),)))
    assert "log-active" not in empty
    fresh = ids(snaps([proc(1)], [proc(1)], logs=(_log(1.0, "step 3 loss 0.2", written_at=T0 + 1.0),)))
    assert "log-active" in fresh


def test_progress_seen_needs_cpu_and_a_log_or_reads_advancing() -> None:
    log = (_log(1.0, "step 3 loss 0.2", written_at=T0 + 1.0),)
    working = ids(snaps([proc(1, cpu_time=1.0)], [proc(1, cpu_time=2.0)], logs=log))
    assert "progress-seen" in working
    assert "progress-seen" not in ids(snaps([proc(1, cpu_time=1.0)], [proc(1, cpu_time=1.0)], logs=log))
    assert "progress-seen" not in ids(snaps([proc(1, cpu_time=1.0)], [proc(1, cpu_time=2.0)]))


def test_log_silent_after_a_finished_progress_bar() -> None:
    found = ids(snaps([proc(1)], logs=(_log(60.0, "start", "Loading: 100% 64/64 [00:28<00:00]"),)))
    assert "silent for 60 s" in found["log-silent"][0].text and "progress bar at 100 %" in found["log-silent"][0].text
    assert "log-silent-after-load" in found
    partial = ids(snaps([proc(1)], logs=(_log(60.0, "start", partial="Loading:  40%|####  | 4/10 [00:01"),)))
    assert partial["log-silent"][0].figures["last_kind"] == "progress"
    assert "log-silent-after-load" not in partial


def test_log_last_line_a_traceback_or_a_timeout() -> None:
    tb = ids(snaps([proc(1)], logs=(_log(90.0, "Traceback (most recent call last):", "RuntimeError: boom"),)))
    assert tb["log-silent"][0].figures["last_kind"] == "traceback" and "log-traceback" in tb
    to = ids(snaps([proc(1)], logs=(_log(90.0, "wait timed out after 300 s"),)))
    assert to["log-silent"][0].figures["last_kind"] == "timeout"


def test_log_error_lines() -> None:
    lines = ("[E ProcessGroupNCCL.cpp:607] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)",
             "WARNING No available shared memory broadcast block found in 60 seconds",
             "RuntimeError: Timed out waiting for barrier after 1800 s (monitoredBarrier)",
             "Worker 3 exited with exit code 137")
    found = ids(snaps([proc(1)], logs=(_log(1.0, *lines),)))
    for oid in ("log-nccl-timeout", "log-shm-broadcast", "log-barrier-timeout", "log-worker-exited", "log-killed",
                "log-active"):
        assert oid in found, oid


def test_log_progress_moving_between_looks() -> None:
    frames = [[proc(1)], [proc(1)]]
    hist = series([Snapshot(processes=tuple(f), logs=(_log(0.5, partial=f"Loading {p}% 3/10 ["),)) for f, p in
                   zip(frames, (30, 40), strict=True)], 2.0)
    assert "log-progress" in ids(hist)
    still = series([Snapshot(processes=tuple(f), logs=(_log(0.5, partial="Loading 30% 3/10 ["),)) for f in frames], 2.0)
    assert "log-progress" not in ids(still)


def test_a_step_counter_rising_during_the_watch_is_progress_without_cpu() -> None:
    """A training loop that sleeps between steps (or waits on its GPU) shows no CPU and still moves."""
    def watch(*lines_per_look):
        return ids(series([Snapshot(processes=(proc(1, cpu_time=1.0),), logs=(_log(0.5, *lines, written_at=T0 + 1.0),))
                           for lines in lines_per_look], 2.0))
    moving = watch(("rank 0: step 79 loss 0.2",), ("rank 0: step 79 loss 0.2", "rank 0: step 80 loss 0.1"))
    assert "step 79 → 80" in moving["log-steps-advancing"][0].text
    assert "progress-seen" in moving
    # the same line again is a heartbeat, not a step; a counter of seconds is a watchdog, not a loop
    assert "log-steps-advancing" not in watch(("step 80",), ("step 80",))
    waited = watch(("still waiting, 30 s",), ("still waiting, 60 s",))
    assert "log-steps-advancing" not in waited and "progress-seen" not in waited
    assert "log-steps-advancing" not in watch(("step 80",))  # one look shows no rise


def test_ports() -> None:
    refused = ids(snaps([proc(1)], ports=PortReport(probes=(PortProbe(8000, "127.0.0.1", "refused"),))))
    assert refused["port-refused"][0].figures["port"] == 8000
    ok = ids(snaps([proc(1)], ports=PortReport(probes=(PortProbe(8000, "127.0.0.1", "accepted"),))))
    assert "port-accepting" in ok and "port-refused" not in ok


def _gpus(util, power, used=70 * GiB):
    return GpuReport(source="nvml", devices=(GpuDevice(index=0, memory_used_bytes=used, utilization_gpu_percent=util,
                                                       power_draw_w=power, power_limit_w=700.0),))


def test_gpu_loaded_idle_spin_and_compute() -> None:
    assert "gpu-loaded-idle" in ids(snaps([proc(1)], [proc(1)], gpus=_gpus(0, 80.0)))
    assert "gpu-loaded-idle" not in ids(snaps([proc(1)], gpus=_gpus(0, 80.0, used=100 << 20)))
    spin = ids(snaps([proc(1)], [proc(1)], gpus=_gpus(100, 90.0)))
    assert "spin-wait" in spin["gpu-spin"][0].text and "for 2.0 s" in spin["gpu-spin"][0].text
    assert "gpu-spin" not in ids(snaps([proc(1)], gpus=_gpus(100, 90.0)))  # one look live is not a run yet
    assert "gpu-spin" not in ids(snaps([proc(1)], [proc(1)], gpus=_gpus(100, 300.0)))  # 43 %: above the one threshold
    assert "gpu-computing" in ids(snaps([proc(1)], gpus=_gpus(99, 650.0)))


def test_rss_illusion_against_pss_and_ram() -> None:
    mem = MemoryReport(system=SystemMemory(total_bytes=449 * GiB, available_bytes=415 * GiB, used_bytes=33 * GiB),
                       target=TargetMemory(processes=9, rss_sum_bytes=3100 * GiB, pss_sum_bytes=40 * GiB, pss_covered=9,
                                           file_sum_bytes=3000 * GiB, anon_sum_bytes=17 * GiB))
    found = ids(snaps([proc(1)], memory=mem))
    text = found["rss-illusion"][0].text
    assert "3.0 TiB" in text and "PSS sum 40 GiB" in text and "449 GiB" in text
    assert "memory-ample" in found and "memory-low" not in found
    honest = dataclasses.replace(mem, target=TargetMemory(processes=1, rss_sum_bytes=10 * GiB, pss_sum_bytes=9 * GiB,
                                                          pss_covered=1))
    assert "rss-illusion" not in ids(snaps([proc(1)], memory=honest))
    # PSS not read yet (smaps_rollup denied or pending): its figure is absent, never a silent 0
    unread = dataclasses.replace(mem, target=dataclasses.replace(
        mem.target, pss_sum_bytes=Unavailable("permission denied"), pss_covered=0))
    figures = ids(snaps([proc(1)], memory=unread))["rss-illusion"][0].figures
    assert figures["total"] == 449 * GiB and "pss_sum" not in figures
    # PSS read for 3 of the 9: no RSS/PSS comparison (the sums are over different processes); RAM still
    partial = dataclasses.replace(mem, target=dataclasses.replace(mem.target, pss_sum_bytes=2 * GiB, pss_covered=3))
    found = ids(snaps([proc(1)], memory=partial))["rss-illusion"][0]
    assert "PSS sum" not in found.text and "pss_sum" not in found.figures and "449 GiB" in found.text


def test_real_memory_pressure() -> None:
    low = MemoryReport(system=SystemMemory(total_bytes=64 * GiB, available_bytes=1 * GiB),
                       cgroup=CgroupMemory(path="/job", current_bytes=99 << 20, max_bytes=100 << 20, oom_kills=2))
    found = ids(snaps([proc(1)], memory=low))
    assert "memory-low" in found and "cgroup-at-limit" in found and "oom-kill" in found
    unlimited = MemoryReport(cgroup=CgroupMemory(current_bytes=99 << 20, max_bytes=None))
    assert "cgroup-at-limit" not in ids(snaps([proc(1)], memory=unlimited))


def test_anon_memory_growing() -> None:
    hist = series([Snapshot(processes=(proc(1),), memory=MemoryReport(target=TargetMemory(anon_sum_bytes=i * GiB)))
                   for i in range(1, 5)], 2.0)
    assert "anon-growing" in ids(hist)


def test_kernel_events() -> None:
    ev = KernelEvent(kind="oom-kill", pid=5, text="Out of memory: Killed process 5 (python)")
    found = ids(snaps([proc(1)], kernel=KernelReport(events=(ev,))))
    assert found["oom-kill"][0].pids == (5,) and "no-oom-kill" not in found
    assert "no-oom-kill" in ids(snaps([proc(1)], kernel=KernelReport()))
    assert "no-oom-kill" not in ids(snaps([proc(1)], kernel=KernelReport(error=Unavailable("dmesg denied"))))


def test_compiler_children_with_cpu() -> None:
    rows = [proc(1), proc(2, 1, name="ptxas", cmdline=("/usr/local/cuda/bin/ptxas", "-arch=sm_90"), cpu_percent=97.0)]
    assert ids(snaps(rows))["compiler-running"][0].figures["name"] == "ptxas"
    rows[1] = dataclasses.replace(rows[1], cpu_percent=0.0)
    assert "compiler-running" not in ids(snaps(rows))


def test_runnable_but_starved() -> None:
    rows = [[proc(1, state="R", cpu_percent=4.0, ctx_involuntary_delta=900, cpu_time=1.0 + 0.1 * i)] for i in range(3)]
    assert "runnable-starved" in ids(snaps(*rows))


def test_one_look_uses_cpu_percent() -> None:
    one = Snapshot(processes=(proc(1, cpu_percent=0.0), proc(2, 1, cpu_percent=0.0)))
    assert "all-idle" not in ids([one])  # live: the first look proves nothing
    assert "one look" in ids([one], dataclasses.replace(TH, one_look=True))["all-idle"][0].text


def test_a_vanished_worker_named_by_an_oom_kill_line() -> None:
    ev = KernelEvent(kind="oom-kill", pid=7, text="Memory cgroup out of memory: Killed process 7 (python)")
    found = ids(snaps([proc(1)], exited=(ExitedProcess(pid=7, name="w"),), kernel=KernelReport(events=(ev,))))
    assert found["worker-oom-killed"][0].pids == (7,)
    other = KernelEvent(kind="oom-kill", pid=8, text="Out of memory: Killed process 8 (x)")
    assert "worker-oom-killed" not in ids(snaps([proc(1)], exited=(ExitedProcess(pid=7, name="w"),),
                                               kernel=KernelReport(events=(other,))))


def test_port_of_ignores_digits_int_cannot_read() -> None:
    assert port_of(argparse.Namespace(port=None, targets=[":²", ":8000"])) == 8000
    assert port_of_specs((":²",)) is None


def test_a_cgroup_oom_count_from_before_the_watch_is_not_this_jobs_kill() -> None:
    def mem(kills: int) -> MemoryReport:
        return MemoryReport(cgroup=CgroupMemory(path="/shared", current_bytes=1 << 20, max_bytes=1 << 30, oom_kills=kills))

    before = ids(series([Snapshot(processes=(proc(1),), memory=mem(3)) for _ in range(3)], 2.0))
    assert "oom-kill" not in before and "cgroup-oom-before" in before
    during = ids(series([Snapshot(processes=(proc(1),), memory=mem(k)) for k in (3, 3, 4)], 2.0))
    assert "1 new OOM kill" in during["oom-kill"][0].text


def test_a_kill_in_a_cgroup_below_the_trees_is_not_the_trees_oom() -> None:
    """The count is hierarchical: a sandbox's or a test's child cgroup below the tree's counts there too. The
    kernel line says where the task was; a task of the tree itself stays the tree's kill wherever it was."""
    def mem(kills: int) -> MemoryReport:
        return MemoryReport(cgroup=CgroupMemory(path="/sys/fs/cgroup/job", current_bytes=1 << 20,
                                                max_bytes=1 << 30, oom_kills=kills))

    def watch(pid: int) -> dict:
        kill = KernelEvent(kind="oom-kill", pid=pid, text="Killed process", at=T0 + 3.0, comm="python3",
                           cgroup="/job/sandbox-7")
        kernel = KernelReport(events=(kill,)) if pid == 1 else KernelReport(unseen=(kill,))
        return ids(series([Snapshot(processes=(proc(1),), memory=mem(k), kernel=kernel) for k in (3, 3, 4)], 2.0))
    other = watch(999)
    assert "oom-kill" not in other and "sandbox-7" in other["cgroup-oom-below"][0].text
    assert "cgroup-oom-below" not in watch(1)  # the tree's own process, moved below: its kill is the tree's

"""Hand-built snapshot sequences for the engine's tests: the reference incident and small cases."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from triage_tui.model.snapshot import (
    GpuDevice, GpuReport, LogLine, LogTail, MemoryReport, PortProbe, PortReport, ProcessInfo, Snapshot,
    SystemMemory, TargetMemory,
)
from triage_tui.model.stacks import Frame, ProcessStacks, StackCapture, ThreadStack

GiB = 1 << 30
GB = 10**9
T0 = 1_800_000_000.0
LAUNCHER = 46294
WORKERS = tuple(range(46433, 46441))
LOAD_BAR = "Loading safetensors checkpoint shards: 100% Completed | 64/64 [00:28<00:00,  2.27it/s]"


def proc(pid: int, ppid: int = 1, cpu_time: float = 1.0, **kw) -> ProcessInfo:
    kw.setdefault("state", "S")
    kw.setdefault("cpu_percent", 0.0)
    kw.setdefault("ctx_voluntary", 100)
    kw.setdefault("read_bytes", 0)
    return ProcessInfo(pid=pid, ppid=ppid, name=kw.pop("name", f"p{pid}"), cpu_time_s=cpu_time, **kw)


def series(frames: Sequence[Snapshot], step: float = 10.0) -> list[Snapshot]:
    """Snapshots `step` seconds apart, starting at T0."""
    return [dataclasses.replace(s, taken_at=T0 + i * step, interval_s=step) for i, s in enumerate(frames)]


def incident_snapshot(silent_s: float) -> Snapshot:
    """One look at the reference incident (incident.md), the log silent for `silent_s`."""
    launcher = proc(LAUNCHER, 1, 28.0, name="python3", state="S",
                    cmdline=("python3", "-m", "sglang.launch_server", "--model-path", "/models/kimi", "--tp-size", "8",
                             "--port", "8000"), rss_bytes=927 * 10**6)
    workers = [proc(pid, LAUNCHER, 400.0, name="sglang::scheduler", rss_bytes=425 * GB, rss_file_bytes=423 * GB,
                    rss_anon_bytes=2 * GB) for pid in WORKERS]
    target = TargetMemory(processes=9, rss_sum_bytes=8 * 425 * GB + 927 * 10**6, pss_sum_bytes=40 * GiB,
                          anon_sum_bytes=17 * GiB, file_sum_bytes=8 * 423 * GB, pss_covered=9)
    system = SystemMemory(total_bytes=449 * GiB, used_bytes=33 * GiB, free_bytes=130 << 20,
                          available_bytes=415 * GiB, buff_cache_bytes=416 * GiB, shared_bytes=694 << 20,
                          swap_total_bytes=0, swap_used_bytes=0)
    log = LogTail(path="/tmp/sglang.log", lines=(LogLine("WARNING: some harmless import warning", T0),
                                                  LogLine(LOAD_BAR, T0)),
                  seconds_since_last_byte=silent_s)
    gpus = GpuReport(source="nvml", devices=tuple(
        GpuDevice(index=i, memory_used_bytes=76017 << 20, memory_total_bytes=97887 << 20, utilization_gpu_percent=0,
                  power_draw_w=80.0, power_limit_w=600.0) for i in range(8)))
    ports = PortReport(probes=(PortProbe(8000, "127.0.0.1", "refused"), PortProbe(8000, "::1", "refused")))
    return Snapshot(host="node", processes=(launcher, *workers), memory=MemoryReport(system=system, target=target),
                    logs=(log,), ports=ports, gpus=gpus)


def incident_series(ticks: int = 32, step: float = 10.0) -> list[Snapshot]:
    return series([incident_snapshot(silent_s=i * step) for i in range(ticks)], step)


def stack_capture(at: float, pids_frames: dict[int, Sequence[Frame]], status: str = "idle") -> StackCapture:
    procs = tuple(
        ProcessStacks(pid=pid, threads=(ThreadStack(pid=pid, tid=pid, name="MainThread", status=status,
                                                    frames=tuple(frames)),))
        for pid, frames in pids_frames.items())
    return StackCapture(taken_at=at, pids=tuple(pids_frames), processes=procs)


BARRIER = (Frame("barrier", "torch/distributed/distributed_c10d.py", 4000),
           Frame("capture_graphs", "sglang/model_runner.py", 900), Frame("main", "sglang/scheduler.py", 50))
ODD = (Frame("sleep", "time", 0), Frame("init_drafter", "sglang/eagle_worker.py", 120),
       Frame("capture_graphs", "sglang/model_runner.py", 905), Frame("main", "sglang/scheduler.py", 50))


def incident_stacks(at: float, odd_pid: int = WORKERS[3]) -> StackCapture:
    frames = {pid: (ODD if pid == odd_pid else BARRIER) for pid in WORKERS}
    return stack_capture(at, frames)

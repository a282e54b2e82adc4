"""A deterministic incident shaped like the reference one (docs/incident.md), for tests and screenshots.

`SampleIncident` has the Incident surface the app uses (tick, timeline, changelog, latest,
capture_stacks, host, target, close) and hands out prebuilt Snapshots in order, so every
render of the app is reproducible. It reads nothing from this machine.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from typing import Optional

from ..host.base import CollectOptions, StackOptions
from ..model.snapshot import (
    CgroupMemory,
    GpuDevice,
    GpuHolding,
    GpuProcess,
    GpuReport,
    Hypothesis,
    LogLine,
    LogTail,
    MemoryReport,
    Observation,
    PortProbe,
    PortReport,
    ProcessInfo,
    Snapshot,
    SourceStatus,
    SystemMemory,
    Target,
    TargetMemory,
    TargetRoot,
)
from ..model.stacks import Frame, ProcessStacks, StackCapture, StackGroup, ThreadStack

GiB = 1024**3
MiB = 1024**2
START = 1_780_000_000.0  # a fixed epoch: renders are identical run to run
LAUNCHER = 46294
WORKERS = tuple(range(46433, 46441))
HOST = "gpu-node-07"


def _processes(t: int, busy: bool) -> tuple[ProcessInfo, ...]:
    cpu = 95.0 if busy else 0.0
    procs = [
        ProcessInfo(
            pid=LAUNCHER, ppid=1, name="python3",
            cmdline=("python3", "-m", "sglang.launch_server", "--model-path", "/models/kimi-k2.5-int4", "--tp-size", "8", "--port", "8000"),
            state="S", thread_states={"S": 41}, cpu_percent=0.0, cpu_time_s=28.0, threads=41, wchan="do_epoll_wait",
            rss_bytes=927 * MiB, rss_anon_bytes=600 * MiB, rss_file_bytes=327 * MiB, rss_shmem_bytes=0, pss_bytes=610 * MiB,
            uss_bytes=590 * MiB,
        ),
        ProcessInfo(
            pid=46432, ppid=LAUNCHER, name="python3", cmdline=("python3", "-c", "from multiprocessing.resource_tracker import main"),
            state="S", thread_states={"S": 1}, cpu_percent=0.0, cpu_time_s=0.1, threads=1, wchan="pipe_read",
            rss_bytes=18 * MiB, rss_anon_bytes=9 * MiB, rss_file_bytes=9 * MiB, rss_shmem_bytes=0, pss_bytes=11 * MiB, uss_bytes=9 * MiB,
        ),
    ]
    for rank, pid in enumerate(WORKERS):
        procs.append(ProcessInfo(
            pid=pid, ppid=LAUNCHER, name=f"sglang::scheduler_TP{rank}",
            cmdline=(f"sglang::scheduler_TP{rank}",), state="R" if busy else "S",
            thread_states={"R": 1, "S": 63} if busy else {"S": 64}, cpu_percent=cpu, cpu_time_s=30.0 + t * (1.9 if busy else 0.0),
            threads=64, wchan="0" if busy else "futex_wait_queue",
            rss_bytes=425 * 10**9, rss_anon_bytes=3 * GiB, rss_file_bytes=425 * 10**9 - 3 * GiB - 600 * MiB,
            rss_shmem_bytes=600 * MiB, pss_bytes=int(52.5 * GiB), uss_bytes=int(3.1 * GiB),
            gpus=(GpuHolding(rank, 76017 * MiB),),
        ))
    return tuple(procs)


def _gpus(busy: bool) -> GpuReport:
    devices = tuple(
        GpuDevice(
            index=i, name="NVIDIA RTX PRO 6000 Blackwell", memory_total_bytes=97887 * MiB,
            memory_used_bytes=76017 * MiB, memory_free_bytes=21870 * MiB, utilization_gpu_percent=38 if busy else 0,
            utilization_memory_percent=0, temperature_c=41, power_draw_w=180.0 if busy else 86.0, power_limit_w=600.0,
            processes=(GpuProcess(pid=WORKERS[i], local_pid=WORKERS[i], used_bytes=76017 * MiB, name=f"sglang::scheduler_TP{i}"),),
        )
        for i in range(8)
    )
    return GpuReport(source="nvml", driver_version="575.57.08", cuda_driver_version="12.9", devices=devices)


LOG_LINES = (
    ("/usr/lib/python3/dist-packages/torch/cuda/__init__.py:61: FutureWarning: pynvml is deprecated", "warning"),
    ("[2026-05-28 14:02:11] server_args=ServerArgs(model_path='/models/kimi-k2.5-int4', tp_size=8, port=8000)", "info"),
    ("[2026-05-28 14:02:19 TP0] Load weight begin. avail mem=94.12 GB", "info"),
    ("[2026-05-28 14:02:19 TP3] Using FlashInfer backend", "info"),
    ("Loading safetensors checkpoint shards:  50% Completed | 32/64 [00:14<00:13,  2.31it/s]", "info"),
    ("Loading safetensors checkpoint shards: 100% Completed | 64/64 [00:28<00:00,  2.27it/s]", "info"),
)


def _logs(t: int, now: float, silent_since: float) -> tuple[LogTail, ...]:
    n = min(len(LOG_LINES), 3 + t)
    lines = tuple(LogLine(text, silent_since - 30 + i * 5, level) for i, (text, level) in enumerate(LOG_LINES[:n]))
    return (LogTail(
        path="/var/log/sglang/server.log", source="stdout of PID 46294", lines=lines, size_bytes=48213,
        seconds_since_last_byte=max(0.0, now - silent_since), last_byte_at=silent_since,
    ),)


def _diagnosis(now: float, idle: bool) -> tuple[tuple[Observation, ...], tuple[Hypothesis, ...]]:
    obs = [
        Observation("port-refused", "port 8000 refuses connections on 127.0.0.1 and ::1", "ports", now, {"port": 8000}),
        Observation("rss-illusion", "RSS sum 3.4 TB is 8.1x the PSS sum 421 GiB: pages are shared, not used twice", "memory", now,
                    {"rss_sum": 3.4e12, "pss_sum": 421 * GiB}),
        Observation("no-oom", "415 GiB available of 449 GiB; no OOM-killer line", "memory", now),
        Observation("gpu-idle", "8 GPUs at 76017 MiB, 0 % utilisation", "gpus", now),
    ]
    if not idle:
        return tuple(obs), ()
    obs[:0] = [
        Observation("all-idle", "all 10 processes asleep at 0 % CPU for 300 s", "processes", now, pids=WORKERS),
        Observation("log-silent", "log silent 300 s after 'Loading safetensors checkpoint shards: 100%'", "logs", now),
    ]
    hyps = (
        Hypothesis("collective-mismatch", "Workers wait on a collective one rank never joins", "likely", 0.82,
                   for_=("all 10 processes asleep at 0 % CPU for 300 s", "log silent 300 s after weight loading 100%",
                         "8 GPUs hold memory at 0 % utilisation"),
                   against=("no stack capture yet",),
                   next_check="capture every worker's stack at once (S) and look for the rank that differs"),
        Hypothesis("deadlock", "A lock or IPC wait inside the launcher", "possible", 0.41,
                   for_=("launcher asleep in epoll_wait",), next_check="stacks of the launcher (s on its row)"),
        Hypothesis("still-loading", "Still loading weights", "unlikely", 0.08,
                   against=("no CPU, no I/O, no log for 300 s",), next_check="watch read_bytes for growth"),
        Hypothesis("oom", "Out of memory", "ruled out", 0.0,
                   against=("415 GiB available", "RSS sum overstates memory 8.1x (shared file pages)"), next_check=""),
        Hypothesis("crashed-worker", "A worker crashed", "ruled out", 0.0, against=("all 8 workers alive",)),
    )
    return tuple(obs), hyps


def build_snapshots(count: int = 40, interval_s: float = 2.0, busy_for: int = 3) -> list[Snapshot]:
    """`count` refreshes `interval_s` apart: the first `busy_for` still loading, then silent."""
    snaps = []
    silent_since = START + busy_for * interval_s
    for t in range(count):
        now = START + t * interval_s + 240.0  # the log has been silent a while when triage starts
        busy = t < busy_for
        observations, hypotheses = _diagnosis(now, idle=t >= busy_for)
        snaps.append(Snapshot(
            host=HOST, taken_at=now, interval_s=interval_s,
            target=Target(specs=(":8000",), roots=(TargetRoot(LAUNCHER, "--port 8000 in its command line"),)),
            processes=_processes(t, busy),
            memory=MemoryReport(
                system=SystemMemory(total_bytes=449 * GiB, used_bytes=33 * GiB, free_bytes=130 * MiB, available_bytes=415 * GiB,
                                    buff_cache_bytes=416 * GiB, shared_bytes=694 * MiB, swap_total_bytes=0, swap_used_bytes=0),
                cgroup=CgroupMemory(path="/system.slice/sglang.service", version=2, current_bytes=431 * GiB, max_bytes=None, oom_kills=0),
                target=TargetMemory(processes=10, rss_sum_bytes=8 * 425 * 10**9 + 945 * MiB, pss_sum_bytes=421 * GiB,
                                    uss_sum_bytes=int(25.4 * GiB), anon_sum_bytes=int(24.6 * GiB),
                                    file_sum_bytes=8 * (425 * 10**9 - 3 * GiB - 600 * MiB), shmem_sum_bytes=4800 * MiB, pss_covered=10),
            ),
            logs=_logs(t, now, silent_since if not busy else now),
            ports=PortReport(probes=(PortProbe(8000, "127.0.0.1", "refused", "Connection refused"),
                                     PortProbe(8000, "::1", "refused", "Connection refused"))),
            gpus=_gpus(busy),
            observations=observations, hypotheses=hypotheses,
            sources=(SourceStatus("processes", "ok", 12.0), SourceStatus("memory", "ok", 40.0), SourceStatus("logs", "ok", 1.0),
                     SourceStatus("ports", "ok", 2.0), SourceStatus("gpus", "ok", 9.0), SourceStatus("kernel", "stale", 2000.0, "dmesg slow")),
        ))
    return snaps


def build_capture(pids: Sequence[int], taken_at: float) -> StackCapture:
    """Seven ranks in all_reduce, the odd one (TP5) blocked in a broadcast from the drafter's init."""
    common = (Frame("all_reduce", "torch/distributed/distributed_c10d.py", 2501), Frame("capture", "sglang/srt/model_executor/cuda_graph_runner.py", 310),
              Frame("event_loop_normal", "sglang/srt/managers/scheduler.py", 640))
    odd = (Frame("broadcast", "torch/distributed/distributed_c10d.py", 2390), Frame("init_draft_worker", "sglang/srt/speculative/eagle_worker.py", 88),
           Frame("event_loop_normal", "sglang/srt/managers/scheduler.py", 640))
    workers = [p for p in pids if p in WORKERS]
    odd_pid = WORKERS[5] if WORKERS[5] in workers else None
    same = tuple(p for p in workers if p != odd_pid)
    groups = []
    if same:
        groups.append(StackGroup("g1", common, tuple((p, p) for p in same), same, "collective", "all_reduce"))
    if odd_pid is not None:
        groups.append(StackGroup("g2", odd, ((odd_pid, odd_pid),), (odd_pid,), "collective", "broadcast", odd_one_out=True,
                                 departs_at="init_draft_worker (sglang/srt/speculative/eagle_worker.py:88)"))
    processes = tuple(
        ProcessStacks(pid=p, name=f"pid {p}", threads=(ThreadStack(p, p, "MainThread", "idle", odd if p == odd_pid else common, "collective"),))
        for p in pids
    )
    return StackCapture(taken_at=taken_at, pids=tuple(pids), processes=processes, groups=tuple(groups), duration_ms=820.0)


class SampleHost:
    name = HOST

    def close(self) -> None:
        pass


class SampleIncident:
    """Hands out `snapshots` in order (the last one repeats); records what the app asked of it."""

    def __init__(self, snapshots: Sequence[Snapshot], preload: int = 0, gate: Optional[threading.Event] = None) -> None:
        self.host = SampleHost()
        self.target = snapshots[0].target
        self.options = CollectOptions(interval_s=snapshots[0].interval_s)
        self._pending = list(snapshots)
        self.timeline: list[Snapshot] = [self._pending.pop(0) for _ in range(min(preload, len(self._pending)))]
        self.changelog: list[str] = ["14:06:51 collective-mismatch possible → likely: 8/8 ranks idle 300 s after weights loaded",
                                     "14:06:51 oom → ruled out: 415 GiB available"]
        self.latest_stacks: Optional[StackCapture] = None
        self.ticks = 0
        self.captures: list[tuple[int, ...]] = []
        self.gate = gate  # when set, tick() blocks until the gate opens (a slow source)
        self.closed = False

    @property
    def latest(self) -> Optional[Snapshot]:
        return self.timeline[-1] if self.timeline else None

    def tick(self) -> Snapshot:
        if self.gate is not None:
            self.gate.wait(30)
        self.ticks += 1
        snap = self._pending.pop(0) if self._pending else self.timeline[-1]
        if self.latest_stacks is not None:
            snap = dataclasses.replace(snap, stacks=self.latest_stacks)
        self.timeline.append(snap)
        return snap

    def target_pids(self) -> tuple[int, ...]:
        latest = self.latest
        return tuple(p.pid for p in latest.processes if not p.exited) if latest else ()

    def capture_stacks(self, pids: Optional[Sequence[int]] = None, options: StackOptions = StackOptions()) -> StackCapture:
        chosen = tuple(pids) if pids else self.target_pids()
        self.captures.append(chosen)
        taken_at = self.latest.taken_at if self.latest else START
        self.latest_stacks = build_capture(chosen, taken_at)
        return self.latest_stacks

    def close(self) -> None:
        self.closed = True

"""A deterministic host shaped like the reference incident (docs/incident.md), for tests and screenshots.

`FixtureHost` is a Host that serves prebuilt raw Snapshots in order (the last one repeats) with a
frozen clock: every render of the app is reproducible, and the real engine runs over them, so the
hypotheses every Pilot test, SVG snapshot and README screenshot shows are the engine's, never
written by hand. It reads nothing from this machine and signals nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Optional

from ..model.mappings import FileMapping
from ..model.options import CollectOptions, StackOptions
from ..model.snapshot import (
    CgroupMemory,
    GpuDevice,
    GpuHolding,
    GpuProcess,
    GpuReport,
    LogLine,
    LogTail,
    MemoryReport,
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
from ..model.unavailable import Unavailable

GiB = 1024**3
MiB = 1024**2
START = 1_780_000_000.0  # a fixed epoch: renders are identical run to run
LAUNCHER = 46294
WORKERS = tuple(range(46433, 46441))
HOST = "gpu-node-07"


def _processes(t: int, busy: bool, busy_for: int) -> tuple[ProcessInfo, ...]:
    cpu = 95.0 if busy else 0.0
    worked = min(t, busy_for) * 1.9  # CPU seconds a worker used while busy: constant once it idles
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
            thread_states={"R": 1, "S": 63} if busy else {"S": 64}, cpu_percent=cpu, cpu_time_s=30.0 + worked,
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


def build_snapshots(count: int = 40, interval_s: float = 2.0, busy_for: int = 3) -> list[Snapshot]:
    """`count` refreshes `interval_s` apart: the first `busy_for` still loading, then silent."""
    snaps = []
    silent_since = START + busy_for * interval_s
    for t in range(count):
        now = START + t * interval_s + 240.0  # the log has been silent a while when triage starts
        busy = t < busy_for
        snaps.append(Snapshot(
            host=HOST, taken_at=now, interval_s=interval_s,
            target=Target(specs=(":8000",), roots=(TargetRoot(LAUNCHER, "--port 8000 in its command line"),)),
            processes=_processes(t, busy, busy_for),
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


WEIGHTS = "/models/kimi-k2.5-int4/model-00001-of-00064.safetensors"


def fixture_mappings(pid: int) -> tuple[FileMapping, ...]:
    """What `m` shows for a worker: the weights file, shared by all eight, then its own heap."""
    return (FileMapping(WEIGHTS, 3, 9 * GiB, 9 * GiB, GiB + 128 * MiB, 9 * GiB, 0, 0, shared_by=len(WORKERS)),
            FileMapping("[anonymous]", 412, 3 * GiB, 3 * GiB, 3 * GiB, 0, 3 * GiB, 0))


class FixtureHost:
    """A Host over `snapshots`: collect() hands them out in order (the last one repeats), clock() is
    the time of the one handed out last. Counts what the app asked of it, for the tests."""

    def __init__(self, snapshots: Sequence[Snapshot], gate: Optional[threading.Event] = None) -> None:
        self.name = snapshots[0].host
        self.target = snapshots[0].target
        self.options = CollectOptions(interval_s=snapshots[0].interval_s)
        self._snapshots = list(snapshots)
        self._next = 0
        self.ticks = 0
        self.captures: list[tuple[int, ...]] = []
        self.mapping_reads: list[int] = []
        self.gate = gate  # when set, collect() blocks until the gate opens (a slow source)
        self.closed = False

    def clock(self) -> float:
        """The frozen clock: the time of the latest snapshot served (nothing ever reads as stale)."""
        return self._snapshots[max(0, self._next - 1)].taken_at

    def resolve(self, specs: Sequence[str], port: Optional[int] = None) -> Target:
        return self.target

    def collect(self, target: Target, options: CollectOptions) -> Snapshot:
        if self.gate is not None:
            self.gate.wait(30)
        self.ticks += 1
        snapshot = self._snapshots[min(self._next, len(self._snapshots) - 1)]
        self._next = min(self._next + 1, len(self._snapshots))
        return snapshot

    def capture_stacks(self, pids: Sequence[int], options: StackOptions = StackOptions()) -> StackCapture:
        self.captures.append(tuple(pids))
        return build_capture(tuple(pids), self.clock())

    def mappings_by_file(self, pid: int, target_pids: Sequence[int]) -> tuple[FileMapping, ...] | Unavailable:
        self.mapping_reads.append(pid)
        if pid in WORKERS:
            return fixture_mappings(pid)
        return Unavailable(f"/proc/{pid}/smaps: permission denied", "run triage as root or as the target's user")

    def wait_for_budgeted_reads(self, timeout_s: float = 10.0) -> bool:
        return True

    def close(self) -> None:
        self.closed = True

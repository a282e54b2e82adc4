"""Hand-built Moments for the record tests: a demo-shaped hang and a long, mostly-still incident.

The diagnoses here are written by hand on purpose: the record must carry whatever the engine said,
so these tests do not depend on the engine's rules (tests/ui and the scenarios run the real engine).

The demo shape follows docs/incident.md scaled down: a launcher and 8 tensor-parallel workers, all
asleep at 0 % CPU, each with a large RSS that is mostly shared file pages (RSS sum far above the
machine's RAM, PSS sum and system "used" small), the log silent after the weight-loading bar, and
a stack capture where 7 ranks wait in all_reduce and rank 3 waits somewhere else.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Optional

from triage_tui.model.diagnosis import Diagnosis, Evidence, Hypothesis, Observation
from triage_tui.model.moment import Moment
from triage_tui.model.snapshot import (
    GpuDevice,
    GpuReport,
    LogLine,
    LogTail,
    MemoryReport,
    ProcessInfo,
    Snapshot,
    SystemMemory,
    Target,
    TargetMemory,
    TargetRoot,
)
from triage_tui.model.stacks import Frame, ProcessStacks, StackCapture, StackGroup, ThreadStack
from triage_tui.model.unavailable import Unavailable

GiB = 1024**3
T0 = 1_790_000_000.0
LAUNCHER = 46294
WORKERS = tuple(range(46440, 46448))
ODD_RANK_PID = WORKERS[3]
WORKER_RSS = 4 * GiB + 123 * 1024 * 1024  # per worker; 8 of them exceed the 24 GiB machine
WORKER_PSS = 300 * 1024 * 1024
SYSTEM_TOTAL = 24 * GiB
SYSTEM_USED = 3 * GiB
SYSTEM_AVAILABLE = 20 * GiB


def worker(pid: int, i: int, tick: int) -> ProcessInfo:
    return ProcessInfo(
        pid=pid, ppid=LAUNCHER, name=f"sglang::scheduler_TP{i}", cmdline=("sglang::scheduler_TP" + str(i),),
        state="S", thread_states={"S": 40}, cpu_percent=0.0, cpu_time_s=28.0 + i, threads=40,
        wchan="futex_wait_queue", rss_bytes=WORKER_RSS, rss_anon_bytes=200 * 1024 * 1024,
        rss_file_bytes=WORKER_RSS - 200 * 1024 * 1024, rss_shmem_bytes=0,
        pss_bytes=WORKER_PSS if tick > 0 else Unavailable("not read yet"),
        uss_bytes=200 * 1024 * 1024 if tick > 0 else Unavailable("not read yet"),
        pss_read_at=1000.0 + tick - (tick % 5) if tick > 0 else Unavailable("not read yet"),
    )


def odd_capture(at: float) -> StackCapture:
    collective = (Frame("wait", "torch/distributed/distributed_c10d.py", 2501), Frame("all_reduce", "sglang/tp.py", 88))
    odd = (Frame("recv", "multiprocessing/connection.py", 411), Frame("init_drafter", "sglang/eagle.py", 52))
    processes = tuple(
        ProcessStacks(pid=pid, name=f"TP{i}", threads=(ThreadStack(pid=pid, tid=pid, status="idle",
                      frames=odd if pid == ODD_RANK_PID else collective,
                      wait_kind="ipc" if pid == ODD_RANK_PID else "collective"),))
        for i, pid in enumerate(WORKERS))
    majority = tuple(p for p in WORKERS if p != ODD_RANK_PID)
    groups = (
        StackGroup(key="all_reduce", frames=collective, members=tuple((p, p) for p in majority), pids=majority,
                   wait_kind="collective", wait_frame="all_reduce (sglang/tp.py:88)"),
        StackGroup(key="init_drafter", frames=odd, members=((ODD_RANK_PID, ODD_RANK_PID),), pids=(ODD_RANK_PID,),
                   wait_kind="ipc", wait_frame="recv (multiprocessing/connection.py:411)", odd_one_out=True,
                   departs_at="init_drafter (sglang/eagle.py:52)"),
    )
    return StackCapture(taken_at=at, pids=WORKERS, processes=processes, groups=groups, duration_ms=840.0)


def demo_hypotheses(tick: int) -> tuple[Hypothesis, ...]:
    hang_status = "likely" if tick >= 3 else "possible"
    return (
        Hypothesis("collective-mismatch", "Ranks wait in a collective that rank 3 never joins", hang_status,
                   0.8 if tick >= 3 else 0.5,
                   for_=("7 of 8 ranks wait in all_reduce; rank 3 (PID 46443) waits in recv at init_drafter",
                         "all 9 processes idle for 120 s"),
                   next_check="press s: capture stacks again to see whether rank 3 moves",
                   evidence=(Evidence("stacks-different-collectives", 0.7 if tick >= 3 else 0.4,
                                      "7 of 8 ranks wait in all_reduce; rank 3 (PID 46443) waits in recv at init_drafter"),
                             Evidence("all-idle", 0.1, "all 9 processes idle for 120 s"))),
        Hypothesis("oom", "Out of memory", "ruled out", 0.0,
                   against=(f"system available {SYSTEM_AVAILABLE // GiB} GiB of {SYSTEM_TOTAL // GiB} GiB",
                            f"RSS sum {8 * WORKER_RSS / GiB:.1f} GiB is the RSS illusion: PSS sum "
                            f"{8 * WORKER_PSS / GiB:.1f} GiB"),
                   next_check=""),
    )


def demo_observations(tick: int) -> tuple[Observation, ...]:
    at = T0 + 2.0 * tick
    observations = (Observation("all-idle", "all 9 processes idle", "processes", at, {"idle_s": 2 * tick + 120}),)
    if tick > 0:
        observations += (Observation("rss-illusion", "RSS sum far above RAM: shared pages", "memory", at,
                                     {"rss_sum": 8 * WORKER_RSS, "pss_sum": 8 * WORKER_PSS}),)
    return observations


def demo_change(tick: int) -> tuple[str, ...]:
    if tick in (1, 3):
        return (f"t+{tick * 2}s collective-mismatch {'possible' if tick == 1 else 'possible → likely'}",)
    return ()


def demo_moment(tick: int, capture: Optional[StackCapture] = None) -> Moment:
    """The demo at `tick`: its snapshot, a hand-written diagnosis (see the module doc), the capture then."""
    diagnosis = Diagnosis(demo_observations(tick), demo_hypotheses(tick), demo_change(tick),
                          idle_since={pid: T0 - 120.0 for pid in WORKERS})
    return Moment(demo_snapshot(tick), diagnosis, capture)


def demo_snapshot(tick: int) -> Snapshot:
    at = T0 + 2.0 * tick
    rows = (ProcessInfo(pid=LAUNCHER, ppid=1, name="python3", state="S", cpu_percent=0.0, rss_bytes=927 * 10**6),)
    rows += tuple(worker(pid, i, tick) for i, pid in enumerate(WORKERS))
    lines = (LogLine("Loading safetensors checkpoint shards: 100% 64/64", T0 - 300.0),)
    if tick >= 2:
        lines += tuple(LogLine(f"heartbeat {k}", T0 + 2.0 * k, "warning") for k in range(2, tick + 1))
    return Snapshot(
        host="gpu-node-7", taken_at=at, interval_s=2.0,
        target=Target(specs=(str(LAUNCHER),), roots=(TargetRoot(LAUNCHER, "PID 46294"),)),
        processes=rows,
        memory=MemoryReport(
            system=SystemMemory(total_bytes=SYSTEM_TOTAL, used_bytes=SYSTEM_USED + tick * 4096,
                                available_bytes=SYSTEM_AVAILABLE, swap_total_bytes=0, swap_used_bytes=0),
            target=TargetMemory(processes=9, rss_sum_bytes=8 * WORKER_RSS, pss_sum_bytes=8 * WORKER_PSS,
                                pss_covered=8 if tick > 0 else 0),
            smaps_spent_ms=1.5 * (tick % 3)),
        logs=(LogTail(path="/var/log/sglang.log", lines=lines[-5:], size_bytes=4096 + tick,
                      seconds_since_last_byte=float(tick)),),
        gpus=GpuReport(source="nvml", devices=tuple(GpuDevice(index=i, memory_used_bytes=76017 * 1024**2,
                                                               utilization_gpu_percent=0) for i in range(8))),
    )


def record_demo(recorder, ticks: int = 6, capture_at: int = 3) -> tuple[list[Moment], StackCapture, list]:
    """Feed `recorder` the demo as Incident.tick would; return the Moments, the capture, the changes."""
    moments: list[Moment] = []
    changes: list[tuple[float, str]] = []
    capture = odd_capture(T0 + 2.0 * capture_at - 1.0)
    current: Optional[StackCapture] = None
    for tick in range(ticks):
        if tick == capture_at:
            recorder.write_stacks(capture)
            current = capture
        moment = demo_moment(tick, current)
        recorder.write_moment(moment)
        moments.append(moment)
        changes += [(moment.taken_at, line) for line in moment.diagnosis.changes]
    return moments, capture, changes


def many_processes(n: int, tick: int, base: Optional[Snapshot] = None) -> Snapshot:
    """A snapshot of n mostly-still processes where a few figures move each tick (as a hung server's do)."""
    if base is None:
        rows = tuple(ProcessInfo(pid=1000 + j, ppid=1000, name=f"worker-{j}", cmdline=("python", "-m", "w", str(j)),
                                 state="S", cpu_percent=0.0, cpu_time_s=10.0, threads=12, rss_bytes=GiB + j,
                                 pss_bytes=GiB // 8, pss_read_at=1000.0) for j in range(n))
        return Snapshot(host="node", taken_at=T0, interval_s=2.0, processes=rows,
                        memory=MemoryReport(system=SystemMemory(total_bytes=SYSTEM_TOTAL, used_bytes=SYSTEM_USED)))
    moved = tick % n
    rows = tuple(dataclasses.replace(p, cpu_time_s=p.cpu_time_s + 0.01) if p.pid == 1000 + moved else p
                 for p in base.processes)
    return dataclasses.replace(base, taken_at=T0 + 2.0 * tick, processes=rows,
                               memory=dataclasses.replace(base.memory, smaps_spent_ms=float(tick % 7)))


def record_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def file_size(path: Path) -> int:
    return os.path.getsize(path)

"""What recording costs per refresh: CPU to encode and write one snapshot, and bytes on disk.

    python bench/record_overhead.py [PROCESSES] [REFRESHES]

Three cases: every row still (a hung server's table), a few rows moving, and every row moving
a few figures (CPU time, context switches, PSS age), which is the worst a live refresh does.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
import time

from triage_tui.model.codec import to_json
from triage_tui.model.moment import Moment
from triage_tui.model.snapshot import MemoryReport, ProcessInfo, Snapshot, SystemMemory
from triage_tui.record.recorder import Recorder


def table(n: int) -> Snapshot:
    rows = tuple(ProcessInfo(pid=1000 + j, ppid=1000, name=f"worker-{j}", cmdline=("python", "-m", "w", str(j)),
                             state="S", cpu_percent=0.0, cpu_time_s=10.0, threads=12, rss_bytes=2**30 + j,
                             pss_bytes=2**27, pss_read_at=1000.0, ctx_voluntary=100) for j in range(n))
    return Snapshot(host="node", taken_at=1.0, interval_s=2.0, processes=rows,
                    memory=MemoryReport(system=SystemMemory(total_bytes=2**35, used_bytes=2**32)))


def step(s: Snapshot, tick: int, moving: int) -> Snapshot:
    rows = list(s.processes)
    for j in range(moving):
        k = (tick * 7 + j) % len(rows)
        p = rows[k]
        rows[k] = dataclasses.replace(p, cpu_time_s=p.cpu_time_s + 0.01, ctx_voluntary=p.ctx_voluntary + 3,
                                      pss_read_at=1000.0 + tick - (tick % 5))
    return dataclasses.replace(s, taken_at=s.taken_at + 2.0, processes=tuple(rows),
                               memory=dataclasses.replace(s.memory, smaps_spent_ms=float(tick % 7)))


def measure(n: int, refreshes: int, moving: int) -> None:
    snapshots = [table(n)]
    for tick in range(1, refreshes + 1):
        snapshots.append(step(snapshots[-1], tick, moving))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.jsonl")
        recorder = Recorder(path)
        recorder.write_moment(Moment(snapshots[0]))
        first = os.path.getsize(path)
        cpu = time.process_time()
        for s in snapshots[1:]:
            recorder.write_moment(Moment(s))
        spent = time.process_time() - cpu
        recorder.close()
        delta = (os.path.getsize(path) - first) / refreshes
    full = len(to_json(snapshots[-1]))
    print(f"{n:5d} processes, {moving:5d} moving: {spent / refreshes * 1000:6.2f} ms CPU/refresh, "
          f"{delta:8.0f} B/refresh delta vs {full} B full ({full / max(delta, 1):.0f}x)")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    refreshes = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    for moving in (0, n // 100 or 1, n):
        measure(n, refreshes, moving)

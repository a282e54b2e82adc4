"""CPU time of one refresh over ~N processes (a measurement for reports, not a test).
A quick single-size probe; bench/refresh.py is the benchmark (sizes, repeats, spread, smaps budget).

Usage: python bench/refresh_cpu.py [N]. Spawns N `sleep` processes under one launcher, then
measures time.process_time() around: the whole-machine /proc table pass, and a full
SnapshotCollector tick over the N-process tree (second tick, so deltas exist).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree, not an installed copy

from triage_tui.collect.proc_table import read_proc_table
from triage_tui.collect.processes import ProcessCollector
from triage_tui.collect.snapshot import SnapshotCollector
from triage_tui.collect.targets import resolve_targets, tree_pids
from triage_tui.host.base import CollectOptions

LAUNCHER = r'''
import os, signal, sys
for _ in range(int(sys.argv[1])):
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "3600"])
print("ready", flush=True)
signal.pause()
'''


def cpu_ms(fn, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, (time.process_time() - start) * 1000)
    return best


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(n)], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert proc.stdout and proc.stdout.readline().strip() == "ready"
        target = resolve_targets([str(proc.pid)])
        table = read_proc_table()
        pids = tree_pids(target, table)
        print(f"processes on the machine: {len(table.stats)}; in the tree: {len(pids)}")
        print(f"/proc table pass (all processes): {cpu_ms(read_proc_table):.1f} ms CPU")
        processes = ProcessCollector()
        processes.collect(pids)
        print(f"ProcessCollector over the tree: {cpu_ms(lambda: processes.collect(pids)):.1f} ms CPU")
        collector = SnapshotCollector()
        options = CollectOptions(interval_s=2.0)
        collector.collect(target, options)
        collector.smaps.wait_idle(60)
        start = time.process_time()
        snapshot = collector.collect(target, options)
        tick = (time.process_time() - start) * 1000
        print("  per source (wall ms): " + ", ".join(f"{s.name} {s.duration_ms:.0f}" for s in snapshot.sources))
        collector.smaps.wait_idle(60)
        print(f"full SnapshotCollector tick (table + tree + status + io + fds + tasks + memory + ports + kernel;"
              f" smaps thread included in process time): {tick:.1f} ms CPU")
        collector.close()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


if __name__ == "__main__":
    main()

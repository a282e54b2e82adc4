"""How long the app takes to show one refresh of a tree of N processes (the UI side of a tick).

    python bench/app_refresh.py [N ...]        (default: 2000 10000)
    BENCH_IDLE=1 python bench/app_refresh.py 1000   # a quiet tree: the same row objects every refresh, a
                                                    # second apart, after 100 (idle-for in minutes: few cells change)

Feeds synthetic snapshots (one launcher, children of 50 each; every refresh changes each row's idle-for)
to the app headless at 200x50 and times, on the UI thread, from the snapshot's arrival until the app is
idle again: updating every pane and laying the screen out (the rows are the same, so only changed cells
are touched; the very first build at mount is not timed). Collection cost (reading /proc for N processes)
is the core part's and is not included. Prints one line per N: the median of 6 refreshes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triage_tui.demo.fixture import FixtureHost, build_snapshots  # noqa: E402
from triage_tui.incident import Incident  # noqa: E402
from triage_tui.model.snapshot import ProcessInfo  # noqa: E402
from triage_tui.ui.app import TriageApp  # noqa: E402
from triage_tui.ui.messages import MomentReady  # noqa: E402


def tree(n: int) -> tuple[ProcessInfo, ...]:
    procs = [ProcessInfo(pid=100, ppid=1, name="launcher", state="S", cpu_percent=0.0, cpu_time_s=1.0)]
    pid, parent = 101, 100
    while len(procs) < n:
        if (pid - 101) % 50 == 0:
            parent = pid
            procs.append(ProcessInfo(pid=pid, ppid=100, name=f"child{pid}", state="S", cpu_percent=0.0, cpu_time_s=1.0))
        else:
            procs.append(ProcessInfo(pid=pid, ppid=parent, name=f"worker{pid}", state="S", cpu_percent=1.0,
                                     cpu_time_s=float(pid % 7), rss_bytes=pid << 12, wchan="futex_wait_queue"))
        pid += 1
    return tuple(procs)


async def measure(n: int, idle: bool = False) -> tuple[float, float]:
    """(wall, CPU of the UI thread) from a Moment's arrival until the app is idle again, medians."""
    procs = tree(n)
    if idle:
        last = build_snapshots(8)[-1]
        snaps = [dataclasses.replace(last, processes=procs, taken_at=last.taken_at + i) for i in range(200)]
    else:
        snaps = [dataclasses.replace(s, processes=procs) for s in build_snapshots(8)]
    host = FixtureHost(snaps)
    incident = Incident(host, host.target, host.options)
    for _ in range(100 if idle else 1):
        incident.tick()
    app = TriageApp(incident, interval=3600, live=False, clock=host.clock)
    times: list[float] = []
    cpus: list[float] = []
    async with app.run_test(size=(200, 50)) as pilot:
        for _ in range(5):  # the panes are mounted after the first frame
            await pilot.pause()
        for _ in range(30 if idle else 6):
            moment = incident.tick()  # the engine's work is the worker thread's, not timed here
            start, cpu = time.perf_counter(), time.thread_time()
            app.post_message(MomentReady(moment))
            await pilot.pause()
            times.append(time.perf_counter() - start)
            cpus.append(time.thread_time() - cpu)
    return statistics.median(times), statistics.median(cpus)


def main() -> int:
    sizes = [int(a) for a in sys.argv[1:]] or [2000, 10000]
    idle = os.environ.get("BENCH_IDLE") == "1"
    for n in sizes:
        wall, cpu = asyncio.run(measure(n, idle))
        print(f"{n:>6} processes{' (idle)' if idle else ''}: {wall * 1000:.1f} ms per refresh on the UI thread, "
              f"{cpu * 1000:.1f} ms of its CPU (median of {30 if idle else 6})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""One refresh, two versions of triage watching the same farm in the same seconds: CPU per Incident tick by part.

On a shared machine two runs one after the other see different neighbours; here both versions watch one farm,
each ticking once a second, half a second apart, so that whatever else runs hits both alike. Each side is its
own process (its own import of its checkout) and reports per tick the CPU (time.process_time: every thread) of
the whole tick and of its parts: the tree's follow, the rows, the waits, the whole collect, the engine and the
recorder. Measurement, not a test; the load average is printed before and after.

    BENCH_BEFORE=/path/to/older/checkout python3 bench/refresh_ab.py        # every process of 1,000 changing
    BENCH_CHANGING=0.1 BENCH_PROCESSES=1000 BENCH_TICKS=20 BENCH_WARMUP=10 BENCH_FLIP=1 python3 bench/refresh_ab.py
    (BENCH_FLIP=1: the older checkout ticks first in each second)
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, cpu_timed, load_line, machine_line, process_farm  # noqa: E402


def side(farm: int, start: float, warmup: int, ticks: int) -> list[dict[str, float]]:
    """Run in a child whose sys.path leads to one checkout: its ticks' CPU by part."""
    from triage_tui.collect.logs import LogsCollector
    from triage_tui.collect.targets import resolve_targets
    from triage_tui.host.base import CollectOptions
    from triage_tui.host.local import LocalHost
    from triage_tui.incident import Incident
    from triage_tui.model.snapshot import GpuReport
    from triage_tui.model.unavailable import Unavailable
    from triage_tui.record.recorder import Recorder

    host = LocalHost(logs=LogsCollector(), gpus=lambda: GpuReport(error=Unavailable("not measured here")))
    scratch = tempfile.mkdtemp(prefix="bench-refresh-ab-")
    recorder = Recorder(os.path.join(scratch, "incident.triage"))
    incident = Incident(host, resolve_targets([str(farm)]), CollectOptions(interval_s=1.0), recorder=recorder)
    spent: dict[str, float] = {}

    timed = cpu_timed(spent)

    collector = host._collector  # noqa: SLF001 - a benchmark times the collector's parts
    collector.tree.follow = timed("follow", collector.tree.follow)  # type: ignore[method-assign]
    collector.processes.collect = timed("rows", collector.processes.collect)  # type: ignore[method-assign]
    collector.waits.collect = timed("waits", collector.waits.collect)  # type: ignore[method-assign]
    host.collect = timed("collect", host.collect)  # type: ignore[method-assign]
    incident.engine.update = timed("engine", incident.engine.update)  # type: ignore[method-assign]
    recorder.write_moment = timed("record", recorder.write_moment)  # type: ignore[method-assign]
    out = []
    try:
        for n in range(warmup + ticks):
            time.sleep(max(0.0, start + n - time.time()))
            spent.clear()
            cpu = time.process_time()
            incident.tick()
            host.wait_for_budgeted_reads(120)  # the smaps thread's reads belong to this tick
            spent["tick"] = (time.process_time() - cpu) * 1000
            if n >= warmup:
                out.append(dict(spent))
    finally:
        incident.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def main() -> None:
    before = os.environ.get("BENCH_BEFORE")
    if not before:
        sys.exit("BENCH_BEFORE=/path/to/older/checkout: the version to measure beside this one")
    sides = {"before": before, "after": os.environ.get("TRIAGE_SRC", REPO)}
    changing = float(os.environ.get("BENCH_CHANGING", "1"))
    processes = int(os.environ.get("BENCH_PROCESSES", "1000"))
    warmup, ticks = int(os.environ.get("BENCH_WARMUP", "10")), int(os.environ.get("BENCH_TICKS", "20"))
    flip = os.environ.get("BENCH_FLIP") == "1"
    started = load_line()
    with process_farm(processes, changing=changing) as farm:
        start = time.time() + 3
        procs = {}
        for i, (name, src) in enumerate(sides.items()):
            code = (f"import sys, json; sys.path[:0] = [{os.path.dirname(os.path.abspath(__file__))!r}, {src!r}]; "
                    f"import refresh_ab; print(json.dumps(refresh_ab.side({farm}, {start + 0.5 * (i ^ flip)}, "
                    f"{warmup}, {ticks})))")
            procs[name] = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=src)
        results = {name: json.loads(p.communicate()[0]) for name, p in procs.items()}
    print(f"{machine_line()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {processes:,} processes, "
          f"{changing:.0%} changing every refresh, {ticks} ticks after {warmup}; before: {started}; after: {load_line()}")
    for name, rows in results.items():
        parts = sorted({k for r in rows for k in r}, key=lambda k: -statistics.median(r.get(k, 0.0) for r in rows))
        figures = "  ".join(f"{k} {statistics.median(r.get(k, 0.0) for r in rows):.1f}" for k in parts)
        tick = [r["tick"] for r in rows]
        print(f"{name:6s} {figures} | tick range {min(tick):.1f}-{max(tick):.1f}, mean {statistics.mean(tick):.1f}")


if __name__ == "__main__":
    main()

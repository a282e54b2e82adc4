"""The first minute of a watch, tick by tick: where its CPU goes, phase by phase, while the PSS wave arrives.

A watch of 1,000 idle processes costs ~13 ms/s more in its first minute than after it (BENCHMARKS.md, "Side by
side after the ninth pass"). Here one process watches a farm of idle processes at the real refresh (2 s by
default) for ~90 s, as `triage report` does (headless: LocalHost, the logs collector, the recorder to a scratch
file; the GPU source left out) or as the app does (`--app`: TriageApp headless at 200x50, its own timer and
worker thread), and splits each tick's CPU by phase with thread CPU time (time.thread_time in the thread that
runs the phase):

  follow      the tree followed from its roots (proc_tree)          rows     the process rows (ProcessCollector)
  pss_fields  the smaps thread's figures made into row fields       memory   submit, cgroup, meminfo, the sums
  logs, ports, kernel, waits: those collectors                      collect  the rest of host.collect
  engine      DiagnosisEngine.update                                record   Recorder.write_moment
  smaps       the triage-smaps thread's CPU over the tick's window (its smaps_rollup reads; `reads` counts them)
  panes       (--app) the app's render_all on the UI thread: the Moment handed to the header and the six panes
  ui          (--app) the rest of the UI thread's CPU over the tick's window: textual's loop, layout and paint
              (headless driver: nothing is written to a terminal)
  other       the process's CPU in the window not in the above (other threads, the interpreter's GC, the timer)

Prints one line per tick (its second of watch, the load average), then a table per stretch of the watch (the
first 24 s, 24–60 s, after 60 s) in ms of CPU per second of watching. Measurement, not a test.

    python3 bench/first_minute.py                       # headless, 1,000 idle processes, 2 s, 90 s
    python3 bench/first_minute.py --app                 # the app's side (the tick runs in its worker thread)
    BENCH_PROCESSES=1000 BENCH_INTERVAL=2 BENCH_SECONDS=90 python3 bench/first_minute.py
    BENCH_QUIET=1 ...                                   # the table alone, without the per-tick lines
    TRIAGE_SRC=/path/to/checkout ...                    # measure another checkout's code
    BENCH_BEFORE=/path/to/older/checkout python3 bench/first_minute.py   # headless, both checkouts watching one
                                                        # farm in the same seconds, half a tick apart (A/B)
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, load_line, machine_line, process_farm  # noqa: E402

sys.path.insert(0, os.environ.get("TRIAGE_SRC", REPO))

COLLECTOR_PARTS = ("follow", "rows", "pss_fields", "memory", "logs", "ports", "kernel", "waits")
PHASES = (*COLLECTOR_PARTS, "collect", "engine", "record", "smaps", "panes", "ui", "other")
# 4–24 s is the window overhead.py's "first 24 s" measures (4 s warm-up, 20 s window); 0–4 s holds the first tick
STRETCHES = (("0–4 s", 0.0, 4.0), ("4–24 s", 4.0, 24.0), ("24–60 s", 24.0, 60.0), ("after 60 s", 60.0, 1e9))


def thread_cpu(thread: threading.Thread | None) -> float:
    if thread is None or thread.ident is None:
        return 0.0
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
    except (OSError, ProcessLookupError):
        return 0.0


class Phases:
    """Wraps an Incident's parts in place; `spent` adds up each part's thread CPU (ms) since the last take()."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self._lock = threading.Lock()

    def timed(self, part: str, call: Callable[..., object]) -> Callable[..., object]:
        def wrapper(*args: object, **kwargs: object) -> object:
            started = time.thread_time()
            try:
                return call(*args, **kwargs)
            finally:
                with self._lock:
                    self.spent[part] = self.spent.get(part, 0.0) + (time.thread_time() - started) * 1000
        return wrapper

    def take(self) -> dict[str, float]:
        with self._lock:
            out, self.spent = self.spent, {}
        return out

    def wrap(self, incident: object) -> None:
        host = incident.host  # type: ignore[attr-defined]
        c = host._collector  # noqa: SLF001 - a benchmark times the collector's parts
        c.tree.follow = self.timed("follow", c.tree.follow)
        c.processes.collect = self.timed("rows", c.processes.collect)
        c._smaps_fields = self.timed("pss_fields", c._smaps_fields)  # noqa: SLF001
        c._memory = self.timed("memory", c._memory)  # noqa: SLF001
        if c.logs is not None:
            c.logs = self.timed("logs", c.logs)
        c.ports.collect = self.timed("ports", c.ports.collect)
        c.kernel.collect = self.timed("kernel", c.kernel.collect)
        c.waits.collect = self.timed("waits", c.waits.collect)
        host.collect = self.timed("collect_whole", host.collect)
        incident.engine.update = self.timed("engine", incident.engine.update)  # type: ignore[attr-defined]
        recorder = incident.recorder  # type: ignore[attr-defined]
        recorder.write_moment = self.timed("record", recorder.write_moment)


def make_incident(farm: int, interval: float, scratch: str) -> object:
    from triage_tui.collect.logs import LogsCollector
    from triage_tui.collect.targets import resolve_targets
    from triage_tui.host.base import CollectOptions
    from triage_tui.host.local import LocalHost
    from triage_tui.incident import Incident
    from triage_tui.model.snapshot import GpuReport
    from triage_tui.model.unavailable import Unavailable
    from triage_tui.record.recorder import Recorder

    host = LocalHost(logs=LogsCollector(), gpus=lambda: GpuReport(error=Unavailable("not measured here")))
    recorder = Recorder(os.path.join(scratch, "incident.triage"))
    return Incident(host, resolve_targets([str(farm)]), CollectOptions(interval_s=interval), recorder=recorder)


def row(at: float, wall: float, spent: dict[str, float], cpu_ms: float, reads: int, pss_known: int,
        ui_ms: float, smaps_ms: float) -> dict[str, float]:
    out = {k: v for k, v in spent.items() if k != "collect_whole"}
    inner = sum(out.get(k, 0.0) for k in COLLECTOR_PARTS)
    out["collect"] = max(0.0, spent.get("collect_whole", 0.0) - inner)
    out["smaps"], out["ui"] = smaps_ms, max(0.0, ui_ms - out.get("panes", 0.0))
    out["other"] = max(0.0, cpu_ms - sum(out.values()))
    out.update(at=at, wall=wall, cpu=cpu_ms, reads=reads, pss=pss_known, load=os.getloadavg()[0])
    return out


def smaps_thread() -> threading.Thread | None:
    return next((t for t in threading.enumerate() if t.name == "triage-smaps"), None)


SPLIT: dict[str, float] = {}


def note_smaps_split() -> None:
    """The smaps thread's user and system CPU over the whole watch (/proc/self/task/TID/stat, clock ticks):
    how much of a smaps_rollup read is the kernel's walk of the process's memory and how much Python's."""
    thread = smaps_thread()
    if thread is None or thread.native_id is None:
        return
    try:
        with open(f"/proc/self/task/{thread.native_id}/stat", "rb") as f:
            rest = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return
    tck = os.sysconf("SC_CLK_TCK")
    SPLIT.update(user=int(rest[11]) * 1000 / tck, system=int(rest[12]) * 1000 / tck)


def headless(farm: int, interval: float, seconds: float, start: float | None = None) -> list[dict[str, float]]:
    scratch = tempfile.mkdtemp(prefix="bench-first-minute-")
    incident = make_incident(farm, interval, scratch)
    phases = Phases()
    phases.wrap(incident)
    smaps = incident.host._collector.smaps  # type: ignore[attr-defined]  # noqa: SLF001
    rows: list[dict[str, float]] = []
    start = time.monotonic() if start is None else start  # CLOCK_MONOTONIC: one clock for every process
    at = begun = cpu = smaps_cpu = 0.0
    reads = pss = 0
    try:
        n = 0
        while n * interval <= seconds:
            time.sleep(max(0.0, start + n * interval - time.monotonic()))
            if n:  # the window of tick n-1 closes where tick n begins (the smaps thread's reads are in it)
                rows.append(row(at, time.monotonic() - begun, phases.take(), (time.process_time() - cpu) * 1000,
                                smaps.reads - reads, pss, 0.0, (thread_cpu(smaps_thread()) - smaps_cpu) * 1000))
            at, begun, cpu, reads = time.monotonic() - start, time.monotonic(), time.process_time(), smaps.reads
            smaps_cpu = thread_cpu(smaps_thread())
            moment = incident.tick()  # type: ignore[attr-defined]
            pss = moment.snapshot.memory.target.pss_covered
            n += 1
        note_smaps_split()
    finally:
        incident.close()  # type: ignore[attr-defined]
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


def app(farm: int, interval: float, seconds: float) -> list[dict[str, float]]:
    from triage_tui.ui.app import TriageApp

    scratch = tempfile.mkdtemp(prefix="bench-first-minute-")
    incident = make_incident(farm, interval, scratch)
    phases = Phases()
    phases.wrap(incident)
    smaps = incident.host._collector.smaps  # type: ignore[attr-defined]  # noqa: SLF001
    ui = threading.current_thread()
    rows: list[dict[str, float]] = []
    marks: list[tuple[float, ...]] = []
    real_tick = incident.tick  # type: ignore[attr-defined]

    def tick() -> object:
        # in the worker thread, as each tick begins: the window of the one before closes here (the UI thread's
        # CPU read through its clock id, so that nothing polls on the UI thread itself)
        moment = incident.latest  # type: ignore[attr-defined]
        now = (time.process_time(), thread_cpu(ui), thread_cpu(smaps_thread()), smaps.reads, time.monotonic(),
               moment.snapshot.memory.target.pss_covered if moment is not None else 0)
        spent = phases.take()
        if marks:
            state = marks[-1]
            rows.append(row(state[4] - marks[0][4], now[4] - state[4], spent, (now[0] - state[0]) * 1000,
                            now[3] - state[3], now[5], (now[1] - state[1]) * 1000, (now[2] - state[2]) * 1000))
        marks.append(now)
        return real_tick()

    incident.tick = tick  # type: ignore[attr-defined]

    async def watch() -> None:
        the_app = TriageApp(incident, interval=interval, live=True)  # type: ignore[arg-type]
        the_app.render_all = phases.timed("panes", the_app.render_all)  # type: ignore[method-assign,assignment]
        async with the_app.run_test(size=(200, 50)):
            while not marks or marks[-1][4] - marks[0][4] < seconds + interval / 2:
                await asyncio.sleep(interval)  # one wake-up a refresh on the UI thread (the app's timer has one too)
            note_smaps_split()

    try:
        asyncio.run(watch())
    finally:
        incident.close()  # type: ignore[attr-defined]
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


def per_second(rows: list[dict[str, float]], low: float, high: float) -> tuple[dict[str, float], int, str]:
    chosen = [r for r in rows if low <= r["at"] < high]
    if not chosen:
        return {}, 0, ""
    wall = sum(r["wall"] for r in chosen)
    out = {k: sum(r.get(k, 0.0) for r in chosen) / wall for k in (*PHASES, "cpu")}
    out["reads"] = sum(r["reads"] for r in chosen) / len(chosen)
    loads = [r["load"] for r in chosen]
    return out, len(chosen), f"{min(loads):.1f}–{max(loads):.1f}"


def report(side: str, rows: list[dict[str, float]], split: dict[str, float]) -> None:
    shown = [p for p in PHASES if any(r.get(p, 0.0) > 0.05 for r in rows)]
    if os.environ.get("BENCH_QUIET") != "1":
        print("   s  " + " ".join(f"{p[:7]:>7s}" for p in shown) + "   tick ms  reads  pss  load")
        for r in rows:
            print(f"{r['at']:4.0f}  " + " ".join(f"{r.get(p, 0.0):7.1f}" for p in shown)
                  + f"  {r['cpu']:8.1f}  {r['reads']:5.0f} {r['pss']:4.0f}  {r['load']:.1f}")
        print()
    print(f"| {side}: stretch (ticks, load) | " + " | ".join(shown) + " | all (ms/s) | smaps reads a tick |")
    print("|---" * (len(shown) + 3) + "|")
    for name, low, high in STRETCHES:
        figures, n, loads = per_second(rows, low, high)
        if n:
            print(f"| {name} ({n}, {loads}) | " + " | ".join(f"{figures[p]:.1f}" for p in shown)
                  + f" | **{figures['cpu']:.1f}** | {figures['reads']:.0f} |")
    reads = sum(r["reads"] for r in rows)
    if split and reads:
        print(f"\n{side}: the smaps thread over the watch: {reads:.0f} smaps_rollup reads, user {split['user']:.0f} ms, "
              f"system {split['system']:.0f} ms ({(split['user'] + split['system']) * 1000 / reads:.0f} µs a read, "
              f"{split['system'] / max(1e-9, split['user'] + split['system']):.0%} of it the kernel's)")
    print()


def side_by_side(farm: int, interval: float, seconds: float, before: str) -> dict[str, tuple[list, dict]]:
    """Two checkouts' headless watches of one farm in the same seconds, half a tick apart (BENCH_FLIP=1: the
    older one first), each its own process: whatever else the machine runs hits both alike."""
    import json
    import subprocess

    flip = os.environ.get("BENCH_FLIP") == "1"
    start = time.monotonic() + 3
    procs = {}
    for i, (name, src) in enumerate((("before", before), ("after", os.environ.get("TRIAGE_SRC", REPO)))):
        at = start + interval / 2 * (i ^ flip)
        code = (f"import sys, json; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
                f"import first_minute as fm; rows = fm.headless({farm}, {interval}, {seconds}, {at}); "
                "print(json.dumps([rows, fm.SPLIT]))")
        procs[name] = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=src,
                                       env={**os.environ, "TRIAGE_SRC": src})
    return {name: tuple(json.loads(p.communicate()[0])) for name, p in procs.items()}


def main() -> None:
    processes = int(os.environ.get("BENCH_PROCESSES", "1000"))
    interval = float(os.environ.get("BENCH_INTERVAL", "2"))
    seconds = float(os.environ.get("BENCH_SECONDS", "90"))
    before_src = os.environ.get("BENCH_BEFORE")
    side = "app" if "--app" in sys.argv[1:] else "headless"
    before = load_line()
    with process_farm(processes) as farm:
        time.sleep(float(os.environ.get("BENCH_SETTLE", "3")))  # the farm's own start-up settles (as overhead.py)
        if before_src:
            results = side_by_side(farm, interval, seconds, before_src)
        else:
            rows = (app if side == "app" else headless)(farm, interval, seconds)
            results = {side: (rows, dict(SPLIT))}
    print(f"{machine_line()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {side}, {processes:,} idle "
          f"processes, {interval:g} s refresh; before: {before}; after: {load_line()}")
    for name, (rows, split) in results.items():
        report(name, rows, split)


if __name__ == "__main__":
    main()

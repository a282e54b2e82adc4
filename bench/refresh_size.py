"""One refresh against the size of the tree: triage's own CPU for one Incident tick (collect, the
engine, the recorder), split by part, at 100 / 1,000 / 10,000 processes that are idle, and at
1,000 where every process changes every refresh. Writes a table and an SVG plot of cost against size.

CPU is time.process_time() of this process (every thread: the off-thread smaps_rollup reads are
included; the tick waits for them), over ticks 1 s apart after a warm-up in which every process got
its first full read and PSS figures started to arrive. The recorder writes to a scratch file.
Measurement, not a test; the machine's load average is printed with the figures.

    python3 bench/refresh_size.py                   # sizes 100 1000 10000, 10 warm-up + 8 measured ticks
    BENCH_SIZES=100,1000 BENCH_TICKS=5 python3 bench/refresh_size.py
    BENCH_SIZES= BENCH_CHANGING_SIZE=1000 python3 bench/refresh_size.py   # only the tree where every process changes
    BENCH_SVG=bench/refresh-size.svg                # where the plot goes (default: beside this file)
    BENCH_JSON=points.jsonl                         # also append each point there, as JSON
    python3 bench/refresh_size.py --plot points.jsonl   # the table and the plot of points measured before
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, cpu_timed, load_line, machine_line, process_farm  # noqa: E402

sys.path.insert(0, os.environ.get("TRIAGE_SRC", REPO))

from triage_tui.collect.logs import LogsCollector  # noqa: E402
from triage_tui.collect.targets import resolve_targets  # noqa: E402
from triage_tui.host.base import CollectOptions  # noqa: E402
from triage_tui.host.local import LocalHost  # noqa: E402
from triage_tui.incident import Incident  # noqa: E402
from triage_tui.model.snapshot import GpuReport  # noqa: E402
from triage_tui.model.unavailable import Unavailable  # noqa: E402
from triage_tui.record.recorder import Recorder  # noqa: E402

PARTS = ("collect", "engine", "record", "tick")


@dataclass(frozen=True)
class Point:
    processes: int
    changing: float
    ms: dict[str, tuple[float, float, float]]  # part -> (median, low, high) CPU ms per tick
    load: str


def measure(size: int, changing: float, warmup: int, ticks: int) -> Point:
    with process_farm(size, changing=changing) as farm:
        host = LocalHost(logs=LogsCollector(), gpus=lambda: GpuReport(error=Unavailable("not measured here")))
        scratch = tempfile.mkdtemp(prefix="bench-refresh-size-")
        recorder = Recorder(os.path.join(scratch, "incident.triage"))
        incident = Incident(host, resolve_targets([str(farm)]), CollectOptions(interval_s=1.0), recorder=recorder)
        samples: dict[str, list[float]] = {part: [] for part in PARTS}
        spent: dict[str, float] = {}

        timed = cpu_timed(spent)

        host.collect = timed("collect", host.collect)  # type: ignore[method-assign]
        incident.engine.update = timed("engine", incident.engine.update)  # type: ignore[method-assign]
        recorder.write_moment = timed("record", recorder.write_moment)  # type: ignore[method-assign]
        try:
            for n in range(warmup + ticks):
                started_at = time.monotonic()
                spent.clear()
                cpu = time.process_time()
                incident.tick()
                waited = time.process_time()
                host.wait_for_budgeted_reads(120)  # the smaps thread's reads belong to this tick
                spent["collect"] = spent.get("collect", 0.0) + (time.process_time() - waited) * 1000
                spent["tick"] = (time.process_time() - cpu) * 1000
                if n >= warmup:
                    for part in PARTS:
                        samples[part].append(spent.get(part, 0.0))
                time.sleep(max(0.0, 1.0 - (time.monotonic() - started_at)))
        finally:
            incident.close()
            shutil.rmtree(scratch, ignore_errors=True)
    return Point(size, changing, {part: (statistics.median(v), min(v), max(v)) for part, v in samples.items()},
                 load_line())


def table(points: list[Point]) -> str:
    lines = ["| processes | changing every refresh | one tick: CPU ms (median, range) | collect | engine | record | "
             "µs per process | load average at the end |", "|---|---|---|---|---|---|---|---|"]
    for p in points:
        tick = p.ms["tick"]
        lines.append(f"| {p.processes:,} | {p.changing:.0%} | {tick[0]:.1f} ({tick[1]:.1f}–{tick[2]:.1f}) | "
                     f"{p.ms['collect'][0]:.1f} | {p.ms['engine'][0]:.1f} | {p.ms['record'][0]:.1f} | "
                     f"{tick[0] * 1000 / p.processes:.0f} | {p.load.split(' (')[0].replace('load average ', '')} |")
    return "\n".join(lines)


def svg(points: list[Point], path: str, title: str) -> None:
    """CPU ms per tick against processes, log-log, one line per part (idle points only), plus the
    all-changing points as marks; a hand-written SVG (no plotting library on the node)."""
    import math

    idle = sorted((p for p in points if p.changing == 0), key=lambda p: p.processes)
    if len(idle) < 2:
        return
    w, h, left, right, top, bottom = 640, 400, 70, 150, 40, 50
    xs = [p.processes for p in points]
    ys = [max(0.1, p.ms[part][0]) for p in points for part in PARTS]
    x0, x1 = math.log10(min(xs)) - 0.1, math.log10(max(xs)) + 0.1
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))

    def px(n: float) -> float:
        return left + (math.log10(n) - x0) / (x1 - x0) * (w - left - right)

    def py(ms: float) -> float:
        return h - bottom - (math.log10(max(0.1, ms)) - y0) / (y1 - y0) * (h - top - bottom)

    colours = {"tick": "#000000", "collect": "#1f77b4", "engine": "#2ca02c", "record": "#d62728"}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
           'font-size="12">', f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="20" font-size="13">{title}</text>']
    for e in range(y0, y1 + 1):
        y = py(10 ** e)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{w - right}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{10 ** e:g} ms</text>')
    for n in sorted(set(xs)):
        x = px(n)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{h - bottom}" stroke="#eee"/>')
        out.append(f'<text x="{x:.1f}" y="{h - bottom + 16}" text-anchor="middle">{n:,}</text>')
    out.append(f'<text x="{(left + w - right) / 2:.0f}" y="{h - 12}" text-anchor="middle">processes in the tree '
               '(log scale); CPU ms per refresh (log scale)</text>')
    for i, part in enumerate(PARTS):
        colour = colours[part]
        path_d = " ".join(f"{'M' if j == 0 else 'L'}{px(p.processes):.1f},{py(p.ms[part][0]):.1f}"
                          for j, p in enumerate(idle))
        out.append(f'<path d="{path_d}" fill="none" stroke="{colour}" stroke-width="{2.5 if part == "tick" else 1.5}"/>')
        for p in idle:
            out.append(f'<circle cx="{px(p.processes):.1f}" cy="{py(p.ms[part][0]):.1f}" r="3" fill="{colour}"/>')
        for p in points:
            if p.changing > 0:
                out.append(f'<rect x="{px(p.processes) - 4:.1f}" y="{py(p.ms[part][0]) - 4:.1f}" width="8" height="8" '
                           f'fill="none" stroke="{colour}"/>')
        label = "whole tick" if part == "tick" else part
        out.append(f'<line x1="{w - right + 12}" y1="{top + 12 + 18 * i}" x2="{w - right + 32}" '
                   f'y2="{top + 12 + 18 * i}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{w - right + 38}" y="{top + 16 + 18 * i}">{label}</text>')
    out.append(f'<text x="{w - right + 12}" y="{top + 100}">● idle tree</text>')
    out.append(f'<text x="{w - right + 12}" y="{top + 118}">□ every process</text>')
    out.append(f'<text x="{w - right + 24}" y="{top + 134}">changing</text>')
    reference = [(n, n / 1000 * 20) for n in sorted(set(xs))]  # linear through the goal: 20 ms at 1,000
    d = " ".join(f"{'M' if j == 0 else 'L'}{px(n):.1f},{py(ms):.1f}" for j, (n, ms) in enumerate(reference))
    out.append(f'<path d="{d}" fill="none" stroke="#999" stroke-dasharray="4 3"/>')
    out.append(f'<text x="{w - right + 12}" y="{top + 156}" fill="#666">- - linear, 20 ms</text>')
    out.append(f'<text x="{w - right + 24}" y="{top + 172}" fill="#666">at 1,000 (goal)</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def _load(path: str) -> list[Point]:
    import json

    with open(path) as f:
        return [Point(d["processes"], d["changing"], {k: tuple(v) for k, v in d["ms"].items()}, d["load"])  # type: ignore[misc]
                for d in map(json.loads, f) if d]


def _save(path: str, points: list[Point]) -> None:
    import json

    with open(path, "a") as f:
        for p in points:
            f.write(json.dumps({"processes": p.processes, "changing": p.changing, "ms": p.ms, "load": p.load}) + "\n")


if __name__ == "__main__" and sys.argv[1:2] == ["--plot"]:
    loaded = [p for path in sys.argv[2:] for p in _load(path)]
    print(table(loaded))
    svg(loaded, os.environ.get("BENCH_SVG", os.path.join(os.path.dirname(os.path.abspath(__file__)), "refresh-size.svg")),
        os.environ.get("BENCH_TITLE", "triage: one refresh against tree size (shared 2-core VM)"))
elif __name__ == "__main__":
    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "100,1000,10000").split(",") if s]  # "": none idle
    ticks = int(os.environ.get("BENCH_TICKS", "8"))
    warmup = int(os.environ.get("BENCH_WARMUP", "10"))
    started = load_line()
    points = [measure(size, 0.0, warmup, ticks) for size in sizes]
    if 1000 in sizes or os.environ.get("BENCH_CHANGING_SIZE"):
        points.append(measure(int(os.environ.get("BENCH_CHANGING_SIZE", "1000")), 1.0, warmup, ticks))
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"{machine_line()}; {when}; before: {started}")
    print()
    print(table(points))
    if os.environ.get("BENCH_JSON"):
        _save(os.environ["BENCH_JSON"], points)
    svg(points, os.environ.get("BENCH_SVG", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "refresh-size.svg")),
        f"triage: one refresh against tree size ({when}, shared 2-core VM)")

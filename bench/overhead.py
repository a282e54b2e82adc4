"""Overhead while watching: CPU per refresh and peak RSS of triage against htop, btop and glances.

Every tool runs in the same run on the same machine, with 1,000 extra processes present, at one
refresh interval (1 s or 2 s: btop's update_ms, htop's -d and glances' -t set to match), in a
200x50 tmux pane (triage also headless, as `triage report`). CPU is measured over a fixed window
after a warm-up, from /proc/PID/stat of the tool's whole process tree; tools are interleaved over
the rounds so drift on the machine hits all of them alike, and the load average is printed with
the figures (the machine may be shared). triage runs with --no-auto-stacks: the one py-spy capture
it takes unasked when the whole tree goes idle is a one-off (it pauses each process for a moment),
not the cost of watching, and no peer takes one.

    python3 bench/overhead.py                       # 1 s refresh, idle tree
    BENCH_INTERVAL=2 BENCH_CHANGING=0.1 python3 bench/overhead.py   # 2 s, 10 % of the tree changing
    BENCH_BEFORE=/path/to/older/checkout python3 bench/overhead.py  # that code's triage too, same run
    BENCH_TOOLS=app,btop  # a subset (headless, app, htop, btop, glances; before-* with BENCH_BEFORE)
    BENCH_TOGETHER=1 BENCH_WARMUP=90   # every tool at once, each in its own pane, measured over the same
                                       # window after a long warm-up: a tree watched for minutes (the
                                       # incident's case), where idle-for has stopped ticking each second
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

from common import REPO, Spread, TmuxPane, cpu_seconds, have, load_line, peak_rss_bytes, process_farm, spread, tree_of

PEERS_VENV = os.path.join(REPO, "bench", ".peers")
GLANCES = os.path.join(PEERS_VENV, "bin", "glances")


@dataclass(frozen=True)
class Tool:
    name: str
    key: str  # for BENCH_TOOLS
    command: Callable[[int, float, float], str]  # (farm pid, window seconds, interval) -> shell command
    env: Optional[dict[str, str]] = None
    available: Callable[[], bool] = lambda: True


def _btop_home(interval_s: float) -> str:
    home = tempfile.mkdtemp(prefix="bench-btop-")
    os.makedirs(os.path.join(home, ".config", "btop"))
    with open(os.path.join(home, ".config", "btop", "btop.conf"), "w") as f:
        f.write(f"update_ms = {int(interval_s * 1000)}\nshown_boxes = \"cpu mem net proc\"\n")
    return home


def _triage(code: str, label: str, key: str) -> list[Tool]:
    py = sys.executable
    cd = f"cd {code} && "
    return [
        Tool(f"triage{label} (headless)", f"{key}headless", lambda pid, w, i: cd + f"{py} -m triage_tui report {pid} "
             f"--duration {w + 6:.0f} --interval {i:g} --no-record --no-auto-stacks --format json >/dev/null"),
        Tool(f"triage{label} (app)", f"{key}app", lambda pid, w, i: cd + f"{py} -m triage_tui {pid} --interval {i:g} "
             "--no-record --no-auto-stacks"),
    ]


def tools(interval_s: float = 1.0) -> list[Tool]:
    out = _triage(REPO, "", "")
    before = os.environ.get("BENCH_BEFORE")
    if before:
        out += _triage(before, " before", "before-")
    out += [
        Tool("htop", "htop", lambda pid, w, i: f"htop -d {int(i * 10)}", available=lambda: have("htop")),
        Tool("btop", "btop", lambda pid, w, i: "btop --utf-force", env={"HOME": _btop_home(interval_s), "LANG": "C.UTF-8"},
             available=lambda: have("btop")),
        Tool("glances", "glances", lambda pid, w, i: f"{GLANCES} -t {i:g}", available=lambda: os.path.exists(GLANCES)),
    ]
    wanted = [k.strip() for k in os.environ.get("BENCH_TOOLS", "").split(",") if k.strip()]
    return [t for t in out if not wanted or t.key in wanted]


def measure(tool: Tool, farm_pid: int, window_s: float, interval_s: float, warmup_s: float = 4.0) -> tuple[float, int]:
    """(CPU seconds per second of watching, peak RSS bytes) of one run of `tool`."""
    # the tool's own run covers the warm-up too: headless `report` is given a duration, and one shorter than the
    # warm-up had exited before the window opened (measured as 0 ms after a 60 s warm-up)
    pane = TmuxPane(f"bench-{tool.key}-{os.getpid()}", tool.command(farm_pid, warmup_s + window_s, interval_s),
                    env=tool.env)
    try:
        time.sleep(warmup_s)  # a measurement window, not a readiness wait: first frames are excluded
        pids = tree_of(pane.pid)
        before = cpu_seconds(pids)
        time.sleep(window_s)
        pids = tree_of(pane.pid)
        after = cpu_seconds(pids)
        rss = peak_rss_bytes(pids)
        return (after - before) / window_s, rss
    finally:
        pane.close()


def measure_together(tools_: list[Tool], farm_pid: int, window_s: float, interval_s: float,
                     warmup_s: float) -> dict[str, tuple[float, int]]:
    """Every tool at once, each in its own pane: {name: (CPU s per s, peak RSS)} over one window."""
    panes = []
    try:
        for tool in tools_:
            command = tool.command(farm_pid, warmup_s + window_s, interval_s)
            panes.append((tool, TmuxPane(f"bench-{tool.key}-{os.getpid()}", command, env=tool.env)))
        time.sleep(warmup_s)
        before = {tool.name: cpu_seconds(tree_of(pane.pid)) for tool, pane in panes}
        time.sleep(window_s)
        out = {}
        for tool, pane in panes:
            pids = tree_of(pane.pid)
            out[tool.name] = ((cpu_seconds(pids) - before[tool.name]) / window_s, peak_rss_bytes(pids))
        return out
    finally:
        for _, pane in panes:
            pane.close()


@dataclass(frozen=True)
class Result:
    name: str
    cpu_ms_per_s: Optional[Spread]  # CPU ms per second of watching (x interval = per refresh)
    rss_mib: Optional[Spread]


def run(repeats: int = 3, window_s: float = 20.0, farm: int = 1000, interval_s: float = 1.0,
        changing: float = 0.0, together: bool = False, warmup_s: float = 4.0) -> tuple[list[Result], str]:
    """The results and a line saying the run's conditions (load average before and after)."""
    results: dict[str, tuple[list[float], list[float]]] = {}
    started = load_line()
    with process_farm(farm, changing=changing) as farm_pid:
        time.sleep(2.0)  # the farm's own start-up settles before any tool is measured
        for _ in range(repeats):  # interleave tools so drift on the machine hits all of them alike
            if together:
                for name, (cpu, rss) in measure_together([t for t in tools(interval_s) if t.available()], farm_pid,
                                                         window_s, interval_s, warmup_s).items():
                    cpus, rsss = results.setdefault(name, ([], []))
                    cpus.append(cpu * 1000)
                    rsss.append(rss / 2**20)
                continue
            for tool in tools(interval_s):
                if not tool.available():
                    continue
                cpu, rss = measure(tool, farm_pid, window_s, interval_s, warmup_s)
                cpus, rsss = results.setdefault(tool.name, ([], []))
                cpus.append(cpu * 1000)
                rsss.append(rss / 2**20)
    rows = [Result(t.name, *(spread(v) for v in results[t.name])) if t.name in results else Result(t.name, None, None)
            for t in tools(interval_s)]
    how = "all tools at once" if together else "one tool at a time, interleaved"
    what = (f"{farm:,} processes ({changing:.0%} changing every refresh), {interval_s:g} s refresh, {how}, "
            f"{warmup_s:g} s warm-up, {window_s:g} s window x {repeats}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; before: {started}; "
            f"after: {load_line()}")
    return rows, what


def table(rows: list[Result], interval_s: float = 1.0) -> str:
    lines = ["| tool | CPU ms per second of watching (median, range) | per refresh | peak RSS MiB |", "|---|---|---|---|"]
    for r in rows:
        if r.cpu_ms_per_s is None or r.rss_mib is None:
            lines.append(f"| {r.name} | not installed | – | – |")
        else:
            lines.append(f"| {r.name} | {r.cpu_ms_per_s.fmt(' ms')} | {r.cpu_ms_per_s.median * interval_s:.1f} ms | "
                         f"{r.rss_mib.fmt(' MiB', 0)} |")
    base = {r.name: r.cpu_ms_per_s for r in rows if r.cpu_ms_per_s is not None}
    for mine in [r.name for r in rows if r.name.startswith("triage")]:
        if mine not in base:
            continue
        ratios = [f"/ {peer}: {base[mine].median / base[peer].median:.2f}"
                  for peer in ("btop", "htop", "glances") if peer in base and base[peer].median > 0]
        if ratios:
            lines.append(f"\n{mine} " + "; ".join(ratios))
    return "\n".join(lines)


if __name__ == "__main__":
    interval = float(os.environ.get("BENCH_INTERVAL", "1"))
    results, conditions = run(repeats=int(os.environ.get("BENCH_REPEATS", "3")),
                              window_s=float(os.environ.get("BENCH_WINDOW", "20")), interval_s=interval,
                              changing=float(os.environ.get("BENCH_CHANGING", "0")),
                              farm=int(os.environ.get("BENCH_PROCESSES", "1000")),
                              together=os.environ.get("BENCH_TOGETHER") == "1",
                              warmup_s=float(os.environ.get("BENCH_WARMUP", "4")))
    print(conditions)
    print()
    print(table(results, interval))

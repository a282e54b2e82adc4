"""Overhead while watching: CPU per refresh and peak RSS of triage against htop, btop and glances.

Every tool runs in the same run on the same machine, with 1,000 extra idle processes present, at a
1 s refresh, in a 200x50 tmux pane (triage also headless, as `triage report`). CPU is measured over a
fixed window after a warm-up, from /proc/PID/stat of the tool's whole process tree.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

from common import REPO, Spread, TmuxPane, cpu_seconds, have, peak_rss_bytes, process_farm, spread, tree_of

PEERS_VENV = os.path.join(REPO, "bench", ".peers")
GLANCES = os.path.join(PEERS_VENV, "bin", "glances")


@dataclass(frozen=True)
class Tool:
    name: str
    command: Callable[[int, float], str]  # (farm pid, window seconds) -> shell command
    env: Optional[dict[str, str]] = None
    available: Callable[[], bool] = lambda: True


def _btop_home() -> str:
    home = tempfile.mkdtemp(prefix="bench-btop-")
    os.makedirs(os.path.join(home, ".config", "btop"))
    with open(os.path.join(home, ".config", "btop", "btop.conf"), "w") as f:
        f.write("update_ms = 1000\nshown_boxes = \"cpu mem net proc\"\n")
    return home


def tools() -> list[Tool]:
    py = sys.executable
    return [
        Tool("triage (headless)", lambda pid, w: f"{py} -m triage_tui report {pid} --duration {w + 6:.0f} --interval 1 --no-record --format json >/dev/null"),
        Tool("triage (app)", lambda pid, w: f"{py} -m triage_tui {pid} --interval 1 --no-record"),
        Tool("htop", lambda pid, w: "htop -d 10", available=lambda: have("htop")),
        Tool("btop", lambda pid, w: "btop --utf-force", env={"HOME": _btop_home(), "LANG": "C.UTF-8"}, available=lambda: have("btop")),
        Tool("glances", lambda pid, w: f"{GLANCES} -t 1", available=lambda: os.path.exists(GLANCES)),
    ]


def measure(tool: Tool, farm_pid: int, window_s: float, warmup_s: float = 4.0) -> tuple[float, int]:
    """(CPU seconds per refresh, peak RSS bytes) of one run of `tool`."""
    pane = TmuxPane(f"bench-{tool.name.split()[0]}-{os.getpid()}", tool.command(farm_pid, window_s), env=tool.env)
    try:
        time.sleep(warmup_s)  # a measurement window, not a readiness wait: first frames are excluded
        pids = tree_of(pane.pid)
        before = cpu_seconds(pids)
        time.sleep(window_s)
        pids = tree_of(pane.pid)
        after = cpu_seconds(pids)
        rss = peak_rss_bytes(pids)
        return (after - before) / window_s, rss  # refresh is 1 s: per second == per refresh
    finally:
        pane.close()


def run(repeats: int = 3, window_s: float = 20.0, farm: int = 1000) -> list[tuple[str, Optional[Spread], Optional[Spread]]]:
    rows: list[tuple[str, Optional[Spread], Optional[Spread]]] = []
    os.chdir(REPO)
    with process_farm(farm) as farm_pid:
        results: dict[str, tuple[list[float], list[float]]] = {}
        for _ in range(repeats):  # interleave tools so drift on the machine hits all of them alike
            for tool in tools():
                if not tool.available():
                    continue
                cpu, rss = measure(tool, farm_pid, window_s)
                cpus, rsss = results.setdefault(tool.name, ([], []))
                cpus.append(cpu * 1000)
                rsss.append(rss / 2**20)
        for tool in tools():
            if tool.name in results:
                cpus, rsss = results[tool.name]
                rows.append((tool.name, spread(cpus), spread(rsss)))
            else:
                rows.append((tool.name, None, None))
    return rows


def table(rows: list[tuple[str, Optional[Spread], Optional[Spread]]]) -> str:
    lines = ["| tool | CPU ms per refresh (median, range) | peak RSS MiB |", "|---|---|---|"]
    for name, cpu, rss in rows:
        if cpu is None or rss is None:
            lines.append(f"| {name} | not installed | – |")
        else:
            lines.append(f"| {name} | {cpu.fmt(' ms')} | {rss.fmt(' MiB', 0)} |")
    base = {name: cpu for name, cpu, _ in rows if cpu is not None}
    for mine in ("triage (headless)", "triage (app)"):
        if mine not in base:
            continue
        ratios = [f"{mine} / {peer}: {base[mine].median / base[peer].median:.2f}"
                  for peer in ("htop", "btop", "glances") if peer in base and base[peer].median > 0]
        if ratios:
            lines.append("")
            lines.append("Ratios (CPU per refresh): " + "; ".join(ratios))
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(run(repeats=int(os.environ.get("BENCH_REPEATS", "3")), window_s=float(os.environ.get("BENCH_WINDOW", "20")))))

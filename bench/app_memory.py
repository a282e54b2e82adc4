"""The app's memory while it watches: RSS of the app's process at 15 s, 60 s and 120 s (#18: ≤ 80 MiB).

The app watches a farm of 1,000 idle processes in a 200x50 tmux pane, at a 1 s refresh, with
--no-record --no-auto-stacks; with BENCH_BEFORE that tree's app runs at the same time on the same farm,
so both see the same machine. RSS is VmRSS of the python process (not its peak), read from /proc.

    python3 bench/app_memory.py
    BENCH_BEFORE=/path/to/older/checkout BENCH_PROCESSES=1000 python3 bench/app_memory.py
    BENCH_SAMPLES=15,60,120,300,600 python3 bench/app_memory.py   # a longer watch
"""

from __future__ import annotations

import os
import sys
import time

from common import REPO, TmuxPane, load_line, process_farm, tree_of

SAMPLES_S = tuple(int(x) for x in os.environ.get("BENCH_SAMPLES", "15,60,120").split(","))  # seconds


def rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def app_pid(pane: TmuxPane) -> int:
    """The python process of the app (the pane runs `cd … && python3 -m triage_tui …`)."""
    for pid in tree_of(pane.pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"triage_tui" in f.read():
                    return pid
        except OSError:
            continue
    raise RuntimeError("no triage process in the pane")


def run(count: int = 1000) -> dict[str, list[float]]:
    trees = {"after": str(REPO)}
    before = os.environ.get("BENCH_BEFORE")
    if before:
        trees["before"] = before
    out: dict[str, list[float]] = {name: [] for name in trees}
    with process_farm(count) as farm:
        panes = {name: TmuxPane(f"bench-mem-{os.getpid()}-{name}",
                                f"cd {code} && env -u PYTHONDONTWRITEBYTECODE {sys.executable} -m triage_tui {farm} "
                                "--interval 1 --no-record --no-auto-stacks")
                 for name, code in trees.items()}
        try:
            time.sleep(2)
            pids = {name: app_pid(pane) for name, pane in panes.items()}
            start = time.monotonic()
            for at in SAMPLES_S:
                time.sleep(max(0.0, start + at - time.monotonic()))
                for name, pid in pids.items():
                    out[name].append(rss_mib(pid))
        finally:
            for pane in panes.values():
                pane.close()
    return out


def table(results: dict[str, list[float]]) -> str:
    lines = ["| app RSS | " + " | ".join(results) + " |", "|---|" + "---|" * len(results)]
    for i, at in enumerate(SAMPLES_S):
        lines.append(f"| {at} s | " + " | ".join(f"{values[i]:.0f} MiB" for values in results.values()) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print("before: " + load_line())
    print(table(run(int(os.environ.get("BENCH_PROCESSES", "1000")))))
    print("after: " + load_line())

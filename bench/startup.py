"""Start-up: from the command to the first full frame, triage against htop and glances.

Each tool starts in a fresh 200x50 tmux pane; the clock stops when capture-pane shows the markers that
mean the first frame with process rows is drawn. Polling capture-pane costs a few ms, the same for all.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Optional

from common import REPO, Spread, TmuxPane, have, process_farm, spread
from overhead import GLANCES

Case = tuple[str, Callable[[int], str], Callable[[int], Sequence[str]], Callable[[], bool]]


def cases() -> list[Case]:
    py = sys.executable
    return [
        # triage's first full frame: the process pane lists the target root and the hypotheses pane is drawn
        ("triage (app)", lambda pid: f"{py} -m triage_tui {pid} --interval 1 --no-record",
         lambda pid: (str(pid), "Hypotheses"), lambda: True),
        ("htop", lambda pid: "htop -d 10", lambda pid: ("Load average", "PID"), lambda: have("htop")),
        ("glances", lambda pid: f"{GLANCES} -t 1", lambda pid: ("CPU", "MEM", "PID"), lambda: os.path.exists(GLANCES)),
    ]


def run(repeats: int = 5) -> list[tuple[str, Optional[Spread]]]:
    os.chdir(REPO)
    results: dict[str, list[float]] = {}
    with process_farm(50) as farm_pid:
        for i in range(repeats):
            for name, command, markers, available in cases():
                if not available():
                    continue
                pane = TmuxPane(f"bench-start-{i}-{name.split()[0]}", command(farm_pid))
                try:
                    results.setdefault(name, []).append(pane.wait_for(markers(farm_pid)) * 1000)
                finally:
                    pane.close()
    return [(name, spread(results[name]) if name in results else None) for name, *_ in cases()]


def table(rows: list[tuple[str, Optional[Spread]]]) -> str:
    lines = ["| tool | first full frame, ms (median, range) |", "|---|---|"]
    for name, s in rows:
        lines.append(f"| {name} | {s.fmt(' ms', 0) if s else 'not installed'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(run(int(os.environ.get("BENCH_REPEATS", "5")))))

"""Start-up: from the command to triage's first frame, and to every pane holding data, against htop and glances.

Each tool starts in a fresh 200x50 tmux pane; the clock stops when capture-pane shows the markers of a
frame. For triage two clocks: its first frame (the layout: the first and last pane's titles), and every
pane holding data, on the demo's incident started beforehand (the launcher's row in Processes, the RSS
sum in Memory, a log line, a ranked hypothesis, the GPU line, the Stacks pane's text). Python's bytecode caches are warm (a run
first, with PYTHONDONTWRITEBYTECODE unset for the tool), as on an installed triage. Polling capture-pane
costs a few ms, the same for every tool.

    python3 bench/startup.py
    BENCH_BEFORE=/path/to/older/checkout python3 bench/startup.py   # that code's triage too, interleaved
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Optional

from common import REPO, Spread, TmuxPane, have, load_line, spread
from overhead import GLANCES

sys.path.insert(0, str(REPO))

from triage_tui.demo.incident import DemoIncident, DemoInfo  # noqa: E402

WARM = "env -u PYTHONDONTWRITEBYTECODE "  # the tool's own caches written and read, as on an install

Case = tuple[str, Callable[[DemoInfo], str], Callable[[DemoInfo], Sequence[str]], Callable[[], bool]]


def _triage(code: str, label: str) -> list[Case]:
    py = sys.executable

    def command(demo: DemoInfo) -> str:
        return (f"cd {code} && {WARM}{py} -m triage_tui {demo.launcher_pid} --log {demo.log_path} --port {demo.port} "
                "--interval 1 --no-record --no-auto-stacks")

    return [
        (f"triage{label}: first frame", command, lambda demo: ("1 Processes", "6 Hypotheses"), lambda: True),
        (f"triage{label}: every pane with data", command,
         lambda demo: ("▾ python3", "RSS sum", "Load weight", "1. ", "GPUs:", "No stack capture"), lambda: True),
    ]


def cases() -> list[Case]:
    out = _triage(str(REPO), "")
    before = os.environ.get("BENCH_BEFORE")
    if before:
        out += _triage(before, " before")
    out += [
        ("htop", lambda demo: "htop -d 10", lambda demo: ("Load average", "PID"), lambda: have("htop")),
        ("glances", lambda demo: f"{GLANCES} -t 1", lambda demo: ("CPU", "MEM", "PID"), lambda: os.path.exists(GLANCES)),
    ]
    return out


def run(repeats: int = 5) -> list[tuple[str, Optional[Spread]]]:
    os.chdir(REPO)
    results: dict[str, list[float]] = {}
    with DemoIncident(workers=8, weights_mb=16) as demo:
        info = demo.info
        assert info is not None
        for i in range(repeats + 1):  # the first round warms the bytecode caches and is not counted
            for name, command, markers, available in cases():
                if not available():
                    continue
                pane = TmuxPane(f"bench-start-{os.getpid()}-{i}-{len(results)}", command(info))
                try:
                    took = pane.wait_for(markers(info)) * 1000
                finally:
                    pane.close()
                if i > 0:
                    results.setdefault(name, []).append(took)
    return [(name, spread(results[name]) if name in results else None) for name, *_ in cases()]


def table(rows: list[tuple[str, Optional[Spread]]]) -> str:
    lines = ["| tool | ms from the command (median, range) |", "|---|---|"]
    for name, s in rows:
        lines.append(f"| {name} | {s.fmt(' ms', 0) if s else 'not installed'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print("before: " + load_line())
    print(table(run(int(os.environ.get("BENCH_REPEATS", "5")))))
    print("after: " + load_line())

"""The app's UI-thread CPU per refresh of a real watch: a 1,000-process farm recorded, then replayed into the app.

    python3 bench/app_replay.py                    # records 100 refreshes of a 1,000-process farm (1 s apart,
                                                   # `triage report --record`), then replays them
    python3 bench/app_replay.py FILE [CODE ...]    # replays FILE into the app of this checkout, or of each
                                                   # checkout named (before/after in the same run, interleaved)

Each recorded Moment is posted to the app (headless, 200x50) as a refresh would post it, and the UI thread's
CPU is read from its arrival until 80 ms later (the panes updated, the screen painted; the idle loop's own
cost is in it, as it is in a watch). Unlike `app_refresh.py`'s synthetic rows, these Moments carry what a
watch brings: idle-for moving in the first minute, PSS figures arriving, the engine's "idle for N s"
evidence ticking every second. Printed: the median and mean of refreshes 4-24 (the first minute: what
`overhead.py`'s 20 s window after its 4 s warm-up sees) and 41-100 (a tree watched for a while).
Writing to a terminal is not in it (headless): `overhead.py` measures the whole process in tmux.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time

from common import REPO, load_line, process_farm


def record(path: str, refreshes: int = 100) -> None:
    with process_farm(1000) as farm:
        time.sleep(2.0)
        subprocess.run([sys.executable, "-m", "triage_tui", "report", str(farm), "--duration", str(refreshes),
                        "--interval", "1", "--record", path, "--no-auto-stacks", "--format", "json"],
                       cwd=REPO, check=True, stdout=subprocess.DEVNULL)


MEASURE = r'''
import asyncio, json, sys, time
sys.path.insert(0, sys.argv[1])
from triage_tui.record.reader import read_record
from triage_tui.record.replay import ReplayView
from triage_tui.ui.app import TriageApp
from triage_tui.ui.messages import MomentReady

async def main():
    rec = read_record(sys.argv[2])
    moments = rec.moments
    app = TriageApp(ReplayView(rec), interval=1.0, live=False, clock=lambda: moments[-1].taken_at)
    cpus = []
    async with app.run_test(size=(200, 50)) as pilot:
        for _ in range(5):
            await pilot.pause()
        for moment in moments:
            start = time.thread_time()
            app.post_message(MomentReady(moment))
            await asyncio.sleep(0.08)
            cpus.append(time.thread_time() - start)
    print(json.dumps(cpus))

asyncio.run(main())
'''


def measure(code: str, path: str) -> list[float]:
    out = subprocess.run([sys.executable, "-c", MEASURE, code, path], check=True, capture_output=True, text=True)
    return [float(x) for x in out.stdout.strip().splitlines()[-1].strip("[]").split(",")]


def main() -> int:
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(prefix="bench-replay-"), "watch.jsonl")
    if not os.path.exists(path):
        record(path)
    codes = sys.argv[2:] or [REPO]
    print(load_line())
    for round_ in range(2):  # interleaved: drift on the machine hits every checkout alike
        for code in codes:
            cpus = measure(code, path)
            early, late = cpus[3:24], cpus[40:]
            print(f"{code}: refreshes 4-24 median {statistics.median(early) * 1000:.1f} ms (mean "
                  f"{statistics.mean(early) * 1000:.1f}), 41-{len(cpus)} median {statistics.median(late) * 1000:.1f} ms "
                  f"(mean {statistics.mean(late) * 1000:.1f}) of UI-thread CPU per refresh")
    print(load_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

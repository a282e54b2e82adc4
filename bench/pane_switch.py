"""How long a pane switch (a key 1-6) takes in the app, headless, on the demo-shaped sample incident.

    python bench/pane_switch.py [WIDTHxHEIGHT ...]        (default: 200x50 80x24)

Presses 1..6 five times round (after three rounds of warm-up) and times each press until the app is idle
again (the key handled, focus moved, the screen repainted). Prints the median and 90th percentile.

Why it used to cost more: textual's Footer re-mounts one widget per key on every focus change, which is
a layout and a full-screen repaint per switch; the app's own one-line KeyHints updates in place.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triage_tui.ui.app import TriageApp  # noqa: E402
from triage_tui.ui.sample import SampleIncident, build_snapshots  # noqa: E402


async def switch_times(width: int, height: int, rounds: int = 5) -> list[float]:
    incident = SampleIncident(build_snapshots(80), preload=60)
    app = TriageApp(incident, interval=3600, clock=lambda: incident.latest.taken_at)
    times: list[float] = []
    async with app.run_test(size=(width, height)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        for n in range(3 + rounds):
            for key in "123456":
                start = time.perf_counter()
                await pilot.press(key)
                await pilot.pause()
                if n >= 3:
                    times.append(time.perf_counter() - start)
    return times


def main() -> int:
    sizes = sys.argv[1:] or ["200x50", "80x24"]
    for size in sizes:
        width, height = (int(x) for x in size.split("x"))
        times = sorted(asyncio.run(switch_times(width, height)))
        p90 = times[int(len(times) * 0.9)]
        print(f"{size}: pane switch median {statistics.median(times) * 1000:.0f} ms, p90 {p90 * 1000:.0f} ms "
              f"({len(times)} switches)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Render the app to SVG: on the committed recording of a real `triage demo` run, and on a deterministic
source shaped like the reference incident (docs/incident.md), which has the 8 GPUs a laptop demo cannot show.

    python scripts/screenshots.py [OUT_DIR]                   (default: screenshots/; both sources)
    python scripts/screenshots.py OUT_DIR --from RECORD.jsonl   (only that recorded incident)

screenshots/demo-incident.jsonl was recorded with
`triage demo --report --duration 16 --interval 1 --auto-stacks --record screenshots/demo-incident.jsonl`.

The source is triage_tui.demo.fixture's FixtureHost: raw snapshots of a launcher and 8 renamed workers asleep
at 0 % CPU, RSS 425 GB each against a small PSS, the log silent after the 100 % weight-loading bar, port 8000
refused, 8 GPUs at 76017 MiB and 0 %, diagnosed by the real engine (no hypothesis is written by hand). Times
render in UTC so the files only change when the app does.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triage_tui.demo.fixture import FixtureHost, build_snapshots  # noqa: E402
from triage_tui.incident import Incident  # noqa: E402
from triage_tui.ui.app import TriageApp  # noqa: E402

DEMO_RECORD = Path(__file__).resolve().parents[1] / "screenshots" / "demo-incident.jsonl"
SHOTS = (
    # (file name, terminal size, keys pressed before the shot)
    ("triage-200x50.svg", (200, 50), ()),
    ("triage-200x50-stacks.svg", (200, 50), ("S",)),
    ("triage-120x40.svg", (120, 40), ()),
    ("triage-120x40-stacks.svg", (120, 40), ("S",)),
    ("triage-80x24.svg", (80, 24), ()),
    ("triage-80x24-stacks.svg", (80, 24), ("S",)),
    ("triage-80x24-hypotheses-zoomed.svg", (80, 24), ("S", "6", "z", "enter")),
    ("triage-80x24-memory-zoomed.svg", (80, 24), ("3", "z")),
    ("triage-80x24-stacks-zoomed.svg", (80, 24), ("S", "5", "z")),
    ("triage-80x24-help.svg", (80, 24), ("question_mark",)),
)


def open_source(record: str | None):
    if record is None:
        host = FixtureHost(build_snapshots(80))
        incident = Incident(host, host.target, host.options)
        for _ in range(60):
            incident.tick()
        return incident, True
    from triage_tui.record.reader import read_record
    from triage_tui.record.replay import ReplayView

    recording = read_record(record)
    return ReplayView(recording, preload=len(recording.moments)), False


async def shoot(out: Path, name: str, size: tuple[int, int], keys: tuple[str, ...], record: str | None = None) -> None:
    incident, live = open_source(record)
    app = TriageApp(incident, interval=3600, live=live, clock=lambda: incident.latest.taken_at, export_dir=str(out))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
        app.clear_notifications()  # the toasts `S` raises would cover the panes they talk about
        await pilot.pause()
        app.save_screenshot(filename=name, path=str(out))


def main() -> int:
    args = sys.argv[1:]
    record = None
    if "--from" in args:
        at = args.index("--from")
        record = args[at + 1]
        del args[at: at + 2]
    out = Path(args[0] if args else Path(__file__).resolve().parents[1] / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    os.environ["TZ"] = "UTC"
    time.tzset()
    sources = [record] if record else [None, str(DEMO_RECORD)]
    for source in sources:
        for name, size, keys in SHOTS:
            file_name = name if source is None else "demo-" + name
            asyncio.run(shoot(out, file_name, size, keys, source))
            print(out / file_name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

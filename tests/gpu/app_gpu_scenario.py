"""Runs the real app (LocalHost + Incident + TriageApp, headless) on the fake NVML driver, in its own process.

The binding caches the loaded library for the life of the process, so every scenario needs a
fresh interpreter with LD_LIBRARY_PATH at the fake and FAKE_NVML_STATE at its state file.

  python app_gpu_scenario.py TARGET_PID STEPS.json OUT.json

STEPS.json is a list of steps; each is {"state": TEXT or null, "poke": [FIFO_IN, FIFO_OUT] or null}.
For each step: the state text (if any) replaces the fake's state file atomically; a poke writes a
line to FIFO_IN and waits for the launcher's answer on FIFO_OUT (it has forked one more child by
then); then the step is refreshed (the first by the app's mount, later ones by pressing `r`), the
script waits until the refresh worker is done, and records what the GPU pane and the Processes
pane show. OUT.json gets the list of records.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from triage_tui.host.select import local_host
from triage_tui.incident import Incident
from triage_tui.ui.app import TriageApp
from triage_tui.ui.panes.processes import ProcessesPane


def write_state(text: str) -> None:
    path = Path(os.environ["FAKE_NVML_STATE"])
    tmp = path.with_name(path.name + ".app.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)  # a new inode: the fake re-reads it on its next call


def poke(fifo_in: str, fifo_out: str) -> int:
    """Ask the launcher for one more child; its answer (the child's PID) is the ready handshake."""
    with open(fifo_in, "w") as f:
        f.write("go\n")
    with open(fifo_out) as f:
        return int(f.read().strip())


def record(app: TriageApp) -> dict[str, Any]:
    pane = app.query_one(ProcessesPane)
    table = pane.table
    gpu_column = {str(row.process.pid): str(table.get_cell(str(row.process.pid), "GPU")) for row in pane.rows}
    latest_moment = app.latest
    latest = latest_moment.snapshot if latest_moment else None
    body = app.query_one("#gpu-body").content  # type: ignore[attr-defined]
    return {
        "snapshots": len(app.timeline),
        "taken_at": latest.taken_at if latest else None,
        "gpu_text": str(body),
        "gpu_height": app.query_one("#gpus").region.height,
        "gpu_error": latest.gpus.error.reason if latest and latest.gpus.error is not None else None,
        "process_gpu_column": gpu_column,
        "process_subtitle": str(pane.border_subtitle),
        "last_error": app.last_error,
    }


async def settle(pilot: Any) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def run(target_pid: int, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    host = local_host()
    incident = Incident(host, host.resolve([str(target_pid)]))
    if steps[0].get("state") is not None:
        write_state(steps[0]["state"])  # before the app mounts: its first refresh reads this
    # a long interval: the timer never fires here; refreshes come from mount and `r` only
    app = TriageApp(incident, interval=3600)
    records = []
    try:
        async with app.run_test(size=(200, 50)) as pilot:
            await settle(pilot)
            records.append({**record(app), "poked": None})
            for step in steps[1:]:
                if step.get("state") is not None:
                    write_state(step["state"])
                poked = poke(*step["poke"]) if step.get("poke") else None
                await pilot.press("r")
                await settle(pilot)
                records.append({**record(app), "poked": poked})
    finally:
        incident.close()
    return records


def main() -> int:
    target_pid, steps_file, out_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    steps = json.loads(Path(steps_file).read_text())
    records = asyncio.run(run(target_pid, steps))
    Path(out_file).write_text(json.dumps(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())

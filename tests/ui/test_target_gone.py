"""The whole target exits: the Processes pane keeps its last rows, marked gone, under a line with
the time and each exit; the engine's top cause says the target is gone (never Healthy)."""

from __future__ import annotations

import dataclasses

from tests.ui.conftest import fixture_incident, make_app, settle
from triage_tui.demo.fixture import LAUNCHER, WORKERS, build_snapshots
from triage_tui.model.snapshot import ExitedProcess, KernelEvent, KernelReport, SourceStatus
from triage_tui.model.unavailable import Unavailable


def gone_series() -> list:
    alive = build_snapshots(6)
    last = alive[-1]
    exited = (ExitedProcess(LAUNCHER, "python3", last_seen=last.taken_at + 2, exit_code=1),
              ExitedProcess(WORKERS[3], "sglang::scheduler_TP3", last_seen=last.taken_at + 2, exit_code=-9),
              ExitedProcess(WORKERS[4], "sglang::scheduler_TP4", last_seen=last.taken_at + 2,
                            exit_code=Unavailable("exit status hidden: another user's process")))
    kernel = KernelReport(events=(KernelEvent("oom-kill", WORKERS[3], "Out of memory: Killed process 46436 (python3)",
                                              last.taken_at + 1),))
    gone = [dataclasses.replace(last, taken_at=last.taken_at + 2 * (i + 1), processes=(), exited=exited, kernel=kernel,
                                logs=last.logs) for i in range(3)]
    return [*alive, *gone]  # raw snapshots: the Incident's real engine judges each one


async def test_target_gone_keeps_the_last_moment_and_says_what_is_known(tmp_path) -> None:
    snaps = gone_series()
    incident = fixture_incident(snaps, preload=len(snaps) - 1)
    app = make_app(incident, export_dir=str(tmp_path))
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        line = app.query_one("#proc-gone")
        assert line.display
        text = str(line.render())
        assert "TARGET GONE" in text and "last seen alive" in text and "watching for a restart" in text
        assert f"PID {LAUNCHER} (python3)" in text and "exit code 1" in text and "exit code -9" in text
        assert "exit status unknown: exit status hidden" in text and "exit code 0" not in text
        assert "Out of memory: Killed process" in text
        table = app.query_one("#proc-table")
        assert table.row_count == len(snaps[0].processes)  # the last rows seen alive stay
        assert all(str(table.get_row_at(i)[2]) == "gone" for i in range(table.row_count))
        hypotheses = incident.latest.diagnosis.hypotheses
        hyps = {h.id: h for h in hypotheses}
        top = hypotheses[0]
        # the OOM-kill line names a worker the kernel killed: that death is an OOM; the gone target is
        # evidence on its own line, never "every hypothesis unlikely"
        assert top.id in ("oom", "crashed-worker") and top.status == "likely"
        assert "The target is gone" in hyps["crashed-worker"].title and hyps["crashed-worker"].status != "unlikely"
        healthy = hyps["healthy"]
        assert healthy.status == "ruled out"


async def test_an_outage_keeps_the_last_good_moment_and_says_so(tmp_path) -> None:
    snaps = build_snapshots(10)
    # what an SSH host returns while the node cannot be reached: nothing read, the ssh source failing
    down = dataclasses.replace(snaps[-1], taken_at=snaps[-1].taken_at + 2, processes=(), exited=(), logs=(),
                               sources=(SourceStatus("ssh", "failing", 0.0, "disconnected since 14:07:12: Connection refused"),))
    incident = fixture_incident([*snaps[:9], down], preload=9)
    app = make_app(incident, export_dir=str(tmp_path))
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        good = incident.latest
        await pilot.press("r")
        await settle(pilot)
        assert incident.host.ticks >= 10  # the outage was collected and refused, not absorbed
        header = str(app.query_one("#header").render())
        assert "host unreachable" in header and "disconnected since 14:07:12" in header
        assert incident.latest is good and app.query_one("#proc-table").row_count == len(good.snapshot.processes)
        assert not app.query_one("#proc-gone").display  # an outage is not a target gone
        assert all(o.id != "target-gone" for m in incident.timeline for o in m.diagnosis.observations)


LAUNCHER_PROGRAM = """
import subprocess, sys
kids = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]) for _ in range(2)]
print(" ".join(str(k.pid) for k in kids), flush=True)
for k in kids:
    k.wait()
sys.exit(3)  # the workers died: the launcher gives up, as torchrun does
"""


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


async def test_a_real_target_dying_whole_says_target_gone_and_crashed_worker(tmp_path) -> None:
    """A real launcher and two workers: the workers are killed, the launcher exits 3 and is reaped.
    The app keeps the last rows, says TARGET GONE with the launcher's exit code, and the engine calls
    it a crash (crashed-worker not unlikely, healthy ruled out); the app is still running."""
    import os
    import signal
    import subprocess
    import sys

    from triage_tui.host.base import CollectOptions
    from triage_tui.host.local import LocalHost
    from triage_tui.incident import Incident
    from triage_tui.ui.app import TriageApp

    launcher = subprocess.Popen([sys.executable, "-c", LAUNCHER_PROGRAM], stdout=subprocess.PIPE, text=True)
    assert launcher.stdout is not None
    workers = [int(pid) for pid in launcher.stdout.readline().split()]
    host = LocalHost()
    try:
        incident = Incident(host, host.resolve([str(launcher.pid)]), CollectOptions(discover_logs=False))
        app = TriageApp(incident, interval=3600, live=True, export_dir=str(tmp_path))
        async with app.run_test(size=(200, 50)) as pilot:
            await settle(pilot)
            while incident.latest is None:
                await pilot.pause()
            assert len(incident.latest.snapshot.live_pids()) == 3
            for pid in workers:
                os.kill(pid, signal.SIGKILL)
            while _state(launcher.pid) != "Z":  # it reaped its workers and exited: a zombie until we reap it
                await pilot.pause()
            await pilot.press("r")  # the launcher seen as a zombie: its exit status read from /proc
            await settle(pilot)
            launcher.wait()
            await pilot.press("r")  # nothing of the target is left
            await settle(pilot)
            latest = incident.latest
            assert latest is not None and latest.snapshot.live_pids() == ()
            assert app.is_running
            line = app.query_one("#proc-gone")
            assert line.display
            text = str(line.render())
            assert "TARGET GONE" in text and f"PID {launcher.pid}" in text and "exit code 3" in text
            table = app.query_one("#proc-table")
            # the last rows seen alive (here the launcher's zombie row, its workers gone a tick before), marked gone
            rows = [table.get_row_at(i) for i in range(table.row_count)]
            assert [str(r[0]) for r in rows] == [str(launcher.pid)] and all(str(r[2]) == "gone" for r in rows)
            hyps = {h.id: h for h in latest.diagnosis.hypotheses}
            assert "target-gone" in {o.id for o in latest.diagnosis.observations}
            assert hyps["crashed-worker"].status in ("likely", "possible")
            assert "The target is gone" in hyps["crashed-worker"].title
            assert hyps["healthy"].status == "ruled out"
    finally:
        host.close()
        for pid in workers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()

"""Campaigns 4-7 of issue #19, bounded: hostile names and log lines through the CLI faces and the app,
py-spy killed mid-capture, SSH faults and injection attempts over a real sshd on loopback, and kills
of a running triage. Same rules as test_campaigns.py: real processes, bounds from the harness (each
CLI run has a subprocess timeout), never timed assertions; the summary line per campaign counts
cases and failures."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import psutil

from tests.campaigns.conftest import Campaign
from tests.campaigns.test_campaigns import PY, ROOT, _cli, _stopped
from tests.hostile_strings import HOSTILE, raw_controls
from triage_tui.render.plain_text import visible

# ---------------------------------------------------------------- 4. hostile names and log lines through every face
HOSTILE_CHILD = r"""
import ctypes, sys, time
name = sys.argv[1].encode("utf-8", "surrogateescape")[:15]
ctypes.CDLL(None).prctl(15, ctypes.c_char_p(name), 0, 0, 0)   # PR_SET_NAME: the comm the kernel shows
def park():
    time.sleep(600)
park.__code__ = park.__code__.replace(co_name=sys.argv[1], co_filename=sys.argv[1] + ".py")
print("READY", file=sys.stderr, flush=True)
park()
"""


def test_campaign_hostile_names_through_every_face(campaign: Campaign, tmp_path: Path) -> None:
    from triage_tui.collect.logs import LogFollower
    from triage_tui.render.markdown import LOG_LINES

    procs = []
    record = tmp_path / "hostile.jsonl"
    strings = [s for s in HOSTILE if "\x00" not in s]  # argv cannot hold NUL (the kernel's limit, not ours)
    # every hostile string as a log line, in logs short enough that the report shows each whole (LOG_LINES)
    logs = [tmp_path / f"hostile-{n}.log" for n in range(3)]
    for n, log in enumerate(logs):
        log.write_bytes(b"".join(s.encode("utf-8", "surrogateescape") + b"\n" for s in strings[n::3]))
    try:
        for s in strings[:12]:
            p = subprocess.Popen([s, "-c", HOSTILE_CHILD, s], executable=PY, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, errors="surrogateescape")
            procs.append(p)
        for p in procs:
            assert p.stderr is not None and p.stderr.readline().strip() == "READY"
        pids = [str(p.pid) for p in procs]
        log_args = [arg for log in logs for arg in ("--log", str(log))]
        faces = {
            "report md": ["report", "--format", "md", "--duration", "1", "--record", str(record), *log_args, *pids],
            "report json": ["report", "--format", "json", "--duration", "1", "--no-record", *log_args, *pids],
            "replay md": ["replay", "--format", "md", str(record)],  # the recording of the report md run
            "replay json": ["replay", "--format", "json", str(record)],
            "stacks": ["stacks", *pids[:3]],
            "stacks json": ["stacks", "--json", *pids[:3]],
        }
        outputs = {}
        for face, args in faces.items():
            def run(face=face, args=args) -> str | None:
                out = _cli(*args)
                text = out.stdout.decode("utf-8", "replace") + out.stderr.decode("utf-8", "replace")
                outputs[face] = text
                # the stacks face itself prints "Traceback (most recent call last):" per thread: a crash
                # of triage is a non-zero exit or a traceback on stderr
                if out.returncode != 0 or "Traceback" in out.stderr.decode("utf-8", "replace"):
                    return f"exit {out.returncode}: {text[-300:]}"
                raw = raw_controls(text)
                return f"raw in output: {raw}" if raw else None

            campaign.check(face, run)
        md = outputs.get("report md", "")
        for s in strings[:12]:
            campaign.check(f"report md shows the name {s!r} literally", lambda s=s: None if visible(s) in md else "not shown")
        # a log line as the follower reads it (a \r keeps what a terminal would show, tabs expanded,
        # invalid UTF-8 replaced): each such line, made visible, is in the report
        for log in logs:
            follower = LogFollower(str(log))
            lines = [x.text for x in follower.poll().lines][-LOG_LINES:]
            follower.close()
            for line in lines:
                campaign.check(f"report md shows the log line {line!r} literally",
                               lambda line=line: None if visible(line) in md else "not shown")
        stacks = outputs.get("stacks", "")
        for s in strings[:3]:
            campaign.check(f"stacks shows frame {s!r} literally",
                           lambda s=s: None if visible(s) in stacks else "frame name not shown")
        diag = _cli("diagnose", input_bytes="\n".join(HOSTILE).encode("utf-8", "surrogateescape"))
        campaign.check("diagnose", lambda: None if not raw_controls(diag.stdout.decode("utf-8", "replace")) else "raw")
    finally:
        for p in procs:
            p.kill()
            p.wait()

    # the app: the Pilot test's snapshots (names, log lines, frames, hypotheses) through every pane
    import asyncio

    from tests.ui.test_hostile_text import test_hostile_text_is_shown_literally_and_never_raw

    campaign.check("app (Pilot, every pane)",
                   lambda: asyncio.run(test_hostile_text_is_shown_literally_and_never_raw(tmp_path)))
    campaign.check("replay app of the hostile recording", lambda: asyncio.run(_replay_app_paints(record, strings[:12])))
    campaign.done()


async def _replay_app_paints(record: Path, names: list[str]) -> str | None:
    """The replay face: the recorded hostile run opened in the app (as `triage replay FILE` does)."""
    from tests.ui.test_hostile_text import screen_text
    from triage_tui.record.reader import read_record
    from triage_tui.record.replay import ReplayView
    from triage_tui.ui.app import TriageApp

    recording = read_record(record)
    view = ReplayView(recording, preload=len(recording.moments))
    app = TriageApp(view, interval=3600, live=False)
    async with app.run_test(size=(220, 80)) as pilot:
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        painted = screen_text(app)
        if not app.is_running:
            return "the replay app ended"
    raw = raw_controls(painted)
    missing = [n for n in names if "[" in n and visible(n)[:15] not in painted]  # markup-looking names, as text
    return f"raw {raw}" if raw else (f"not shown: {missing}" if missing else None)


# ---------------------------------------------------------------- 5. py-spy killed mid-capture
def test_campaign_pyspy_killed_mid_capture(campaign: Campaign) -> None:
    from triage_tui.collect.stacks import capture_stacks
    from triage_tui.model.options import StackOptions

    rng = random.Random(70)
    for n in range(6):
        target = subprocess.Popen([PY, "-c", "import time\nwhile True: time.sleep(0.01)"])

        def case(target=target) -> str | None:
            done = threading.Event()
            result: list = []
            worker = threading.Thread(target=lambda: (result.append(capture_stacks([target.pid], StackOptions(timeout_s=20))),
                                                      done.set()))
            worker.start()
            delay = rng.random() * 0.5
            end = time.monotonic() + 30
            killed = 0
            while not done.is_set() and time.monotonic() < end:
                for child in psutil.Process().children(recursive=True):
                    try:
                        if "py-spy" in child.name() and child.create_time() + delay <= time.time():
                            child.kill()
                            killed += 1
                    except psutil.NoSuchProcess:
                        pass
                done.wait(0.01)
            worker.join(60)
            if _stopped(target.pid):
                return f"target left stopped (py-spy killed {killed} times)"
            return None if result else "capture never returned"

        try:
            campaign.check(f"kill py-spy mid-capture {n}", case)
        finally:
            target.kill()
            target.wait()
    campaign.done()


# ---------------------------------------------------------------- 6. SSH faults and injection attempts
def test_campaign_ssh_faults_and_injection(campaign: Campaign, node, sleeper_tree: subprocess.Popen, tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    for agentless in (False, True):
        _ssh_mode(campaign, node, sleeper_tree, pwned, agentless)
    campaign.done()


def _ssh_mode(campaign: Campaign, node, sleeper_tree: subprocess.Popen, pwned: Path, agentless: bool) -> None:
    from triage_tui.host.base import CollectOptions, TargetError
    from triage_tui.host.ssh import SshHost
    from triage_tui.incident import HostOutage, Incident

    host = SshHost(node.options(), agentless=agentless, backoff_start_s=0.0)
    mode = "agentless" if agentless else "agent"
    try:
        for spec in (f"name:$(touch {pwned})", f"1; touch {pwned}", f"name:' ; touch {pwned} '", f"`touch {pwned}`",
                     f":8000; touch {pwned}"):
            def inject(spec: str = spec) -> str | None:
                try:
                    host.resolve([spec])
                except TargetError:
                    pass
                return "a file was created" if pwned.exists() else None

            campaign.check(f"{mode}: target {spec!r}", inject)
        target = host.resolve([str(sleeper_tree.pid)])
        for path in (f"/nonexistent/$(touch {pwned})", f"/tmp/x; touch {pwned}", f"/tmp/`touch {pwned}`"):
            def log_inject(path: str = path) -> str | None:
                host.collect(target, CollectOptions(logs=(path,)))
                return "a file was created" if pwned.exists() else None

            campaign.check(f"{mode}: --log {path!r}", log_inject)
        incident = Incident(host, target)
        incident.tick()
        good = incident.latest
        node.server.stop()

        def outage() -> str | None:
            try:
                incident.tick()
            except HostOutage:
                return None if incident.latest is good else "the last good moment was replaced"
            return "an outage read as a snapshot"

        campaign.check(f"{mode}: sshd stopped is an outage", outage)
        node.server.start()

        def back() -> str | None:
            for _ in range(20):
                try:
                    snap = incident.tick().snapshot
                except HostOutage:
                    continue
                return None if len(snap.processes) == 3 else f"{len(snap.processes)} processes after reconnect"
            return "never reconnected"

        campaign.check(f"{mode}: reconnect after sshd restart", back)
    finally:
        host.close()


# ---------------------------------------------------------------- 7. resource safety
def _spies_on(pid: int) -> list[psutil.Process]:
    """The py-spys running on `pid` (triage runs each as `py-spy dump --pid PID ...`)."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmdline = p.info["cmdline"] or []
        if cmdline and os.path.basename(cmdline[0]) == "py-spy" and str(pid) in cmdline:
            found.append(p)
    return found


def test_campaign_resource_safety(campaign: Campaign) -> None:
    def ours_in_tmp() -> set[str]:
        return {n for n in os.listdir("/tmp") if n.startswith(("triage-agent.", "triage-stacks.", "triage-pyspy."))}

    rng = random.Random(59)
    sleeper = subprocess.Popen([PY, "-c", "import time; time.sleep(600)"])
    try:
        for n, sig in enumerate((signal.SIGINT, signal.SIGTERM, signal.SIGKILL, signal.SIGINT, signal.SIGTERM, signal.SIGKILL)):
            def case(sig=sig) -> str | None:
                before = ours_in_tmp()
                proc = subprocess.Popen([PY, "-m", "triage_tui", "report", "--duration", "30", "--no-record",
                                         "--auto-stacks", str(sleeper.pid)], cwd=ROOT, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
                time.sleep(0.3 + rng.random() * 2.0)  # somewhere in its run: start-up, a tick, a capture
                children = psutil.Process(proc.pid).children(recursive=True)
                proc.send_signal(sig)
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    return f"{sig.name} did not end triage"
                # a py-spy a SIGKILLed triage had started finishes its dump and exits by itself: wait for it, and for
                # one it started between the listing above and the signal (its dump holds the target stopped, t)
                late = [p for p in _spies_on(sleeper.pid) if p.pid not in {c.pid for c in children}]
                _, alive = psutil.wait_procs([*children, *late], timeout=60)
                left = [c.pid for c in alive if c.status() != psutil.STATUS_ZOMBIE]
                if left:
                    return f"{sig.name} left processes {left}"
                if _stopped(sleeper.pid):
                    return f"{sig.name} left the target stopped"
                extra = ours_in_tmp() - before
                return f"{sig.name} left {sorted(extra)}" if extra else None

            campaign.check(f"kill {n} ({sig.name})", case)
    finally:
        sleeper.kill()
        sleeper.wait()
    campaign.done()


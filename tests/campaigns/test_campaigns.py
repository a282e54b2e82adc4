"""Bounded versions of the seven campaigns of issue #19, run by `pytest tests` (the README's command).

Each test is one campaign: it tries its cases, counts them and the failures (the summary at the end
of the run prints both), and passes only when none failed. Every case is real: real processes,
real files, the real CLI, py-spy and a real sshd on loopback; bounds come from the harness
(subprocess timeouts), never from timed assertions.
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil

from tests.campaigns.conftest import Campaign
from tests.record_fuzz import check_record, damaged_records

PY = sys.executable
ROOT = Path(__file__).resolve().parents[2]
CLI_TIMEOUT_S = 120  # the harness bound of one CLI run (a hang fails the case, it does not hang the suite)


def _cli(*args: str, input_bytes: bytes | None = None, timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "triage_tui", *args], input=input_bytes, capture_output=True, timeout=timeout,
                          cwd=ROOT, env={**os.environ, "TZ": "UTC"})


def _stopped(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except OSError:
        return False


def _kill_tree(proc: subprocess.Popen) -> None:
    """The parent first (it would start new children while they are killed), then what it left."""
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        children = []
    proc.kill()
    proc.wait()
    for child in children:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass


# ---------------------------------------------------------------- 1. process churn
CHURN = r"""
import os, random, subprocess, sys, time
random.seed(int(sys.argv[1]))
kids = []
print("READY", flush=True)
while True:
    kids.append(subprocess.Popen([sys.executable, "-c",
        f"import time, sys; time.sleep({random.random() * 0.3:.3f}); sys.exit({random.randrange(4)})"]))
    kids = [k for k in kids if k.poll() is None]
    time.sleep(0.05)
"""


def test_campaign_process_churn(campaign: Campaign) -> None:
    from triage_tui.host.base import CollectOptions
    from triage_tui.host.local import LocalHost
    from triage_tui.incident import Incident
    from triage_tui.render.markdown import render_report_markdown
    from triage_tui.render.report_json import render_report_json
    from triage_tui.ui.panes.memory import rss_verdict

    churn = subprocess.Popen([PY, "-c", CHURN, "19"], stdout=subprocess.PIPE, text=True)
    host = LocalHost()
    try:
        assert churn.stdout is not None and churn.stdout.readline().strip() == "READY"
        incident = Incident(host, host.resolve([str(churn.pid)]), CollectOptions(interval_s=0.3, discover_logs=False))
        for tick in range(6):
            moment = incident.tick()
            snap = moment.snapshot

            def figures_true(snap=snap) -> str | None:
                for p in snap.processes:
                    cpu = p.cpu_percent
                    if isinstance(cpu, float) and not (0 <= cpu <= 100 * max(1, p.threads if isinstance(p.threads, int) else 1) + 50):
                        return f"PID {p.pid} CPU {cpu}%"
                for e in snap.exited:
                    if e.exit_code == 0 and False:  # codes 0..3 are all real here; a hidden one is Unavailable
                        return "silent zero"
                t = snap.memory.target
                verdict = rss_verdict(snap.memory)
                if t.pss_covered < t.processes and "x the PSS" in verdict:
                    return f"ratio over different processes: {verdict}"
                return None

            campaign.check(f"tick {tick} figures", figures_true)
            campaign.check(f"tick {tick} markdown", lambda: None if render_report_markdown(incident.timeline[-3:], ()) else "empty")
            campaign.check(f"tick {tick} json", lambda moment=moment: None if json.loads(render_report_json(moment)) else "empty")
            time.sleep(0.3)  # pacing between ticks (the campaign's interval), not a bound on anything
    finally:
        host.close()
        _kill_tree(churn)
    campaign.done()


# ---------------------------------------------------------------- 2. an unprivileged user against root's processes
def test_campaign_unprivileged_user(campaign: Campaign) -> None:
    from tests.realproc.test_true_figures import _run
    from triage_tui.model.unavailable import Unavailable

    user = f"triage-c{uuid.uuid4().hex[:8]}"
    subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", user], check=True, capture_output=True)
    try:
        for n in range(3):
            def hidden() -> str | None:
                child, exited = _run(user)
                codes = [e.exit_code for e in exited if e.pid == child]
                if codes != [] and not (isinstance(codes[0], Unavailable) and "hidden" in codes[0].reason):
                    return f"exit of another user's child read as {codes}"
                return None if codes else "the exit was not seen"

            campaign.check(f"exit status hidden, run {n}", hidden)

        def as_root() -> str | None:
            child, exited = _run(None)
            return None if [(e.pid, e.exit_code) for e in exited] == [(child, 7)] else f"root read {exited}"

        campaign.check("root reads exit 7", as_root)
        def faces_as_user() -> str | None:
            """A collection of root's processes as the user (forked: the interpreter under /root is not
            the user's to run), rendered by the report faces: Unavailable with reasons, no crash."""
            sleeper = subprocess.Popen([PY, "-c", "import time; time.sleep(600)"])
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:
                message = b""
                try:
                    from triage_tui.collect.snapshot import SnapshotCollector
                    from triage_tui.collect.targets import resolve_targets
                    from triage_tui.host.base import CollectOptions
                    from triage_tui.render.markdown import render_report_markdown
                    from triage_tui.render.report_json import render_report_json

                    entry = pwd.getpwnam(user)
                    os.setgroups([])
                    os.setgid(entry.pw_gid)
                    os.setuid(entry.pw_uid)
                    collector = SnapshotCollector()
                    try:
                        target = resolve_targets([str(sleeper.pid)])
                        snaps = [collector.collect(target, CollectOptions(interval_s=0.3)) for _ in range(2)]
                    finally:
                        collector.close()
                    from triage_tui.model.moment import Moment

                    md = render_report_markdown([Moment(s) for s in snaps], ())
                    render_report_json(Moment(snaps[-1]))
                    if "exit code 0" in md:
                        message = b"a silent zero in the report"
                    elif not any(p.error is not None or not isinstance(p.pss_bytes, int) for p in snaps[-1].processes):
                        message = b"root's PSS read as if allowed"
                except BaseException as exc:  # noqa: BLE001 - reported to the parent
                    message = repr(exc).encode()
                os.write(write_end, message)
                os._exit(0)
            os.close(write_end)
            with os.fdopen(read_end, "rb") as pipe:
                message = pipe.read()
            os.waitpid(pid, 0)
            sleeper.kill()
            sleeper.wait()
            return message.decode() or None

        campaign.check(f"collect and report root's process as {user}", faces_as_user)
    finally:
        subprocess.run(["userdel", "-f", user], capture_output=True)
    campaign.check("user removed", lambda: None if user not in {p.pw_name for p in pwd.getpwall()} else "still there")
    campaign.done()


# ---------------------------------------------------------------- 3. malformed input
def test_campaign_malformed_input(campaign: Campaign, tmp_path: Path) -> None:
    from triage_tui.collect.logs import LogFollower

    (tmp_path / "records").mkdir()
    for path in damaged_records(tmp_path / "records", 60, seed=1919):
        campaign.check(f"report --from {path.name}", lambda path=path: check_record(path))

    def rotation(kind: str) -> str | None:
        log = tmp_path / f"rot-{kind}.log"
        log.write_bytes(b"old 1\nold 2\n")
        f = LogFollower(str(log))
        f.poll()
        new = b"".join(b"new %d\n" % i for i in range(30))
        if kind == "append":
            with open(log, "ab") as fh:
                fh.write(new)
        elif kind.startswith("copytruncate"):
            with open(log, "r+b") as fh:
                fh.truncate(0)
            with open(log, "ab") as fh:
                fh.write(new if kind.endswith("refill") else b"new 0\n")
        elif kind.startswith("rename"):
            os.rename(log, str(log) + ".1")
            log.write_bytes(new if kind.endswith("refill") else b"new 0\n")
        elif kind == "delete-recreate":
            os.unlink(log)
            log.write_bytes(new)
        got = [x.text for x in f.poll().lines]
        want_new = [f"new {i}" for i in range(30)] if kind in ("append", "delete-recreate") or kind.endswith("refill") else ["new 0"]
        f.close()
        return None if got == ["old 1", "old 2", *want_new] else f"read {got[:6]}…"

    for kind in ("append", "copytruncate", "copytruncate-refill", "rename", "rename-refill", "delete-recreate"):
        campaign.check(f"log rotation: {kind}", lambda kind=kind: rotation(kind))
    campaign.done()

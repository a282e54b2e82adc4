"""Figures that are true. A child that exits 7 reads "exit 7" to root and "exit status hidden" to nobody,
never "exit code 0"; CPU % is never measured over a few milliseconds.

As another user the kernel prints 0 in /proc/PID/stat's exit-code field (it hides it without
ptrace read access): that 0 was reported as a fact."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import traceback

from triage_tui.collect.processes import ProcessCollector
from triage_tui.collect.targets import resolve_targets, tree_pids
from triage_tui.model import from_json, to_json
from triage_tui.model.snapshot import ExitedProcess
from triage_tui.model.unavailable import Unavailable

PARENT = r"""
import os, sys, time
pid = os.fork()
if pid == 0:
    os._exit(7)
print(pid, flush=True)
sys.stdin.readline()     # the test says when to reap: until then the child is a zombie
os.waitpid(pid, 0)
print("reaped", flush=True)
time.sleep(600)
"""


def _exited_as(user: str | None, parent: subprocess.Popen, child: int) -> list[ExitedProcess]:
    """Two collections (zombie, then reaped) in a forked process running as `user` (None: as we are)."""
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(to_child_w)
            os.close(from_child_r)
            if user is not None:
                entry = pwd.getpwnam(user)
                os.setgroups([])
                os.setgid(entry.pw_gid)
                os.setuid(entry.pw_uid)
            collector = ProcessCollector()
            target = resolve_targets([str(parent.pid)])
            collector.collect(tree_pids(target))
            os.write(from_child_w, b"1")
            os.read(to_child_r, 1)  # reaped now
            collector.collect(tree_pids(target))
            payload = ("[" + ",".join(to_json(e) for e in collector.exited) + "]").encode()
            code = 0
        except BaseException:
            payload = ("ERROR " + traceback.format_exc()).encode()
        os.write(from_child_w, b"\n" + payload)
        os._exit(code)
    os.close(to_child_r)
    os.close(from_child_w)
    assert os.read(from_child_r, 1) == b"1"
    parent.stdin.write("reap\n")
    parent.stdin.flush()
    assert parent.stdout.readline().strip() == "reaped"
    os.write(to_child_w, b"g")
    chunks = []
    while chunk := os.read(from_child_r, 65536):
        chunks.append(chunk)
    os.waitpid(pid, 0)
    text = b"".join(chunks).decode().lstrip("\n")
    assert not text.startswith("ERROR"), text
    import json
    return [from_json(ExitedProcess, json.dumps(e)) for e in json.loads(text)]


def _run(user: str | None) -> tuple[int, list[ExitedProcess]]:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        return child, _exited_as(user, parent, child)
    finally:
        parent.kill()
        parent.wait()


def test_root_reads_the_exit_code_of_a_child_that_exited_7() -> None:
    child, exited = _run(None)
    assert [(e.pid, e.exit_code) for e in exited] == [(child, 7)]


def test_another_user_reads_exit_status_hidden_never_zero() -> None:
    child, exited = _run("nobody")
    assert [e.pid for e in exited] == [child]
    code = exited[0].exit_code
    assert isinstance(code, Unavailable) and "hidden" in code.reason, code


def test_cpu_percent_is_never_measured_over_a_few_milliseconds(monkeypatch) -> None:
    """A busy process read twice 4 ms apart (the report's last tick after a slow PSS read): the second
    read keeps the figure measured over the full window before, and the next read measures from the
    same start. The clock the collector reads is moved by hand, so nothing here depends on speed."""
    import time as real_time

    import triage_tui.collect.processes as processes

    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        clock = [real_time.monotonic()]
        monkeypatch.setattr(processes.time, "monotonic", lambda: clock[0])
        collector = ProcessCollector()
        collector.collect([busy.pid])
        clock[0] += 1.0
        (first,) = collector.collect([busy.pid])
        assert isinstance(first.cpu_percent, float)
        clock[0] += 0.004
        (quick,) = collector.collect([busy.pid])
        assert quick.cpu_percent == first.cpu_percent  # not re-measured over 4 ms
        clock[0] += 1.0
        (later,) = collector.collect([busy.pid])
        sample = collector._previous[busy.pid]
        assert sample.at == clock[0]  # the baseline moved only after a full window
        assert isinstance(later.cpu_percent, float)
    finally:
        busy.kill()
        busy.wait()


def test_a_target_that_is_gone_is_watched_for_a_restart_under_the_same_spec() -> None:
    """name:SPEC: the process exits (the engine's target-gone fact, its exit code), then one started
    under the same name is picked up by the next tick."""
    import uuid

    from triage_tui.host.base import CollectOptions
    from triage_tui.host.local import LocalHost
    from triage_tui.incident import Incident

    tag = f"triage-restart-{uuid.uuid4().hex[:8]}"
    program = f"import sys, time; sys.stdin.readline(); sys.exit(3)  # {tag}"

    def start() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE)

    first = start()
    second = None
    host = LocalHost()
    try:
        incident = Incident(host, host.resolve([f"name:{tag}"]), CollectOptions(interval_s=1.0, discover_logs=False))
        assert incident.tick().snapshot.live_pids() == (first.pid,)
        first.communicate(b"\n")  # exits with 3, reaped by us: the tick sees it gone
        gone = incident.tick()
        assert gone.snapshot.live_pids() == ()
        fact = next(o for o in gone.diagnosis.observations if o.id == "target-gone")
        assert f"root PID {first.pid}" in fact.text
        assert all(h.id != "healthy" or h.status == "ruled out" for h in gone.diagnosis.hypotheses)
        second = start()
        again = incident.tick()
        assert again.snapshot.live_pids() == (second.pid,) and incident.target.roots[0].pid == second.pid
    finally:
        host.close()
        for p in (first, second):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()

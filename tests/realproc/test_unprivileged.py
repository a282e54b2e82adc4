"""One collection run as `nobody` against root's processes: Unavailable values with reasons, no crash."""

from __future__ import annotations

import os
import pwd
import traceback
from typing import Any

import pytest

from triage_tui.collect.snapshot import SnapshotCollector
from triage_tui.collect.targets import resolve_targets
from triage_tui.host.base import CollectOptions
from triage_tui.model import from_json, is_known, to_json
from triage_tui.model.snapshot import Snapshot


def _collect_as_nobody(launcher: int, port: int) -> Snapshot:
    """Fork, drop to nobody, run two ticks of the real collectors, send the snapshot back as JSON.

    A fork rather than `subprocess(user="nobody")`: the interpreter lives under /root (mode 700
    here), which nobody cannot execute; the forked child already has every module loaded."""
    nobody = pwd.getpwnam("nobody")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 1
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            collector = SnapshotCollector()
            try:
                target = resolve_targets([str(launcher)])
                options = CollectOptions(port=port, interval_s=0.1)
                collector.collect(target, options)
                collector.smaps.wait_idle(30)
                payload = to_json(collector.collect(target, options)).encode()
            finally:
                collector.close()
            code = 0
        except BaseException:
            payload = ("ERROR " + traceback.format_exc()).encode()
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
        os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        payload = pipe.read()
    _, status = os.waitpid(pid, 0)
    text = payload.decode()
    assert os.waitstatus_to_exitcode(status) == 0, text
    return from_json(Snapshot, text)


@pytest.fixture(scope="module")
def as_nobody(incident_tree: dict[str, Any]) -> Snapshot:
    return _collect_as_nobody(incident_tree["launcher"], incident_tree["port"])


def test_unprivileged_collection_marks_what_it_cannot_read(incident_tree: dict[str, Any],
                                                            as_nobody: Snapshot) -> None:
    rows = {p.pid: p for p in as_nobody.processes}
    assert incident_tree["launcher"] in rows and set(incident_tree["workers"]) <= set(rows)
    launcher = rows[incident_tree["launcher"]]
    # what /proc shows to everyone is still there
    assert launcher.state == "S" and is_known(launcher.cpu_time_s) and is_known(launcher.rss_bytes)
    assert launcher.user == "root"
    # what needs ptrace access is Unavailable with the reason and a hint, never 0
    # (num_fds is not here: since Linux 6.2 the size of /proc/PID/fd gives the count to anyone)
    for name in ("read_bytes", "write_bytes", "pss_bytes", "uss_bytes", "swap_bytes"):
        value = getattr(launcher, name)
        assert not is_known(value), f"{name} = {value}"
        assert "permission denied" in value.reason and value.hint, f"{name}: {value}"
    assert launcher.error is None  # a denied file marks its field, not the whole row
    assert not is_known(as_nobody.memory.target.pss_sum_bytes)


def test_unprivileged_ports_and_kernel_say_why(as_nobody: Snapshot) -> None:
    assert as_nobody.ports.error is not None and "permission denied" in as_nobody.ports.error.reason
    # a connect (and a request) needs no privilege: a bare listener accepts and never answers
    assert any(p.result in ("accepted", "no answer") for p in as_nobody.ports.probes)
    kernel = as_nobody.kernel
    if kernel.error is not None:
        assert kernel.error.reason and kernel.error.hint
    assert all(s.status != "failing" for s in as_nobody.sources), as_nobody.sources


def test_unprivileged_waits_say_what_they_need(as_nobody: Snapshot) -> None:
    # /proc/PID/task/TID/syscall needs ptrace read access to root's processes: each blocked process says
    # so, with the fix, instead of an empty graph
    assert as_nobody.waits, "no wait item at all"
    denied = [w for w in as_nobody.waits if w.error is not None]
    assert denied and all(w.kind == "unknown" for w in denied)
    assert "permission denied" in denied[0].error.reason and "root" in denied[0].error.hint  # type: ignore[union-attr]

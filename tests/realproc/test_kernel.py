"""Kernel log events for real processes, and the degraded path when the log cannot be read."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time
from pathlib import Path

import pytest

from triage_tui.collect.kernel import KernelLogCollector, logged_while_alive
from triage_tui.model.snapshot import KernelEvent
from triage_tui.model.unavailable import Unavailable


def test_a_real_segfault_of_a_tree_pid_is_reported() -> None:
    collector = KernelLogCollector()
    try:
        before = time.time()
        crash = subprocess.Popen([sys.executable, "-c", "import ctypes; ctypes.string_at(0)"])
        assert crash.wait() == -11
        # the kernel logs the segfault before the parent is woken: no wait needed. The PID's start time is given
        # because PIDs wrap within a CI run: an earlier test's segfault under the same PID is not this one's
        report = collector.collect({crash.pid: before})
    finally:
        collector.close()
    if report.error is not None:  # a container without /dev/kmsg or dmesg: degraded, and it says why
        assert report.error.reason and report.error.hint and report.events == ()
    else:
        assert [e.kind for e in report.events] == ["segfault"]


def test_events_of_other_pids_are_left_out() -> None:
    collector = KernelLogCollector()
    try:
        crash = subprocess.Popen([sys.executable, "-c", "import ctypes; ctypes.string_at(0)"])
        crash.wait()
        report = collector.collect([crash.pid + 1_000_000])
    finally:
        collector.close()
    assert report.events == () and report.error is None


def test_unreadable_kernel_log_is_unavailable_with_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no dmesg to fall back on
    collector = KernelLogCollector(kmsg_path=str(tmp_path / "no-kmsg"))
    report = collector.collect([1])
    assert report.events == ()
    assert report.error is not None and "not readable" in report.error.reason and report.error.hint


def test_a_line_logged_before_the_pid_was_reused_is_left_out() -> None:
    """PIDs wrap (pid_max is 32768 on many nodes): a segfault logged for PID P is about the process that had P
    then, not about one that started with P later. CI wraps PIDs within a run, and a scenario's worker once
    inherited an earlier test's OOM kill this way."""
    collector = KernelLogCollector()
    try:
        before = time.time()
        crash = subprocess.Popen([sys.executable, "-c", "import ctypes; ctypes.string_at(0)"])
        assert crash.wait() == -11
        same = collector.collect({crash.pid: before})
        reused = collector.collect({crash.pid: time.time() + 60.0})
    finally:
        collector.close()
    if same.error is not None:
        pytest.skip(f"kernel log not readable here: {same.error.reason}")
    assert [e.kind for e in same.events] == ["segfault"]
    assert reused.events == ()


def test_logged_while_alive_keeps_a_line_whose_time_is_unknown() -> None:
    event = KernelEvent(kind="oom-kill", pid=7, text="Out of memory: Killed process 7 (python3)",
                        at=Unavailable("no timestamp"))
    assert logged_while_alive(event, 1000.0)
    stamped = dataclasses.replace(event, at=900.0)
    assert not logged_while_alive(stamped, 1000.0) and logged_while_alive(stamped, None)
    assert logged_while_alive(dataclasses.replace(event, at=999.5), 1000.0)  # clock ticks vs microseconds

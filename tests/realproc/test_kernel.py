"""Kernel log events for real processes, and the degraded path when the log cannot be read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from triage_tui.collect.kernel import KernelLogCollector


def test_a_real_segfault_of_a_tree_pid_is_reported() -> None:
    collector = KernelLogCollector()
    try:
        before = collector.collect([])
        if before.error is not None:
            pytest.fail(f"kernel log unreadable as root: {before.error}")
        crash = subprocess.Popen([sys.executable, "-c", "import ctypes; ctypes.string_at(0)"])
        assert crash.wait() == -11
        # the kernel logs the segfault before the parent is woken: no wait needed
        report = collector.collect([crash.pid])
    finally:
        collector.close()
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

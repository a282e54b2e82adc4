"""The one signal triage sends: SIGCONT to undo a stop the capture caused, and only to the same process
(PID and start time), never to a PID reused by another process in the meantime."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from triage_tui.collect.stacks import _undo_stop
from triage_tui.collect.thread_states import process_start, process_state


def _wait_state(pid: int, want: str) -> None:
    for _ in range(2000):  # a condition poll, bounded in count, not a timed assertion
        if process_state(pid) == want:
            return
        time.sleep(0.005)
    raise AssertionError(f"PID {pid} never reached state {want}")


def test_a_reused_pid_is_never_resumed_and_the_same_process_is() -> None:
    child = subprocess.Popen(["sleep", "1000"])
    try:
        _wait_state(child.pid, "S")
        start = process_start(child.pid)
        assert start
        os.kill(child.pid, signal.SIGSTOP)  # stands in for a stop left by a dying py-spy
        _wait_state(child.pid, "T")
        assert _undo_stop(child.pid, "S", start="another process's start") is False
        assert process_state(child.pid) == "T"
        assert _undo_stop(child.pid, "S", start=start) is True
        _wait_state(child.pid, "S")
    finally:
        child.kill()
        child.wait()

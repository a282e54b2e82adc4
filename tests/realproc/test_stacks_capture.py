"""capture_stacks against real stuck programs: barrier with one rank elsewhere, deadlock, busy loop, sleep,
a non-Python process, a process that exits mid-capture, stopped processes, a py-spy that hangs."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from triage_tui.collect.stacks import capture_stacks as capture_raw
from triage_tui.collect.stacks import find_pyspy
from triage_tui.collect.thread_states import process_state
from triage_tui.diagnose.stack_groups import with_groups
from triage_tui.host.base import StackOptions
from triage_tui.model.stacks import ProcessStacks, StackCapture

from .stack_programs import (
    ASLEEP,
    BARRIER_WORKERS,
    BUSY,
    DEADLOCK,
    EXITS_ON_SIGNAL_FROM_FIFO,
    fake_pyspy,
    started,
    started_binary,
    wait_all_blocked,
    wait_blocked,
)


def capture_stacks(pids: Sequence[int], options: StackOptions, **kwargs: Any) -> StackCapture:
    """The capture as the host hands it out: the collector's raw capture, grouped by the diagnosis layer."""
    return with_groups(capture_raw(pids, options, **kwargs))


OPTIONS = StackOptions(timeout_s=20.0)


def _process(capture: StackCapture, pid: int) -> ProcessStacks:
    return next(p for p in capture.processes if p.pid == pid)


def test_pyspy_is_found() -> None:
    assert find_pyspy(), "py-spy is a dependency of triage; install it with pip"


def test_barrier_rank_elsewhere_is_called_out_with_its_departing_frame() -> None:
    with started(BARRIER_WORKERS, "4", name="ranks.py") as (_, info):
        workers = info["workers"]
        for pid in [info["launcher"], *workers]:  # every thread: the helpers' group and the launcher's wait are checked
            wait_all_blocked(pid)
        capture = capture_stacks([info["launcher"], *workers], OPTIONS)

    assert all(_process(capture, pid).error is None for pid in workers)
    main_groups = [g for g in capture.groups if any(tid == pid for pid, tid in g.members)]
    majority = next(g for g in main_groups if set(g.pids) == set(workers[:3]))
    assert majority.wait_kind == "condition"  # multiprocessing Barrier.wait → Condition.wait
    assert not majority.odd_one_out
    odd = [g for g in capture.groups if g.odd_one_out]
    assert [g.pids for g in odd] == [(workers[3],)], "only the rank away from the barrier is odd"
    assert odd[0].departs_at.startswith("worker (ranks.py:"), odd[0].departs_at
    assert odd[0].wait_kind == "condition" and odd[0].wait_frame.startswith("Condition.wait")
    helpers = [g for g in capture.groups if g.frames and g.frames[-2].function == "Thread._bootstrap_inner"]
    assert any(set(g.pids) == set(workers) and not g.odd_one_out for g in helpers), "helper in every worker"
    launcher_group = next(g for g in main_groups if g.pids == (info["launcher"],))
    assert not launcher_group.odd_one_out, "the launcher that forked the ranks is not a rank"
    assert launcher_group.wait_kind == "subprocess"


def test_two_threads_deadlocked_on_two_locks_both_wait_on_a_lock() -> None:
    with started(DEADLOCK, name="deadlock.py") as (_, info):
        pid, tids = info["pid"], info["tids"]
        wait_blocked(pid, [tids["first"], tids["second"]])
        capture = capture_stacks([pid], OPTIONS)
    threads = {t.tid: t for t in _process(capture, pid).threads}
    first, second = threads[tids["first"]], threads[tids["second"]]
    assert (first.wait_kind, second.wait_kind) == ("lock", "lock")
    assert first.wait_frame.startswith("first (deadlock.py:") and first.frames[0].code == "with lock_b:"
    assert second.wait_frame.startswith("second (deadlock.py:") and second.frames[0].code == "lock_a.acquire()"
    assert first.kernel_state == "S" and "futex" in first.kernel_syscall + first.kernel_wchan


def test_busy_loop_is_running_and_active() -> None:
    with started(BUSY) as (_, info):
        capture = capture_stacks([info["pid"]], OPTIONS)
    (thread,) = _process(capture, info["pid"]).threads
    assert thread.status in ("active", "gil")
    assert thread.wait_kind == "running"


def test_sleeping_process_waits_on_sleep() -> None:
    with started(ASLEEP) as (_, info):
        wait_blocked(info["pid"])
        capture = capture_stacks([info["pid"]], OPTIONS)
    process = _process(capture, info["pid"])
    assert process.source == "py-spy" and process.name == "python3"[: len(process.name)]
    (thread,) = process.threads
    assert (thread.status, thread.wait_kind) == ("idle", "sleep")
    assert thread.frames[0].code == "time.sleep(100000)"


def test_non_python_process_gets_the_kernel_view() -> None:
    with started_binary(["sleep", "100000"]) as proc:
        wait_blocked(proc.pid)
        capture = capture_stacks([proc.pid], OPTIONS)
    process = _process(capture, proc.pid)
    assert process.source == "kernel" and process.error is None
    (thread,) = process.threads
    assert thread.frames == () and thread.kernel_state == "S"
    assert thread.kernel_syscall in ("nanosleep", "clock_nanosleep")
    assert thread.kernel_wchan, "wchan is readable as root"
    assert thread.wait_kind == "sleep"
    assert capture.groups[0].key.startswith("kernel|S|")


def test_process_exiting_during_capture_has_an_error_row_and_the_others_arrive(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with started(EXITS_ON_SIGNAL_FROM_FIFO, str(fifo)) as (doomed, doomed_info), started(ASLEEP) as (_, other):
        doomed_pid = doomed_info["pid"]
        wait_blocked(other["pid"])
        # For the doomed PID only: make it exit, wait until it has, then let the real py-spy try.
        pyspy = fake_pyspy(tmp_path, f'''
if [ "$PID" = "{doomed_pid}" ]; then
    echo x > "{fifo}"
    while [ -e /proc/$PID ] && ! grep -q "^State:.*Z" /proc/$PID/status 2>/dev/null; do :; done
fi
exec "$REAL" "$@"''')
        capture = capture_stacks([doomed_pid, other["pid"]], OPTIONS, pyspy=pyspy)
        doomed.wait(timeout=30)
    gone = _process(capture, doomed_pid)
    assert gone.error is not None and "exited" in gone.error.reason
    assert _process(capture, other["pid"]).error is None
    assert _process(capture, other["pid"]).threads[0].wait_kind == "sleep"


def test_process_stopped_before_the_capture_is_left_stopped_and_not_attached() -> None:
    with started(ASLEEP) as (stopped, info), started(ASLEEP) as (_, other):
        wait_blocked(info["pid"])
        wait_blocked(other["pid"])
        os.kill(info["pid"], signal.SIGSTOP)  # the test's stop, not triage's
        os.waitid(os.P_PID, stopped.pid, os.WSTOPPED)
        capture = capture_stacks([info["pid"], other["pid"]], OPTIONS)
        assert process_state(info["pid"]) == "T", "a stop that was not ours must not be undone"
        assert process_state(other["pid"]) not in ("T", "t"), "the other one runs on"
    row = _process(capture, info["pid"])
    assert row.source == "kernel" and not row.resumed
    assert row.error is not None and "stopped" in row.error.reason and "kill -CONT" in row.error.hint
    assert row.threads and row.threads[0].wait_kind == "stopped"
    assert capture.notes == ()
    assert _process(capture, other["pid"]).threads[0].wait_kind == "sleep"


def test_process_left_stopped_by_a_dying_capture_is_resumed_and_recorded(tmp_path: Path) -> None:
    with started(ASLEEP) as (_, victim), started(ASLEEP) as (_, other):
        for info in (victim, other):
            wait_blocked(info["pid"])
        # A py-spy that stops its target and then hangs: exactly what a tracer dying attached leaves behind.
        pyspy = fake_pyspy(tmp_path, f'''
if [ "$PID" = "{victim["pid"]}" ]; then kill -STOP $PID; exec sleep 100000; fi
exec "$REAL" "$@"''')
        capture = capture_stacks([victim["pid"], other["pid"]], StackOptions(timeout_s=2.0), pyspy=pyspy)
        assert process_state(victim["pid"]) != "T", "triage must not leave its own stop behind"
    row = _process(capture, victim["pid"])
    assert row.resumed
    assert row.error is not None and "did not finish" in row.error.reason
    assert capture.notes == (f"resumed PID {victim['pid']} with SIGCONT: the capture had left it stopped (T)",)
    assert not _process(capture, other["pid"]).resumed
    assert _process(capture, other["pid"]).threads[0].wait_kind == "sleep"


def test_a_stop_of_a_process_no_py_spy_attached_to_is_not_undone(tmp_path: Path) -> None:
    """Only an attach can leave a process stopped: a non-Python process stopped meanwhile by someone
    else (here the fake py-spy of its neighbour, standing in for job control) gets no SIGCONT."""
    with started_binary(["sleep", "100000"]) as bystander, started(ASLEEP) as (_, other):
        wait_blocked(bystander.pid)
        wait_blocked(other["pid"])
        pyspy = fake_pyspy(tmp_path, f'''
kill -STOP {bystander.pid}
while ! grep -q "^State:.*T" /proc/{bystander.pid}/status; do :; done
exec "$REAL" "$@"''')
        try:
            capture = capture_stacks([bystander.pid, other["pid"]], OPTIONS, pyspy=pyspy)
            assert process_state(bystander.pid) == "T", "a stop triage did not cause must not be undone"
        finally:
            os.kill(bystander.pid, signal.SIGCONT)
    assert not _process(capture, bystander.pid).resumed
    assert capture.notes == ()


def test_hung_pyspy_is_killed_with_its_children_and_the_others_arrive(tmp_path: Path) -> None:
    child_file = tmp_path / "child.pid"
    with started(ASLEEP) as (_, hung), started(ASLEEP) as (_, other):
        for info in (hung, other):
            wait_blocked(info["pid"])
        pyspy = fake_pyspy(tmp_path, f'''
if [ "$PID" = "{hung["pid"]}" ]; then sleep 100000 & echo $! > "{child_file}"; wait; fi
exec "$REAL" "$@"''')
        capture = capture_stacks([hung["pid"], other["pid"]], StackOptions(timeout_s=2.0), pyspy=pyspy)
    row = _process(capture, hung["pid"])
    assert row.error is not None and "killed" in row.error.reason
    assert row.source == "kernel" and row.threads, "the kernel's view still arrives"
    # killed with its group, it still has to run to its end (a busy machine may not have let it yet): until then
    # it is R, not S; a child that was not killed sleeps on, and the count of tries runs out
    child = int(child_file.read_text())
    for _ in range(2000):
        if process_state(child) in ("", "Z"):
            break
        time.sleep(0.005)
    assert process_state(child) in ("", "Z"), "the hung py-spy's own child is killed too"
    assert _process(capture, other["pid"]).error is None


def test_cli_prints_text_and_json_for_a_real_tree() -> None:
    import json
    import sys

    with started(BARRIER_WORKERS, "3", name="ranks.py") as (_, info):
        for pid in [info["launcher"], *info["workers"]]:  # every thread: a helper on its way would group apart
            wait_all_blocked(pid)
        text = subprocess.run([sys.executable, "-m", "triage_tui", "stacks", str(info["launcher"])],
                              capture_output=True, text=True, timeout=120)
        as_json = subprocess.run([sys.executable, "-m", "triage_tui", "stacks", str(info["launcher"]), "--json"],
                                 capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    odd = info["workers"][2]
    assert f"Odd one out: PID {odd} departs at worker (ranks.py:" in text.stdout
    assert f"[1] 3 threads in 3 processes: PIDs {', '.join(map(str, sorted(info['workers'])))}" in text.stdout
    data = json.loads(as_json.stdout)
    assert [g["pids"] for g in data["groups"] if g["odd_one_out"]] == [[odd]]


def test_native_and_locals_options_reach_py_spy() -> None:
    with started(DEADLOCK, name="deadlock.py") as (_, info):
        pid, tids = info["pid"], info["tids"]
        wait_blocked(pid, [tids["first"], tids["second"]])
        capture = capture_stacks([pid], StackOptions(timeout_s=20.0, native=True, locals=True))
    threads = {t.tid: t for t in _process(capture, pid).threads}
    second = threads[tids["second"]]
    assert any(f.native for f in second.frames), "--native adds native frames"
    assert second.wait_kind == "lock"
    run = next(f for f in second.frames if f.function == "Thread.run")
    assert "self" in run.locals, "--locals adds each frame's local variables"


def test_concurrency_bounds_the_py_spys_running_at_once(tmp_path: Path) -> None:
    running, seen = tmp_path / "running", tmp_path / "seen"
    running.mkdir()
    # Each fake py-spy marks itself running, then looks (for a moment) for more than 2 running at once.
    pyspy = fake_pyspy(tmp_path, f'''
touch "{running}/$$"
for i in $(seq 50); do ls "{running}" | wc -l >> "{seen}"; sleep 0.01; done
rm "{running}/$$"
exec "$REAL" "$@"''')
    with started(ASLEEP) as (_, a), started(ASLEEP) as (_, b), started(ASLEEP) as (_, c), started(ASLEEP) as (_, d):
        pids = [a["pid"], b["pid"], c["pid"], d["pid"]]
        for pid in pids:
            wait_blocked(pid)
        capture = capture_stacks(pids, StackOptions(timeout_s=20.0, concurrency=2), pyspy=pyspy)
    counts = [int(x) for x in seen.read_text().split()]
    assert max(counts) == 2, "two at a time, never more"
    assert all(p.error is None and p.threads[0].wait_kind == "sleep" for p in capture.processes)


def test_a_py_spy_that_exits_0_with_no_stack_is_an_error_not_an_empty_capture(tmp_path: Path) -> None:
    """A broken or stand-in py-spy that prints nothing: the row says so and shows the kernel view."""
    with started(ASLEEP) as (_, info):
        wait_blocked(info["pid"])
        capture = capture_stacks([info["pid"]], OPTIONS, pyspy=fake_pyspy(tmp_path, "echo '[]'"))  # valid JSON, no thread
    row = _process(capture, info["pid"])
    assert row.error is not None and "printed no stack" in row.error.reason
    assert row.source == "kernel" and row.threads and row.threads[0].kernel_state == "S"

"""The stacks text formatter, line by line."""

from __future__ import annotations

import time

from tests.unit.stack_samples import eight_ranks_one_compiling
from triage_tui.diagnose.stack_groups import with_groups
from triage_tui.model.stacks import Frame, ProcessStacks, StackCapture, ThreadStack
from triage_tui.model.unavailable import Unavailable
from triage_tui.render.stacks_text import format_frame, format_traceback, render_capture

AT = time.mktime((2026, 11, 29, 12, 0, 5, 0, 0, -1))


def test_frame_lines_read_like_a_python_traceback() -> None:
    frame = Frame("Queue.get", "/py/queue.py", 171, code="self.not_empty.wait()", locals={"block": "True"})
    assert format_frame(frame) == [
        '  File "/py/queue.py", line 171, in Queue.get',
        "    self.not_empty.wait()",
        "      block = True",
    ]
    assert format_frame(frame, show_locals=False) == format_frame(frame)[:2]
    native = Frame("PyThread_acquire_lock_timed", "/lib/libpython3.11.so", 0, native=True)
    assert format_frame(native) == ['  File "/lib/libpython3.11.so", in PyThread_acquire_lock_timed (native)']


def test_traceback_is_outermost_first() -> None:
    inner, outer = Frame("inner", "/a.py", 2), Frame("<module>", "/a.py", 9)
    assert format_traceback([inner, outer]) == [
        "Traceback (most recent call last):",
        '  File "/a.py", line 9, in <module>',
        '  File "/a.py", line 2, in inner',
    ]


def test_whole_capture_line_by_line() -> None:
    processes = eight_ranks_one_compiling()
    processes.append(ProcessStacks(pid=300, name="sleep", source="kernel", threads=(
        ThreadStack(300, 300, "sleep", "idle", kernel_state="S", kernel_wchan="hrtimer_nanosleep",
                    kernel_syscall="clock_nanosleep", kernel_stack=("hrtimer_nanosleep", "do_syscall_64")),)))
    processes.append(ProcessStacks(pid=301, name="python3", source="kernel", error=Unavailable(
        "permission denied: no CAP_SYS_PTRACE (a container started without it?)", "start the container with --cap-add SYS_PTRACE")))
    capture = with_groups(StackCapture(
        taken_at=AT, pids=tuple(p.pid for p in processes), processes=tuple(processes), duration_ms=812.4,
        notes=("resumed PID 240 with SIGCONT: the capture had left it stopped (T)",),
    ))
    lines = render_capture(capture).splitlines()
    assert lines[:9] == [
        "Stacks of 11 processes (18 threads) at 12:00:05, in 812 ms: 1 by kernel, 9 by py-spy",
        "5 distinct stacks",
        "Odd one out: PID 235 departs at Scheduler.run_batch (scheduler.py:1510) (compile)",
        "note: resumed PID 240 with SIGCONT: the capture had left it stopped (T)",
        "",
        "Problems:",
        "  PID 301 (python3): permission denied: no CAP_SYS_PTRACE (a container started without it?)",
        "      fix: start the container with --cap-add SYS_PTRACE",
        "",
    ]
    start = lines.index("[2] 7 threads in 7 processes: PIDs 200, 210, 220, 230, 240, 250, 260")
    assert lines[start + 1: start + 4] == [
        "    waits on: collective at all_reduce (distributed_c10d.py:2501)",
        "    threads: idle 7 (MainThread)",
        "Traceback (most recent call last):",
    ]
    assert lines[start + 4] == '  File "<string>", line 1, in <module>'
    assert lines[start + 9] == '  File "/site/torch/distributed/distributed_c10d.py", line 2501, in all_reduce'
    odd = lines.index("[3] 1 thread in 1 process: PID 235  << ODD ONE OUT")
    assert lines[odd + 1: odd + 4] == [
        "    departs from the majority at: Scheduler.run_batch (scheduler.py:1510)",
        "    waits on: compile at compile (compiler.py:280)",
        "    threads: active 1 (MainThread)",
    ]
    assert lines[odd + 9] == ('  File "/site/sglang/srt/managers/scheduler.py", line 1510, in Scheduler.run_batch'
                              "   <-- departs from the majority here")
    kernel = lines.index("[5] 1 thread in 1 process: PID 300")
    assert lines[kernel + 1: kernel + 6] == [
        "    waits on: sleep at hrtimer_nanosleep",
        "    threads: idle 1 (sleep)",
        "Kernel view (no Python stack): state S, wchan hrtimer_nanosleep, syscall clock_nanosleep",
        "  hrtimer_nanosleep",
        "  do_syscall_64",
    ]


def test_unchanged_group_says_for_how_long() -> None:
    from dataclasses import replace

    capture = with_groups(StackCapture(taken_at=AT, pids=(1,), processes=(ProcessStacks(1, threads=(
        ThreadStack(1, 1, "MainThread", "idle", (Frame("<module>", "/a.py", 3, code="time.sleep(9)"),)),)),)))
    capture = replace(capture, groups=(replace(capture.groups[0], unchanged_for_s=42.4),))
    assert "    unchanged for 42 s (same stack in the earlier capture)" in render_capture(capture).splitlines()

"""Grouping, odd one out and unchanged-between-captures on hand-built captures."""

from __future__ import annotations

import dataclasses

from triage_tui.diagnose.stack_groups import compare_captures, group_stacks, stack_key, with_groups
from triage_tui.model.stacks import Frame, ProcessStacks, StackCapture, ThreadStack

C10D = "/site/torch/distributed/distributed_c10d.py"
SCHED = "/site/sglang/srt/managers/scheduler.py"
OUTER = (Frame("spawn_main", "/py/multiprocessing/spawn.py", 122), Frame("<module>", "<string>", 1))
LOOP = (Frame("Scheduler.event_loop_normal", SCHED, 900), Frame("run_scheduler_process", SCHED, 2500), *OUTER)
IN_ALL_REDUCE = (Frame("all_reduce", C10D, 2501), Frame("Scheduler.run_batch", SCHED, 1500), *LOOP)
IN_COMPILE = (Frame("compile", "/site/triton/compiler/compiler.py", 280),
              Frame("Scheduler.run_batch", SCHED, 1510), *LOOP)
HELPER = (Frame("Condition.wait", "/py/threading.py", 327), Frame("Event.wait", "/py/threading.py", 629),
          Frame("watchdog_loop", "/site/sglang/srt/utils.py", 50), Frame("Thread._bootstrap", "/py/threading.py", 1002))
LAUNCHER = (Frame("Popen.wait", "/py/multiprocessing/popen_fork.py", 43),
            Frame("launch_server", "/site/sglang/launch_server.py", 14),
            Frame("<module>", "/site/sglang/launch_server.py", 20))


def rank(pid: int, main: tuple[Frame, ...], ppid: int = 100, status: str = "idle") -> ProcessStacks:
    return ProcessStacks(pid=pid, ppid=ppid, threads=(
        ThreadStack(pid, pid, "MainThread", status, main),
        ThreadStack(pid, pid + 1, "Thread-2 (watchdog_loop)", "idle", HELPER),
    ))


def eight_ranks_one_compiling() -> list[ProcessStacks]:
    ranks = [rank(200 + i * 10, IN_ALL_REDUCE) for i in range(7)]
    ranks.insert(3, rank(230 + 5, IN_COMPILE, status="active"))
    launcher = ProcessStacks(pid=100, ppid=1, threads=(ThreadStack(100, 100, "MainThread", "idle", LAUNCHER),))
    return [launcher, *ranks]


def test_identical_stacks_become_one_group_ordered_by_size() -> None:
    groups = group_stacks(eight_ranks_one_compiling())
    sizes = [(len(g.pids), len(g.members)) for g in groups]
    assert sizes == [(8, 8), (7, 7), (1, 1), (1, 1)]
    helper, waiting = groups[0], groups[1]
    assert helper.frames == HELPER and helper.wait_kind == "condition" and not helper.odd_one_out
    assert waiting.frames == IN_ALL_REDUCE and waiting.wait_kind == "collective"
    assert waiting.wait_frame == "all_reduce (distributed_c10d.py:2501)"
    assert waiting.members == tuple((p, p) for p in waiting.pids)


def test_the_rank_elsewhere_is_odd_with_the_frame_where_it_departs() -> None:
    groups = group_stacks(eight_ranks_one_compiling())
    odd = [g for g in groups if g.odd_one_out]
    assert [g.pids for g in odd] == [(235,)]
    assert odd[0].departs_at == "Scheduler.run_batch (scheduler.py:1510)"  # same function, another line
    assert odd[0].wait_kind == "compile"
    launcher = next(g for g in groups if g.pids == (100,))
    assert not launcher.odd_one_out  # another program (another outermost frame)


def test_a_forked_launcher_running_the_same_program_is_not_odd() -> None:
    same_program_launcher = (Frame("Popen.wait", "/py/multiprocessing/popen_fork.py", 43), *LOOP[2:])
    processes = [ProcessStacks(pid=100, ppid=1, threads=(ThreadStack(100, 100, "MainThread", "idle", same_program_launcher),)),
                 *[rank(200 + i, IN_ALL_REDUCE) for i in range(3)]]
    assert [g.pids for g in group_stacks(processes) if g.odd_one_out] == []


def test_no_majority_no_odd_one() -> None:
    processes = [rank(201, IN_ALL_REDUCE), rank(202, IN_COMPILE)]
    assert not any(g.odd_one_out for g in group_stacks(processes))


def test_departing_by_stopping_short_names_the_innermost_frame() -> None:
    short = LOOP  # idle in the loop itself
    processes = [rank(200 + i, IN_ALL_REDUCE) for i in range(3)] + [rank(210, short)]
    (odd,) = [g for g in group_stacks(processes) if g.odd_one_out]
    assert odd.departs_at == "Scheduler.event_loop_normal (scheduler.py:900)"


def test_kernel_only_threads_group_by_state_and_wait_channel() -> None:
    def sleeper(pid: int) -> ProcessStacks:
        return ProcessStacks(pid=pid, source="kernel", threads=(
            ThreadStack(pid, pid, "sleep", "idle", kernel_state="S", kernel_wchan="hrtimer_nanosleep",
                        kernel_syscall="clock_nanosleep"),))
    (group,) = group_stacks([sleeper(1), sleeper(2)])
    assert group.pids == (1, 2) and group.wait_kind == "sleep" and group.wait_frame == "hrtimer_nanosleep"
    assert stack_key(sleeper(1).threads[0]) == "kernel|S|hrtimer_nanosleep|clock_nanosleep"


def test_locals_and_source_text_do_not_split_a_group() -> None:
    a = (Frame("f", "/x.py", 3, locals={"i": "1"}, code="time.sleep(1)"),)
    b = (Frame("f", "/x.py", 3, locals={"i": "2"}, code=""),)
    groups = group_stacks([ProcessStacks(1, threads=(ThreadStack(1, 1, "MainThread", "idle", a),)),
                           ProcessStacks(2, threads=(ThreadStack(2, 2, "MainThread", "idle", b),))])
    assert len(groups) == 1 and groups[0].pids == (1, 2)


def _capture(at: float, processes: list[ProcessStacks]) -> StackCapture:
    return with_groups(StackCapture(taken_at=at, pids=tuple(p.pid for p in processes), processes=tuple(processes)))


def test_unchanged_groups_between_captures_carry_their_age() -> None:
    first = _capture(1000.0, eight_ranks_one_compiling())
    moved = eight_ranks_one_compiling()
    moved[4] = rank(235, IN_ALL_REDUCE)  # the compiling rank finished and joined the others
    second = compare_captures(first, _capture(1030.0, moved))
    helpers = next(g for g in second.groups if g.frames == HELPER)
    assert helpers.unchanged_for_s == 30.0  # the helpers never moved
    waiting = next(g for g in second.groups if g.frames == IN_ALL_REDUCE)
    assert waiting.unchanged_for_s is None  # a new member arrived: not the same group as before
    third = compare_captures(second, _capture(1045.0, moved))
    waiting = next(g for g in third.groups if g.frames == IN_ALL_REDUCE)
    assert waiting.unchanged_for_s == 15.0
    assert next(g for g in third.groups if g.frames == HELPER).unchanged_for_s == 45.0


def test_compare_ignores_an_earlier_capture_taken_later() -> None:
    a, b = _capture(2000.0, eight_ranks_one_compiling()), _capture(1000.0, eight_ranks_one_compiling())
    assert compare_captures(a, b) == b


def test_with_groups_classifies_every_thread() -> None:
    capture = _capture(1.0, eight_ranks_one_compiling())
    kinds = {t.wait_kind for p in capture.processes for t in p.threads}
    assert "unknown" not in kinds and {"collective", "compile", "condition", "subprocess"} <= kinds
    assert dataclasses.replace(capture, groups=()) != capture

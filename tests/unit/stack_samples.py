"""Hand-built stacks shaped like an SGLang TP-8 server: seven ranks in all_reduce, one compiling."""

from __future__ import annotations

from triage_tui.model.stacks import Frame, ProcessStacks, ThreadStack

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

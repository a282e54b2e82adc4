"""The kernel's view of a thread that has just gone to sleep names its wait channel.

On Linux 6.12 on, a task that goes to sleep having run past its share of a crowded CPU can stay on that CPU's run
queue a while (the scheduler's delayed dequeue); /proc/PID/wchan prints "0" for it until it leaves the queue. A
capture that read wchan then showed the thread with no wait channel, grouped apart from its siblings asleep in
the very same place (the group key holds the wait channel). The syscall file is answered only once the task is
off its CPU and its run queue, so the kernel view reads it first (local, and the agentless script over SSH).

A real child shares one CPU with a spinner and runs a few milliseconds each time it is woken, then sleeps on its
pipe again: it is read right after each handshake, the window a busy machine leaves open. No assertion is about
time; the rounds are a count of tries.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from triage_tui.collect.thread_states import kernel_thread
from triage_tui.host.ssh_agentless_stacks import _TASKS, parse_tasks

ROUNDS = 200

CROWDED = r'''
import os, sys, time
r, w = int(sys.argv[1]), int(sys.argv[2])
os.write(w, b"R")
while os.read(r, 1):
    started = time.process_time()
    while time.process_time() - started < 0.003:  # past its share of the CPU it shares with the spinner
        pass
    os.write(w, b"D")
'''


class Crowded:
    """A child on a pipe, pinned with a spinner to one CPU (this process on another where there is one)."""

    def __init__(self) -> None:
        cpus = sorted(os.sched_getaffinity(0))
        self.cpu = cpus[-1]
        self._mine = set(cpus)
        go_r, self.go = os.pipe()
        self.ready, ready_w = os.pipe()
        self.spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        self.proc = subprocess.Popen([sys.executable, "-c", CROWDED, str(go_r), str(ready_w)], pass_fds=(go_r, ready_w))
        os.close(go_r)
        os.close(ready_w)
        for pid in (self.spinner.pid, self.proc.pid):
            os.sched_setaffinity(pid, {self.cpu})
        if len(cpus) > 1:
            os.sched_setaffinity(0, set(cpus[:-1]))
        assert os.read(self.ready, 1) == b"R"

    def round(self) -> None:
        """Wake it; it runs its few milliseconds, answers and goes back to sleep on its pipe."""
        os.write(self.go, b"g")
        assert os.read(self.ready, 1) == b"D"

    def close(self) -> None:
        os.sched_setaffinity(0, self._mine)
        for proc in (self.proc, self.spinner):
            proc.kill()
            proc.wait()
        os.close(self.go)
        os.close(self.ready)


@pytest.fixture
def crowded() -> Iterator[Crowded]:
    child = Crowded()
    try:
        yield child
    finally:
        child.close()


def _wchan_now(pid: int) -> str:
    with open(f"/proc/{pid}/wchan") as f:
        return f.read().strip()


def test_a_thread_just_gone_to_sleep_shows_the_wait_channel_it_sleeps_in(crowded: Crowded) -> None:
    pid = crowded.proc.pid
    asleep = 0
    for _ in range(ROUNDS):
        crowded.round()
        thread = kernel_thread(pid, pid)
        assert thread is not None
        if thread.kernel_state != "S":
            continue  # caught on its way back to read(): runnable, no wait to name
        asleep += 1
        assert thread.kernel_syscall == "read", thread
        assert thread.kernel_wchan and thread.kernel_wchan == _wchan_now(pid), thread  # asleep on its pipe, named
    assert asleep, f"the child was never caught asleep in {ROUNDS} rounds"


def test_the_agentless_script_reads_the_wait_channel_of_a_thread_just_gone_to_sleep(crowded: Crowded) -> None:
    pid = crowded.proc.pid
    asleep = 0
    for _ in range(ROUNDS // 4):  # a shell and its cats each round
        crowded.round()
        out = subprocess.run(["sh", "-c", f"{_TASKS}\ntasks {pid}"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        (thread,) = parse_tasks(pid, out.stdout)
        if thread.kernel_state != "S":
            continue
        asleep += 1
        assert thread.kernel_syscall == "read", thread
        assert thread.kernel_wchan and thread.kernel_wchan == _wchan_now(pid), thread
    assert asleep, f"the child was never caught asleep in {ROUNDS // 4} rounds"

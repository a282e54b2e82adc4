"""/proc files held open across ticks (collect/held_files.py): what a held fd reads is what a fresh open
reads now, never an earlier process's figures; an exited process releases its fds; the count is bounded.

Real children: one that sleeps on a pipe and, told to, moves to another wait (a nanosleep), one that exits.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from triage_tui.collect.held_files import HeldProcFiles
from triage_tui.collect.proc_table import ProcTable, read_proc_table
from triage_tui.collect.processes import ProcessCollector
from triage_tui.collect.snapshot import SnapshotCollector
from triage_tui.collect.targets import resolve_targets
from triage_tui.host.base import CollectOptions
from triage_tui.model.snapshot import ProcessInfo
from triage_tui.parse.procfs import parse_stat

# Sleeps in read() on its pipe; told "n", it answers and then sleeps in nanosleep (another wait channel, a
# new state of its figures) until killed.
NAPPER = r'''
import os, sys, time
ready, go = int(sys.argv[1]), int(sys.argv[2])
os.write(ready, b"R")
os.read(go, 1)
os.write(ready, b"D")
while True:
    time.sleep(3600)
'''


class Napper:
    def __init__(self) -> None:
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        self.proc = subprocess.Popen([sys.executable, "-c", NAPPER, str(ready_w), str(go_r)], pass_fds=(ready_w, go_r))
        os.close(ready_w)
        os.close(go_r)
        self.ready, self.go = ready_r, go_w
        assert os.read(self.ready, 1) == b"R"

    def move_on(self) -> None:
        os.write(self.go, b"n")
        assert os.read(self.ready, 1) == b"D"

    def wchan(self) -> str:
        with open(f"/proc/{self.proc.pid}/wchan") as f:
            return f.read().strip()

    def settle(self, wanted: str, limit_s: float = 60.0) -> None:
        """Until the child sleeps (S) with a wait channel containing `wanted` (read fresh, not through triage)."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            with open(f"/proc/{self.proc.pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            if state == b"S" and wanted in self.wchan():
                return
            time.sleep(0.01)
        pytest.fail(f"the child never slept in {wanted} (wchan {self.wchan()!r})")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        os.close(self.ready)
        os.close(self.go)


@pytest.fixture
def napper() -> Iterator[Napper]:
    child = Napper()
    try:
        yield child
    finally:
        child.close()


def _starttime(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        stat = parse_stat(f.read())
    assert stat is not None
    return stat.starttime


def _open_fds() -> set[str]:
    """The targets of this process's open fds (what a held fd shows up as)."""
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            out.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
    return out


def _tick(collector: ProcessCollector, table: ProcTable | None, pids: list[int]) -> tuple[ProcTable, ProcessInfo]:
    table = read_proc_table(previous=table, held=collector.held, watch=frozenset(pids))
    (row,) = collector.collect(pids, table)
    return table, row


def test_a_held_process_that_moves_on_is_read_afresh_with_its_new_wait_channel(napper: Napper) -> None:
    """The no-stale-state proof: after the child leaves its read() for a nanosleep, the row read through the
    held stat and schedstat fds shows the new wait channel and the context switch, not the old figures."""
    pid = napper.proc.pid
    napper.settle("pipe")  # pipe_read / pipe_wait...: asleep on the pipe
    collector = ProcessCollector()
    table = None
    for _ in range(3):
        table, before = _tick(collector, table, [pid])
    assert (pid, "stat") in collector.held._fds and (pid, "schedstat") in collector.held._fds
    preads = collector.held.preads
    assert "pipe" in str(before.wchan)
    napper.move_on()
    napper.settle("nanosleep")  # hrtimer_nanosleep / do_nanosleep
    table, after = _tick(collector, table, [pid])
    assert collector.held.preads >= preads + 2  # both read through the fds still held
    assert isinstance(after.wchan, str) and "nanosleep" in after.wchan, after.wchan
    assert isinstance(after.ctx_voluntary_delta, int) and after.ctx_voluntary_delta > 0
    assert after is not before
    fresh = ProcessCollector(), ProcessCollector()  # a collector holding nothing reads the same figures
    (row,) = fresh[0].collect([pid])
    assert (row.state, row.wchan, row.ctx_voluntary, row.rss_bytes) == (after.state, after.wchan,
                                                                        after.ctx_voluntary, after.rss_bytes)
    for c in (collector, *fresh):
        c.close()


def test_held_io_and_wchan_files_read_what_a_fresh_open_reads_after_the_process_moved_on(napper: Napper) -> None:
    """io and wchan are held for a process that runs again and again (processes.py): a pread of each is the
    kernel's text now, as a fresh open reads it, not the text of when it was opened."""
    pid = napper.proc.pid
    napper.settle("pipe")
    held = HeldProcFiles()
    try:
        first = held.read(pid, _starttime(pid), "io")
        asleep = held.read(pid, _starttime(pid), "wchan")
        assert (pid, "io") in held.fds and (pid, "wchan") in held.fds and b"pipe" in asleep
        napper.move_on()  # it reads its pipe and writes its answer (rchar, wchar, syscr, syscw move), then naps
        napper.settle("nanosleep")
        again = held.read(pid, _starttime(pid), "io")
        with open(f"/proc/{pid}/io", "rb") as f:
            fresh = f.read()
        assert held.preads == 1 and again == fresh and again != first
        assert b"nanosleep" in held.read(pid, _starttime(pid), "wchan") and held.preads == 2
    finally:
        held.close()


def test_an_exited_process_releases_its_fds(napper: Napper) -> None:
    pid = napper.proc.pid
    napper.settle("pipe")
    collector = ProcessCollector()
    table, _ = _tick(collector, None, [pid])
    table, _ = _tick(collector, table, [pid])
    assert f"/proc/{pid}/schedstat" in _open_fds() and f"/proc/{pid}/stat" in _open_fds()
    napper.proc.kill()
    napper.proc.wait()  # reaped: the PID is free
    table = read_proc_table(previous=table, held=collector.held, watch=frozenset([pid]))
    assert pid not in table.stats  # the held stat fd did not answer for a process that is gone
    assert collector.collect([], table) == ()
    assert collector.held.held_pids() == set()
    assert not {f"/proc/{pid}/schedstat", f"/proc/{pid}/stat"} & _open_fds()
    collector.close()


def test_a_held_fd_never_reads_another_process_under_the_same_pid(napper: Napper) -> None:
    """A reused PID: the fd held for the old process fails (ESRCH) once it is reaped, so it cannot read the
    newcomer; and a start time that is not the held one's makes the file be opened afresh."""
    pid = napper.proc.pid
    start = _starttime(pid)
    held = HeldProcFiles(limit=8)
    first = held.read(pid, start, "stat")
    assert parse_stat(first.decode()).starttime == start  # type: ignore[union-attr]
    opened = held.opened
    held.read(pid, start + 1, "stat")  # asked for another process under this PID: not through the old fd
    assert held.opened == opened + 1 and held._fds[(pid, "stat")][1] == start + 1
    napper.proc.kill()
    napper.proc.wait()
    with pytest.raises(OSError):  # gone: neither the held fd nor a fresh open gives figures
        held.read(pid, start + 1, "stat")
    assert (pid, "stat") not in held._fds
    child = subprocess.Popen(["true"])  # the kernel's side of it, on a plain fd of a child that is reaped
    kept = os.open(f"/proc/{child.pid}/stat", os.O_RDONLY)
    child.wait()
    try:
        with pytest.raises(ProcessLookupError):
            os.pread(kept, 4096, 0)  # whoever gets this PID next, this fd reads nothing of theirs
    finally:
        os.close(kept)
    held.close()
    assert len(held) == 0


def test_the_table_pass_drops_a_held_stat_whose_start_time_moved(napper: Napper) -> None:
    """The /proc pass holds the stat of last tick's tree, for the process it saw then: when the line read
    shows another start time (a new process under the PID), that fd is not kept for it."""
    pid = napper.proc.pid
    collector = ProcessCollector()
    table, _ = _tick(collector, None, [pid])
    table, _ = _tick(collector, table, [pid])
    assert (pid, "stat") in collector.held._fds
    real = table.stats[pid]
    table.stats[pid] = real._replace(starttime=real.starttime - 1)  # as if another process had it
    table.lines[pid] = b""
    again = read_proc_table(previous=table, held=collector.held, watch=frozenset([pid]))
    assert again.stats[pid].starttime == real.starttime  # what the kernel says now
    assert (pid, "stat") not in collector.held._fds
    collector.close()


def test_held_fds_are_bounded_and_beyond_the_bound_files_are_read_as_before(napper: Napper) -> None:
    pid = napper.proc.pid
    napper.settle("pipe")
    me = os.getpid()
    bounded, free = ProcessCollector(), ProcessCollector()
    bounded.held.limit = 1
    table_b = table_f = None
    for _ in range(3):
        table_b = read_proc_table(previous=table_b, held=bounded.held, watch=frozenset([pid, me]))
        rows_b = bounded.collect([pid, me], table_b)
        table_f = read_proc_table(previous=table_f)
        free.held.limit = 0
        rows_f = free.collect([pid, me], table_f)
    assert len(bounded.held) == 1 and len(free.held) == 0
    assert rows_b[0].wchan == rows_f[0].wchan and rows_b[0].state == rows_f[0].state
    assert rows_b[0].ctx_voluntary == rows_f[0].ctx_voluntary
    bounded.close()
    free.close()


def test_a_snapshot_collector_closes_its_held_fds(napper: Napper) -> None:
    pid = napper.proc.pid
    collector = SnapshotCollector()
    target = resolve_targets([str(pid)])
    options = CollectOptions()
    collector.collect(target, options)
    collector.collect(target, options)
    assert f"/proc/{pid}/stat" in _open_fds()
    collector.close()
    assert f"/proc/{pid}/stat" not in _open_fds() and f"/proc/{pid}/schedstat" not in _open_fds()


def test_a_watching_pass_reads_the_tree_and_the_new_and_the_rest_only_on_its_rescan(napper: Napper) -> None:
    """`skip_known`: the tree's stat lines every pass, a process new since the last pass at once (a tree
    process's new child is a new PID), a process outside the tree that was already there only once in
    RESCAN_TICKS passes (and never a stale line of it in between)."""
    from triage_tui.collect.proc_table import RESCAN_TICKS

    tree = napper.proc.pid
    outside = subprocess.Popen(["sleep", "600"])
    collector = ProcessCollector()
    try:
        table = read_proc_table(held=collector.held, watch=frozenset([tree]), skip_known=True)
        assert {tree, outside.pid} <= set(table.stats)  # the first pass reads every process
        newcomer = subprocess.Popen(["sleep", "600"])
        try:
            seen_outside = []
            for n in range(RESCAN_TICKS):
                table = read_proc_table(previous=table, held=collector.held, watch=frozenset([tree]), skip_known=True)
                assert tree in table.stats and outside.pid in table.listed
                if n == 0:
                    assert newcomer.pid in table.stats  # new since the last pass: read at once
                seen_outside.append(outside.pid in table.stats)
            assert seen_outside.count(True) == 1  # once in RESCAN_TICKS passes, on its turn
            full = read_proc_table(previous=table)  # not watching: every process, every pass
            assert {tree, outside.pid, newcomer.pid} <= set(full.stats)
        finally:
            newcomer.kill()
            newcomer.wait()
    finally:
        outside.kill()
        outside.wait()
        collector.close()


def test_a_snapshot_collector_finds_a_child_born_between_ticks() -> None:
    """The tree grows by a fork between two ticks of a watching collector: the child is in the next tick's
    tree (a new PID is always read), and it is gone from it once it exits."""
    code = "import os, signal, sys, time\nos.read(int(sys.argv[1]), 1)\nif os.fork() == 0:\n    signal.pause()\nsignal.pause()"
    go_r, go_w = os.pipe()
    parent = subprocess.Popen([sys.executable, "-c", code, str(go_r)], pass_fds=(go_r,))
    os.close(go_r)
    collector = SnapshotCollector()
    try:
        target = resolve_targets([str(parent.pid)])
        first = collector.collect(target, CollectOptions())
        assert [p.pid for p in first.processes] == [parent.pid]
        os.write(go_w, b"f")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(f"/proc/{parent.pid}/task/{parent.pid}/children") as f:
                if f.read().split():
                    break
            time.sleep(0.01)
        second = collector.collect(target, CollectOptions())
        kids = [p for p in second.processes if p.ppid == parent.pid]
        assert len(kids) == 1 and not kids[0].exited
        os.kill(kids[0].pid, 9)  # our own test child
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and os.path.exists(f"/proc/{kids[0].pid}/stat"):
            with open(f"/proc/{kids[0].pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            time.sleep(0.01)
        third = collector.collect(target, CollectOptions())
        assert all(p.pid != kids[0].pid or p.state in ("Z", "X") or p.exited for p in third.processes)
    finally:
        collector.close()
        parent.kill()
        parent.wait()
        os.close(go_w)

"""What a refresh does not re-read, and that what it carries is what a read would have said.

A real child blocks on a pipe (so it provably does not run between ticks), then is woken to grow
its memory; the reads each tick makes are recorded by wrapping the collector's file reads.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from triage_tui.collect import logs as logs_module
from triage_tui.collect import memory as memory_module
from triage_tui.collect import process_figures, process_reads
from triage_tui.collect import processes as processes_module
from triage_tui.collect.logs import RECHECK_TICKS, LogsCollector
from triage_tui.collect.memory import SmapsFigure, SmapsReader
from triage_tui.collect.proc_table import read_proc_table
from triage_tui.collect.process_reads import read_run_count
from triage_tui.collect.processes import ProcessCollector
from triage_tui.host.base import CollectOptions
from triage_tui.model.snapshot import ProcessInfo
from triage_tui.model.unavailable import is_known
from triage_tui.parse.procfs import parse_stat

SLEEPER = r'''
import os, sys
ready, go = int(sys.argv[1]), int(sys.argv[2])
blobs, files = [], []
os.write(ready, b"R")
while True:
    order = os.read(go, 1)
    if not order:
        break
    if order == b"f":
        files.append(os.open(os.devnull, os.O_RDONLY))  # one more open fd, nothing else
    else:
        blobs.append(b"\x01" * (16 << 20))  # 16 MiB, every page written
    os.write(ready, b"D")
'''


class Sleeper:
    def __init__(self) -> None:
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        self.proc = subprocess.Popen([sys.executable, "-c", SLEEPER, str(ready_w), str(go_r)],
                                     pass_fds=(ready_w, go_r))
        os.close(ready_w)
        os.close(go_r)
        self.ready, self.go = ready_r, go_w
        assert os.read(self.ready, 1) == b"R"

    def grow(self) -> None:
        os.write(self.go, b"g")
        assert os.read(self.ready, 1) == b"D"

    def open_file(self) -> None:
        os.write(self.go, b"f")
        assert os.read(self.ready, 1) == b"D"

    def wait_asleep(self, limit_s: float = 60.0) -> None:
        """Until the child sleeps in read() and the kernel names its wait: after its handshake it may
        still sit runnable (R) in the run queue of a busy machine, and a runnable process is re-read
        every tick by design; and a task that has just gone to sleep (S) can stay on its run queue
        a while (the scheduler's delayed dequeue, Linux 6.12 on), where /proc/PID/wchan prints "0"
        (get_wchan names only a task off its queue). The CI's busy machine caught it there twice."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            with open(f"/proc/{self.proc.pid}/stat", "rb") as f:
                asleep = f.read().rsplit(b")", 1)[1].split()[0] == b"S"
            with open(f"/proc/{self.proc.pid}/wchan", "rb") as f:
                if asleep and f.read().strip() not in (b"", b"0"):
                    return
            time.sleep(0.01)
        pytest.fail("the child never went to sleep on its pipe")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.close(self.ready)
        os.close(self.go)


@pytest.fixture
def sleeper() -> Iterator[Sleeper]:
    child = Sleeper()
    try:
        yield child
    finally:
        child.close()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Paths the process collector opens, in order."""
    seen: list[str] = []
    real_text, real_bytes = processes_module.read_text, process_reads.read_bytes

    def text(path: str) -> str:
        seen.append(path)
        return real_text(path)

    def raw(path: str) -> bytes:
        seen.append(path)
        return real_bytes(path)

    for module in (processes_module, process_figures, process_reads):  # every module the collector reads through
        if hasattr(module, "read_text"):
            monkeypatch.setattr(module, "read_text", text)
        if hasattr(module, "read_bytes"):
            monkeypatch.setattr(module, "read_bytes", raw)
    return seen


def _tick(collector: ProcessCollector, pid: int, reads: list[str]) -> tuple[ProcessInfo, set[str]]:
    reads.clear()
    (row,) = collector.collect([pid])
    return row, {os.path.basename(p) for p in reads}


def test_a_process_that_did_not_run_is_not_reread_and_keeps_its_figures(sleeper: Sleeper, reads: list[str]) -> None:
    pid = sleeper.proc.pid
    sleeper.wait_asleep()
    collector = ProcessCollector()
    first, read_first = _tick(collector, pid, reads)
    assert {"status", "wchan", "io"} <= read_first
    for _ in range(50):  # a stray wake-up (none is expected) would only make one tick read again
        before = first
        first, read_now = _tick(collector, pid, reads)
        if "wchan" not in read_now:
            break
    else:
        pytest.fail("a child blocked on a pipe was re-read on every tick")
    assert "io" not in read_now  # single-threaded and has not run: no I/O of its own
    if read_run_count(pid) is not None:
        assert "status" not in read_now  # schedstat run count unchanged: status is what it was
    else:
        assert "status" in read_now  # no schedstat in this kernel: status every tick
    for field in ("rss_bytes", "rss_anon_bytes", "vms_bytes", "ctx_voluntary", "wchan", "read_bytes", "write_bytes",
                  "user", "nspid", "name"):
        assert getattr(first, field) == getattr(before, field), field
    assert first.ctx_voluntary_delta == 0 and first.read_bytes_delta == 0 and first.cpu_percent == 0.0
    assert isinstance(first.wchan, str) and first.wchan  # a sleeping process has a wait channel

    sleeper.grow()  # it runs, faults in 16 MiB and sleeps again: everything is read afresh
    io_before, wchan_before = collector.reads["io"], collector.reads["wchan"]
    grown, read_grown = _tick(collector, pid, reads)
    assert "status" in read_grown
    assert collector.reads["io"] == io_before + 1  # through a held fd: a process seen before that ran again
    # its wait channel read again (held too), unless it was caught on a CPU (then it has none: the kernel prints "0")
    assert collector.reads["wchan"] == wchan_before + 1 or (grown.state == "R" and grown.wchan == "")
    assert grown.rss_bytes >= first.rss_bytes + (15 << 20)  # type: ignore[operator]


def test_smaps_steady_rss_is_not_reread_and_a_moved_rss_is() -> None:
    me = os.getpid()
    reader = SmapsReader()
    try:
        reader.submit({me: 1000}, budget_ms=1000, interval_s=1e-9)  # a period of ~0: due at once
        assert reader.wait_idle(30)
        first = reader.figures()[me].read_at
        reader.submit({me: 1000}, budget_ms=1000, interval_s=1e-9)
        assert reader.wait_idle(30)
        assert reader.figures()[me].read_at == first  # RSS unchanged: the figure stands
        reader.submit({me: 2000}, budget_ms=1000, interval_s=1e-9)
        assert reader.wait_idle(30)
        assert reader.figures()[me].read_at > first
    finally:
        reader.close()


def test_smaps_skips_a_read_that_would_overrun_what_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    costs = {1: 8.0, 2: 5.0, 3: 1.0}
    count = {pid: 0 for pid in costs}

    def fake_read(pid: int) -> SmapsFigure:  # the scheduling under test, with known read costs
        count[pid] += 1
        return SmapsFigure(pid, float(sum(count.values())), costs[pid], 1, 1, 0)

    monkeypatch.setattr(memory_module, "read_smaps_rollup", fake_read)
    reader = SmapsReader()
    try:
        reader.submit({1: 0, 2: 0, 3: 0}, budget_ms=10, interval_s=1e-9)
        assert reader.wait_idle(30)
        assert count == {1: 1, 2: 1, 3: 0}  # 8 + 5 spent the budget; PID 3 waits
        reader.submit({1: 0, 2: 0, 3: 0}, budget_ms=10, interval_s=1e-9)
        assert reader.wait_idle(30)
        # never-read PID 3 first (1), then the stalest: PID 1 fits (9); PID 2's 5 would overrun
        assert count == {1: 2, 2: 1, 3: 1}
        assert reader.spent_ms == 9.0
    finally:
        reader.close()


REDIRECTER = r'''
import os, sys
ready, go = int(sys.argv[1]), int(sys.argv[2])
os.write(ready, b"R")
os.read(go, 1)
fd = os.open(sys.argv[3], os.O_WRONLY | os.O_CREAT, 0o644)
os.dup2(fd, 1)  # stdout now goes to a file
os.write(ready, b"D")
os.read(go, 1)
'''


def test_a_stdout_redirected_later_is_found_within_the_recheck_period(tmp_path: Path) -> None:
    log = tmp_path / "late.log"
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", REDIRECTER, str(ready_w), str(go_r), str(log)],
                             pass_fds=(ready_w, go_r), stdout=subprocess.DEVNULL)
    os.close(ready_w)
    os.close(go_r)
    collector = LogsCollector()
    try:
        assert os.read(ready_r, 1) == b"R"
        options = CollectOptions()
        assert all(t.path != str(log) for t in collector([child.pid], options))
        os.write(go_w, b"g")
        assert os.read(ready_r, 1) == b"D"
        found_after = None
        for tick in range(1, RECHECK_TICKS + 1):
            if any(t.path == str(log) for t in collector([child.pid], options)):
                found_after = tick
                break
        assert found_after is not None, f"not found within {RECHECK_TICKS} ticks"
        assert logs_module.RECHECK_TICKS == RECHECK_TICKS
    finally:
        collector.close()
        child.kill()
        child.wait()
        os.close(ready_r)
        os.close(go_w)


def test_the_carried_row_equals_the_row_a_full_read_builds(sleeper: Sleeper, monkeypatch: pytest.MonkeyPatch) -> None:
    pid = sleeper.proc.pid
    sleeper.wait_asleep()
    carried, full = ProcessCollector(), ProcessCollector()
    rows: dict[str, list[ProcessInfo]] = {"carried": [], "full": []}
    real_unchanged = processes_module.status_unchanged
    for _ in range(3):
        monkeypatch.setattr(processes_module, "status_unchanged", real_unchanged)
        rows["carried"] += carried.collect([pid])
        monkeypatch.setattr(processes_module, "status_unchanged", lambda *args: False)  # always read status
        rows["full"] += full.collect([pid])
    assert rows["carried"][-1] == rows["full"][-1]  # every field, deltas and figures alike
    assert rows["carried"][-1].ctx_voluntary_delta == 0 and rows["carried"][-1].num_fds == rows["full"][-1].num_fds


def _settled_tick(collector: ProcessCollector, pid: int, previous: ProcessInfo) -> ProcessInfo:
    """Ticks until one reads nothing but schedstat (a stray wake-up makes a tick read again)."""
    for _ in range(50):
        before = dict(collector.reads)
        (row,) = collector.collect([pid])
        read = {k: v - before.get(k, 0) for k, v in collector.reads.items() if v != before.get(k, 0)}
        if set(read) <= {"schedstat"}:
            return row
    pytest.fail("a child blocked on a pipe was re-read on every tick")


def test_an_idle_process_costs_one_schedstat_read_and_keeps_its_row_object(sleeper: Sleeper) -> None:
    """Counted by the collector: a process that did not run is not re-read (status, io, wchan, fd
    count), and its row is last tick's object; the tick after it ran, everything is read again."""
    if read_run_count(sleeper.proc.pid) is None:
        pytest.skip("no /proc/PID/schedstat (CONFIG_SCHED_INFO): every tick reads status")
    pid = sleeper.proc.pid
    sleeper.wait_asleep()
    collector = ProcessCollector()
    (first,) = collector.collect([pid])
    assert {"status", "io", "wchan", "fds"} <= set(collector.reads)
    settled = _settled_tick(collector, pid, first)
    reads_before = dict(collector.reads)
    (again,) = collector.collect([pid])
    if dict(collector.reads) == {**reads_before, "schedstat": reads_before["schedstat"] + 1}:
        assert again is settled  # nothing differs: the same row, so the engine and recorder can skip it

    sleeper.open_file()  # it runs: opens one fd and sleeps again
    # until it is back asleep in read(): caught on its way there its stat line can already say S while it has not
    # switched out yet (preempted between setting its state and sleeping), no voluntary switch counted
    sleeper.wait_asleep()
    counted = dict(collector.reads)
    (woken,) = collector.collect([pid])
    for kind in ("status", "io", "wchan", "fds"):
        assert collector.reads[kind] == counted.get(kind, 0) + 1, kind
    assert woken is not settled
    assert woken.num_fds == settled.num_fds + 1  # type: ignore[operator]  # the carried count is not shown as current
    assert woken.ctx_voluntary_delta >= 1 and isinstance(woken.wchan, str) and woken.wchan  # type: ignore[operator]  # it slept again


def test_an_unchanged_stat_line_is_not_parsed_again(sleeper: Sleeper) -> None:
    pid = sleeper.proc.pid
    sleeper.wait_asleep()
    first = read_proc_table()
    second = read_proc_table(previous=first)
    for _ in range(50):  # a stray wake-up can move its line
        if second.lines[pid] == first.lines[pid]:
            break
        first, second = second, read_proc_table(previous=second)
    assert second.stats[pid] is first.stats[pid] and pid not in second.parsed
    sleeper.grow()  # its RSS in the stat line moves
    third = read_proc_table(previous=second)
    assert pid in third.parsed and third.stats[pid].rss_pages > second.stats[pid].rss_pages
    assert third.stats[pid] == parse_stat(third.lines[pid].decode())  # the line read this pass, parsed


def test_smaps_budget_goes_to_processes_that_ran_not_to_quiet_ones() -> None:
    """A steady-RSS process that has not run since its PSS was read keeps its figure past the steady
    period (its age says how old it is); one that ran, or any in a tree whose set of processes changed,
    is read again once that period is over."""
    me = os.getpid()
    reader = SmapsReader()
    reader.STEADY_REFRESH_S = 0.0  # type: ignore[misc]  # every steady figure is old at once
    try:
        def batch(quiet: frozenset, tree: dict) -> int:
            before = reader.reads
            reader.submit(tree, budget_ms=1000, interval_s=1e-9, quiet=quiet)
            assert reader.wait_idle(30)
            return reader.reads - before

        assert batch(frozenset(), {me: 1000}) == 1  # never read: read
        assert batch(frozenset({me}), {me: 1000}) == 0  # quiet since: the figure stands
        assert batch(frozenset({me}), {me: 1000}) == 0
        assert batch(frozenset(), {me: 1000}) == 1  # it ran: read again
        assert batch(frozenset({me}), {me: 1000}) == 0
        assert batch(frozenset({me}), {me: 1000, 1: 0}) >= 1  # a process joined the tree: read again
    finally:
        reader.close()


def test_memory_sums_and_pss_fields_are_worked_out_again_only_when_a_row_or_figure_changed() -> None:
    import dataclasses

    from triage_tui.collect.snapshot import SnapshotCollector

    collector = SnapshotCollector()
    try:
        rows = tuple(ProcessInfo(pid=10 + i, ppid=1, name="w", rss_bytes=(1 + i) << 20) for i in range(3))
        first = collector._sums(rows)
        assert collector._sums(tuple(rows)) is first  # the same row objects: the same sums
        grown = (dataclasses.replace(rows[0], rss_bytes=9 << 20),) + rows[1:]
        assert collector._sums(grown).rss_sum_bytes == (9 + 2 + 3) << 20
        me = os.getpid()
        collector.smaps.submit({me: 1000}, budget_ms=1000, interval_s=1e-9)
        assert collector.smaps.wait_idle(30)
        fields = collector._smaps_fields()[me]
        assert collector._smaps_fields()[me] is fields  # the figure was not read again
        assert fields["pss_read_at"] == collector.smaps.figures()[me].read_at
    finally:
        collector.close()


def test_quiet_ticks_share_one_row_tuple_and_index_and_a_woken_process_gets_a_new_one(sleeper: Sleeper) -> None:
    """A long watch of a quiet tree keeps one tuple of rows and one index by PID for all its snapshots
    (#18: memory bounded by what changed, not by the length of the watch); a process that ran is not
    served from the shared index."""
    from triage_tui.collect.snapshot import SnapshotCollector
    from triage_tui.collect.targets import resolve_targets

    pid = sleeper.proc.pid
    target = resolve_targets([str(pid)])
    collector = SnapshotCollector()
    try:
        snapshots = []
        for _ in range(8):
            snapshot = collector.collect(target)
            assert snapshot.process(pid) is not None  # builds (or shares) the index
            snapshots.append(snapshot)
            collector.smaps.wait_idle(30)  # PSS arriving is a change; once read, the tree is quiet
        quiet = snapshots[-3:]
        assert len({id(s.processes) for s in quiet}) == 1, "a quiet tree's snapshots each hold their own rows"
        assert len({id(s._rows_by_pid) for s in quiet}) == 1, "a quiet tree's snapshots each hold their own index"
        before = quiet[-1].process(pid)
        assert before is not None and is_known(before.rss_bytes)
        sleeper.grow()  # 16 MiB more, written
        woken = collector.collect(target)
        assert woken.processes is not quiet[-1].processes
        row = woken.process(pid)
        assert row is not None and row is not before and is_known(row.rss_bytes)
        assert row.rss_bytes > before.rss_bytes  # the new figure, not the shared index's old row
    finally:
        collector.close()


def test_a_process_on_a_cpu_shows_no_wait_channel_and_none_is_read() -> None:
    """A process whose stat line says R is on a CPU: it waits on nothing (the kernel's wchan prints "0" for a
    running task), so its wait channel is not read, and its row says "" (running), never a stale channel."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    collector = ProcessCollector()
    try:
        for _ in range(500):  # until a tick catches it on a CPU (a count of tries, not a time)
            before = collector.reads["wchan"]
            (row,) = collector.collect([spinner.pid])
            if row.state == "R":
                break
        else:
            pytest.fail("the spinner was never seen running")
        assert row.wchan == "" and collector.reads["wchan"] == before
    finally:
        collector.close()
        spinner.kill()
        spinner.wait()


def test_the_straight_row_of_a_process_that_ran_equals_the_general_paths(sleeper: Sleeper,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A single-threaded process put on a CPU since the last tick has its row built the straight way
    (process_ran.py); a second collector, made to take the general path, reads the same process in the same
    state after the same history: every figure of both rows is the same (CPU % aside: each measures over its own
    interval), and so is what each keeps for the next tick."""
    from triage_tui.collect import process_ran, process_samples

    monkeypatch.setattr(process_ran, "MIN_CPU_WINDOW_S", 0.0)  # a CPU % over any window: no waiting here
    monkeypatch.setattr(processes_module, "MIN_CPU_WINDOW_S", 0.0)
    pid = sleeper.proc.pid
    sleeper.wait_asleep()
    straight, general = ProcessCollector(), ProcessCollector()
    built: list[ProcessInfo] = []

    def spied(*args, **kwargs):  # type: ignore[no-untyped-def]
        row = process_ran.ran_row(*args, **kwargs)
        if row is not None:
            built.append(row)
        return row

    try:
        for c in (straight, general):
            c.collect([pid])
        sleeper.grow()  # it runs (16 MiB written, a pipe read and write) and sleeps in read() again
        sleeper.wait_asleep()
        monkeypatch.setattr(processes_module, "ran_row", spied)
        (a,) = straight.collect([pid])
        monkeypatch.setattr(processes_module, "ran_row", lambda *args, **kwargs: None)
        (b,) = general.collect([pid])
        assert built == [a]  # the straight way was taken, and only by the first collector
        names = [f.name for f in dataclasses.fields(ProcessInfo) if f.name != "cpu_percent"]
        assert {n: getattr(a, n) for n in names} == {n: getattr(b, n) for n in names}
        assert isinstance(a.cpu_percent, float) and isinstance(b.cpu_percent, float)
        assert a.rss_bytes >= 16 << 20 and a.ctx_voluntary_delta >= 1  # type: ignore[operator]  # it did run
        kept = [f.name for f in dataclasses.fields(process_samples.Sample) if f.name not in ("at", "row", "stat")]
        sa, sb = straight._previous[pid], general._previous[pid]
        assert {n: getattr(sa, n) for n in kept} == {n: getattr(sb, n) for n in kept}
        assert sa.row is a and sb.row is b and sa.stat == sb.stat
    finally:
        straight.close()
        general.close()


def test_a_process_that_ran_shows_the_status_it_has_now_whether_its_head_moved_or_not(
        sleeper: Sleeper, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that ran has its status read again every tick; when the status's head (Name .. RssShmem) is byte
    for byte last read's, only its context switches are parsed (parse_status_numbers_again). Either way the row
    shows what the status says now: after it opened a file (its head as it was: the kept head reused, the context
    switches moved) and after it wrote 16 MiB (its head moved: parsed whole, the new RSS shown). A first read
    keeps no head (an idle process's status is not read again)."""
    from triage_tui.collect import process_ran
    from triage_tui.parse.procfs import parse_status_numbers

    monkeypatch.setattr(process_ran, "MIN_CPU_WINDOW_S", 0.0)  # the straight way over any window: no waiting here
    monkeypatch.setattr(processes_module, "MIN_CPU_WINDOW_S", 0.0)
    pid = sleeper.proc.pid
    collector = ProcessCollector()

    def status_now() -> object:
        with open(f"/proc/{pid}/status") as f:
            return parse_status_numbers(f.read())

    try:
        sleeper.wait_asleep()
        (first,) = collector.collect([pid])
        assert collector._previous[pid].status_head is None  # noqa: SLF001 - read once: nothing kept
        heads = []
        for step in (sleeper.open_file, sleeper.open_file, sleeper.grow):
            step()
            sleeper.wait_asleep()
            (row,) = collector.collect([pid])
            now = status_now()  # asleep on its pipe since: the status it had at the tick
            assert (row.ctx_voluntary, row.ctx_involuntary, row.rss_bytes, row.rss_anon_bytes, row.vms_bytes) == (
                now.ctx_voluntary, now.ctx_involuntary, now.rss, now.rss_anon, now.vms)  # type: ignore[attr-defined]
            assert row.ctx_voluntary_delta >= 1  # type: ignore[operator]  # it ran
            heads.append(collector._previous[pid].status_head)  # noqa: SLF001 - what the next status is compared with
        opened, again, grown = heads
        assert opened is not None and again is opened  # the second file: the head as it was, reused
        assert grown is not opened and grown is not None and grown[1].rss >= first.rss_bytes + (16 << 20)  # type: ignore[operator]
    finally:
        collector.close()

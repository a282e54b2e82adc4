"""Issue 13: deaths that happened before triage looked. A replacement worker (a peer started well after its
siblings, which are still there) and a kernel line about a PID never seen in the tree, matched by name and
time, are evidence of a death; neither is read into a launcher that staggers its workers evenly, nor into
another cgroup's OOM kill."""

from __future__ import annotations

import dataclasses

import pytest

from diagnose_cases import T0, proc, series

from triage_tui.collect.kernel import unseen_events
from triage_tui.diagnose.hypotheses import evaluate
from triage_tui.diagnose.observations import observe_snapshots
from triage_tui.diagnose.roles import replacements
from triage_tui.diagnose.thresholds import Thresholds
from triage_tui.model.snapshot import (
    CgroupMemory,
    KernelEvent,
    KernelReport,
    LogLine,
    LogTail,
    MemoryReport,
    ProcessInfo,
    Snapshot,
)
from triage_tui.model.unavailable import Unavailable
from triage_tui.parse.dmesg import parse_kernel_line

TH = Thresholds(idle_after_s=4.0, silent_after_s=10.0)
CMD = ("python3", "pool_job.py", "--shards", "12")


def _pool(*starts: float, parent_start: float = T0 - 600.0) -> list[ProcessInfo]:
    parent = proc(100, 1, name="python3", cmdline=CMD, start_time=parent_start, wchan="futex_wait_queue")
    return [parent, *(proc(101 + i, 100, name="python3", cmdline=CMD, start_time=s, wchan="futex_wait_queue")
                      for i, s in enumerate(starts))]


def _ids(procs, kernel: KernelReport = KernelReport(), memory: MemoryReport = MemoryReport(), looks: int = 3):
    history = series([Snapshot(processes=tuple(procs), kernel=kernel, memory=memory)] * looks, 2.0)
    observations = observe_snapshots(history, TH)
    return {o.id: o for o in observations}, evaluate(observations)


def test_a_late_sibling_is_a_replacement_and_evidence_of_a_death() -> None:
    base = T0 - 600.0
    late = replacements(_pool(base, base, base + 0.01, base + 0.12))
    assert [(r.pid, round(r.late_by_s, 2), r.siblings) for r in late] == [(104, 0.11, (101, 102, 103))]
    found, hyps = _ids(_pool(base, base, base + 0.01, base + 300.0))
    assert "worker-replaced" in found and "PID 104" in found["worker-replaced"].text
    assert "all-alive" not in found  # one of them did not stay alive
    top = hyps[0]
    assert top.id == "crashed-worker" and top.status in ("possible", "likely"), [(h.id, h.status) for h in hyps]
    assert "worker-replaced" in {e.observation for e in top.evidence}


def test_no_replacement_without_a_burst_of_originals() -> None:
    base = T0 - 600.0
    assert not replacements(_pool(base, base + 0.01, base + 0.02))  # one burst
    assert not replacements(_pool(base, base + 1.0, base + 2.0, base + 3.0))  # staggered evenly
    assert not replacements(_pool(base, base + 1.0, base + 2.5))  # uneven, but no burst to depart from
    assert not replacements(_pool(base, base + 5.0))  # two peers: nothing to compare
    assert not replacements(_pool(base, base, base + 0.03))  # within a few clock ticks
    assert not replacements(_pool(base, base, base + 40.0, base + 40.0))  # half came late: a second pool, not a death
    other = [*_pool(base, base), proc(150, 100, name="python3", cmdline=("python3", "writer.py"), start_time=base + 60)]
    assert not replacements(other)  # another role


def test_a_late_launch_under_a_parent_that_reaped_nothing_is_no_replacement() -> None:
    """A loaded node delays one Popen of a launch loop: the parent's cutime + cstime (the CPU of the children
    it reaped) is 0, so no exec'd child of it has ended — the late one is late, not a replacement. A forked
    worker (the parent's own command line) can die without a CPU tick: there the start times decide alone."""
    base = T0 - 600.0
    launcher = proc(100, 1, name="python3", cmdline=("python3", "launch.py"), start_time=base - 1,
                    reaped_children_cpu_s=0.0)
    workers = [proc(101 + i, 100, name="python3", cmdline=("python3", "worker.py", "--rank", str(i)),
                    start_time=s) for i, s in enumerate((base, base, base + 0.01, base + 0.12))]
    assert not replacements([launcher, *workers])
    reaped = dataclasses.replace(launcher, reaped_children_cpu_s=0.04)
    assert [r.pid for r in replacements([reaped, *workers])] == [104]
    unknown = dataclasses.replace(launcher, reaped_children_cpu_s=Unavailable("not read"))
    assert [r.pid for r in replacements([unknown, *workers])] == [104]
    forked = _pool(base, base, base + 0.01, base + 0.12)
    forked[0] = dataclasses.replace(forked[0], reaped_children_cpu_s=0.0)
    assert [r.pid for r in replacements(forked)] == [104]


def test_replacements_of_the_same_rows_are_kept_and_of_a_changed_row_worked_out_again() -> None:
    """The engine asks twice a tick and a quiet tree hands on the same row objects: the answer is kept for the
    same objects, and a row that changed (a new object) gives what a fresh computation gives."""
    from triage_tui.diagnose import roles

    base = T0 - 600.0
    rows = _pool(base, base, base + 0.01, base + 0.12)
    first = replacements(rows)
    assert replacements(list(rows)) is first  # the same objects in a new list: kept
    moved = [*rows[:4], dataclasses.replace(rows[4], start_time=base + 0.01)]  # the late one was not late
    assert replacements(moved) == roles._replacements(moved) == ()
    back = [*rows[:4], dataclasses.replace(rows[4], cmdline=("python3", "other.py"))]  # another role now
    assert replacements(back) == roles._replacements(back) == ()
    assert replacements(rows) == first and [r.pid for r in replacements(rows)] == [104]


def test_the_replacement_is_not_compared_as_the_odd_rank() -> None:
    base = T0 - 600.0
    procs = _pool(base, base, base)
    procs.append(proc(104, 100, name="python3", cmdline=CMD, start_time=base + 30.0, wchan="pipe_read"))
    found, _ = _ids(procs)
    assert "worker-replaced" in found and "kernel-odd-rank" not in found


SEGV = "python3[4242]: segfault at 0 ip 00007f1c2d3e4f5a sp 00007ffd error 4 in libc.so.6[7f1c2d300000+195000]"


def test_the_kernel_names_comm_and_cgroup() -> None:
    seg = parse_kernel_line(f"[  102.000000] {SEGV}", boot_time=1000.0)
    assert seg is not None and (seg.kind, seg.pid, seg.comm) == ("segfault", 4242, "python3")
    killed = parse_kernel_line("Memory cgroup out of memory: Killed process 46433 (pt_main_thread) total-vm:5kB")
    assert killed is not None and killed.comm == "pt_main_thread"
    summary = parse_kernel_line("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
                                "oom_memcg=/job,task_memcg=/job/w1,task=python3,pid=46433,uid=0")
    assert summary is not None and (summary.comm, summary.cgroup, summary.pid) == ("python3", "/job/w1", 46433)


def test_kernel_lines_about_unseen_pids_are_matched_by_name_and_time() -> None:
    events = [KernelEvent("segfault", 4242, SEGV, at=T0 - 100.0, comm="python3"),
              KernelEvent("segfault", 4243, SEGV, at=T0 - 900.0, comm="python3"),  # before the tree started
              KernelEvent("segfault", 4244, SEGV, at=T0 - 100.0, comm="nginx"),  # another program
              KernelEvent("segfault", 101, SEGV, at=T0 - 100.0, comm="python3"),  # a PID of the tree: not unseen
              KernelEvent("segfault", 4245, SEGV, comm="python3")]  # no time: cannot be matched
    got = unseen_events(events, {100, 101}, {"python3"}, since=T0 - 600.0)
    assert [e.pid for e in got] == [4242]
    assert unseen_events(events, {100}, {"python3"}, since=None) == ()


def test_an_unseen_death_counts_only_when_something_ties_it_to_the_tree() -> None:
    base = T0 - 600.0
    seg = KernelReport(unseen=(KernelEvent("segfault", 4242, SEGV, at=T0 - 100.0, comm="python3"),))
    # by name and time alone: said, but it may be another program's python3
    found, hyps = _ids(_pool(base, base), kernel=seg)
    assert "segfault-unseen" not in found and "another program" in found["death-nearby"].text
    assert next(h for h in hyps if h.id == "crashed-worker").status in ("unlikely", "ruled out")
    # a replacement that started soon after the death ties it to the pool
    procs = _pool(base, base, base)
    procs.append(proc(104, 100, name="python3", cmdline=CMD, start_time=T0 - 98.0, wchan="futex_wait_queue"))
    found, hyps = _ids(procs, kernel=seg)
    assert "PID 104 started 2.0 s later in its place" in found["segfault-unseen"].text
    assert "before triage's first look" in found["segfault-unseen"].text
    assert hyps[0].id == "crashed-worker", [(h.id, h.status) for h in hyps]
    # so does a log line of the tree that names the PID
    log = LogTail(path="/l", source="fd 2", lines=(LogLine("INFO Child process [4242] died", T0 - 99.0),))
    history = series([Snapshot(processes=tuple(_pool(base, base)), kernel=seg, logs=(log,))] * 3, 2.0)
    found2 = {o.id: o for o in observe_snapshots(history, TH)}
    assert "fd 2 names it" in found2["segfault-unseen"].text


def test_an_unseen_oom_kill_in_the_trees_cgroup_is_an_oom_and_another_cgroups_is_not() -> None:
    base = T0 - 600.0
    kill = KernelEvent("oom-kill", 4300, "Memory cgroup out of memory: Killed process 4300 (python3) total-vm:5kB",
                       at=T0 - 50.0, comm="python3")
    mine = MemoryReport(cgroup=CgroupMemory(path="/sys/fs/cgroup/jobs/my-job"))
    same = KernelEvent("oom-kill", 4300, "oom-kill:task_memcg=/jobs/my-job,task=python3,pid=4300", at=T0 - 50.0,
                       comm="python3", cgroup="/jobs/my-job")
    found, hyps = _ids(_pool(base, base), kernel=KernelReport(unseen=(kill, same)), memory=mine)
    assert "Killed process 4300" in found["oom-kill-unseen"].text and "own cgroup" in found["oom-kill-unseen"].text
    assert hyps[0].id == "oom", [(h.id, h.status) for h in hyps]
    other = KernelEvent("oom-kill", 4300, "oom-kill:task_memcg=/other-job,task=python3,pid=4300", at=T0 - 50.0,
                        comm="python3", cgroup="/other-job")
    found, _ = _ids(_pool(base, base), kernel=KernelReport(unseen=(kill, other)), memory=mine)
    assert "oom-kill-unseen" not in found and "death-nearby" not in found  # another job's kill
    below = KernelEvent("oom-kill", 4300, "oom-kill:task_memcg=/jobs/my-job/test-oom-7,task=python3,pid=4300",
                        at=T0 - 50.0, comm="python3", cgroup="/jobs/my-job/test-oom-7")
    found, _ = _ids(_pool(base, base), kernel=KernelReport(unseen=(kill, below)), memory=mine)
    assert "oom-kill-unseen" not in found  # a child cgroup of the tree's is another job's (a test's sandbox)


def _recycling(last_starts: tuple[float, ...] = ()) -> list:
    """A pool that retires its oldest worker and starts a new one every look, its log advancing; the last look's
    workers may start at `last_starts` (seconds after T0) instead."""
    from triage_tui.model.snapshot import ExitedProcess

    base = T0 - 600.0
    parent = proc(100, 1, name="python3", cmdline=CMD, start_time=base, cpu_time=5.0)
    snaps = []
    gone: list[ExitedProcess] = []
    for i in range(6):  # every look, the oldest worker is retired and a new one started
        workers = [proc(101 + i + k, 100, name="python3", cmdline=CMD, start_time=T0 + 2.0 * (i + k) - 4.0,
                        cpu_time=0.2 * (k + 1)) for k in range(3)]
        if i == 5 and last_starts:
            workers = [proc(101 + i + k, 100, name="python3", cmdline=CMD, start_time=T0 + at, cpu_time=0.2)
                       for k, at in enumerate(last_starts)]
        if i:
            gone.append(ExitedProcess(pid=100 + i, name="python3", cmdline=CMD, last_seen=T0 + 2.0 * i))
        log = LogTail(path="/l", source="a file PID 100 writes (fd 3)",
                      lines=(LogLine(f"INFO chunk {10 * i} score 0.5", T0 + 2.0 * i),),
                      seconds_since_last_byte=0.1, last_byte_at=T0 + 2.0 * i)
        snaps.append(Snapshot(processes=(dataclasses.replace(parent, cpu_time_s=5.0 + 0.01 * i), *workers),
                              exited=tuple(gone), logs=(log,)))
    return observe_snapshots(series(snaps, 2.0), TH)


@pytest.mark.parametrize("last_starts", [(), (2.0, 2.05, 2.1, 9.5)], ids=["in-turn", "one-caught-late"])
def test_a_pool_recycling_its_workers_while_the_job_progresses_is_healthy_not_crashed(
        last_starts: tuple[float, ...]) -> None:
    """The second look catches one replacement late against siblings that started together: on a loaded CI
    runner that timing made crashed-worker possible; the recycling explains the late worker."""
    observations = _recycling(last_starts)
    found = {o.id: o for o in observations}
    assert "workers-recycled" in found and "progress-seen" in found, sorted(found)
    assert bool(last_starts) == ("worker-replaced" in found), sorted(found)
    hyps = evaluate(observations)
    assert hyps[0].id == "healthy", [(h.id, h.status, h.score) for h in hyps[:3]]
    crashed = next(h for h in hyps if h.id == "crashed-worker")
    assert crashed.status in ("unlikely", "ruled out"), [(e.observation, e.weight) for e in crashed.evidence]
    # a late worker explained by the recycling adds nothing to the crash (a wait on a retired peer can add 0.3)
    assert sum(e.weight for e in crashed.evidence if e.observation == "worker-replaced") <= 0.0


def test_new_rows_with_the_same_parents_commands_states_and_starts_give_the_same_replacements() -> None:
    """A tree whose every process changes its figures every tick hands on new row objects every tick: the answer
    is kept while every field it reads is the same (the same object), and worked out again when one moves."""
    import dataclasses

    base = T0 - 600.0
    rows = _pool(base, base, base + 0.01, base + 0.12)
    first = replacements(rows)
    busier = [dataclasses.replace(p, cpu_time_s=99.0, ctx_voluntary=1234, rss_bytes=1 << 30) for p in rows]
    assert replacements(busier) is first  # new objects, only figures moved
    later = [dataclasses.replace(p, start_time=base + 0.02) if p.pid == 104 else p for p in busier]
    assert replacements(later) == ()  # the late one's start moved into the burst: worked out again
    gone = [dataclasses.replace(p, state="Z") if p.pid == 104 else p for p in busier]
    assert replacements(gone) == ()  # a zombie is no live peer
    assert replacements(busier) == first and replacements(busier) is not first  # and back: worked out again

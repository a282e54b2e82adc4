"""The tree followed down from its roots (collect/proc_tree.py) finds what the machine-wide pass found.

Real processes: a controller that forks, starts processes from a thread, execs and double-forks on
command, answering each command with one JSON line once it is done (no sleeps). Every tick the tree
the collector followed is compared with the machine-wide answer at the same moment (read_proc_table,
tree_pids); no assertion is about time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from triage_tui.collect import proc_tree
from triage_tui.collect.proc_table import read_proc_table, read_text
from triage_tui.collect.snapshot import SnapshotCollector
from triage_tui.collect.targets import resolve_targets, tree_pids
from triage_tui.model.options import CollectOptions
from triage_tui.model.snapshot import Snapshot, Target

from .conftest import settle_asleep

CONTROLLER = r'''
import ctypes, json, os, signal, subprocess, sys, threading

PAUSE = [sys.executable, "-c", "import signal; signal.pause()"]
PARENT = [sys.executable, "-c",
          "import subprocess, sys; g = subprocess.Popen([sys.executable, '-c', 'import signal; signal.pause()']); "
          "print(g.pid, flush=True); g.wait()"]

def answer(**what):
    sys.stdout.write(json.dumps(what) + "\n"); sys.stdout.flush()

def from_a_thread(out):
    child = subprocess.Popen(PARENT, stdout=subprocess.PIPE, text=True)
    out["child"], out["grandchild"] = child.pid, int(child.stdout.readline())
    out["tid"] = threading.get_native_id()
    done.set()
    threading.Event().wait()        # the thread stays: its child stays its child

answer(ready=os.getpid())
for line in sys.stdin:
    command = line.split()
    if command[0] == "fork":
        pid = os.fork()
        if pid == 0:
            signal.pause(); os._exit(0)
        answer(child=pid)
    elif command[0] == "thread":
        done, out = threading.Event(), {}
        threading.Thread(target=from_a_thread, args=(out,), daemon=True).start()
        done.wait()
        answer(**out)
    elif command[0] == "exec-later":
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(w); os.read(r, 1)
            os.execv("/bin/sleep", ["sleep", "3600"])
        os.close(r)
        pipes = globals().setdefault("pipes", {})
        pipes[pid] = w
        answer(child=pid)
    elif command[0] == "exec-now":
        os.write(pipes[int(command[1])], b"x")
        answer(ok=True)
    elif command[0] == "double-fork":
        r, w = os.pipe()
        middle = os.fork()
        if middle == 0:
            grandchild = os.fork()
            if grandchild == 0:
                signal.pause(); os._exit(0)
            os.write(w, str(grandchild).encode()); os._exit(0)
        os.close(w)
        grandchild = int(os.read(r, 32)); os.waitpid(middle, 0)  # the middle one exited and is reaped
        answer(middle=middle, grandchild=grandchild)
    elif command[0] == "spin":  # 30 ms of CPU: its CPU ticks, and so its stat line, move
        import time
        started = time.process_time()
        while time.process_time() - started < 0.03:
            pass
        answer(ok=True)
    elif command[0] == "busy":  # children that each run every 2 ms (a context switch each, next to no CPU)
        kids = []
        for _ in range(int(command[1])):
            pid = os.fork()
            if pid == 0:
                import time
                while True:
                    time.sleep(0.002)
            kids.append(pid)
        answer(children=kids)
    elif command[0] == "subreaper":
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)   # PR_SET_CHILD_SUBREAPER
        answer(ok=True)
'''


class Controller:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", CONTROLLER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, start_new_session=True)
        self.pid = int(self._reply()["ready"])

    def _reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the controller died"
        return dict(json.loads(line))

    def ask(self, *command: object) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(" ".join(map(str, command)) + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # its session: the double-forked grandchild too
        except ProcessLookupError:
            pass
        self.proc.wait()


@pytest.fixture()
def controller() -> Iterator[Controller]:
    c = Controller()
    try:
        yield c
    finally:
        c.close()


def _tick(collector: SnapshotCollector, target: Target) -> Snapshot:
    snapshot = collector.collect(target, CollectOptions(discover_logs=False))
    # the same moment, read the machine-wide way: the followed tree is that tree
    assert [p.pid for p in snapshot.processes] == tree_pids(target, read_proc_table())
    return snapshot


def _pids(snapshot: Snapshot) -> set[int]:
    return {p.pid for p in snapshot.processes}


def test_a_child_forked_after_the_first_look_is_found_at_the_next_tick(controller: Controller,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proc_tree, "REWALK_TICKS", 10**9)  # no rotation: found because its parent ran
    collector = SnapshotCollector()
    try:
        target = resolve_targets([str(controller.pid)])
        settle_asleep([controller.pid])  # blocked reading its next command: it runs no more until it gets one
        assert _pids(_tick(collector, target)) == {controller.pid}
        walked = collector.tree.walked
        _tick(collector, target)
        assert collector.tree.walked == walked  # the parent did not run: its children were not read again
        child = controller.ask("fork")["child"]
        assert _pids(_tick(collector, target)) == {controller.pid, child}
        assert not collector.tree.fallback
    finally:
        collector.close()


def test_a_process_started_from_a_thread_and_its_child_are_found(controller: Controller) -> None:
    collector = SnapshotCollector()
    try:
        target = resolve_targets([str(controller.pid)])
        _tick(collector, target)
        got = controller.ask("thread")
        assert got["tid"] != controller.pid  # a non-main thread's child: in task/TID/children, not task/PID/
        assert str(got["child"]) in read_text(f"/proc/{controller.pid}/task/{got['tid']}/children").split()
        wanted = {controller.pid, got["child"], got["grandchild"]}
        # the thread's run is not the main thread's run count; the rotation reads every process's
        # children once in REWALK_TICKS passes, so they are found by then at the latest
        for _ in range(proc_tree.REWALK_TICKS + 1):
            if _pids(_tick(collector, target)) == wanted:
                break
        assert _pids(_tick(collector, target)) == wanted
        fresh = SnapshotCollector()  # a first look walks every thread of every process
        try:
            assert _pids(_tick(fresh, target)) == wanted
        finally:
            fresh.close()
    finally:
        collector.close()


def test_a_child_that_execs_shows_its_new_name(controller: Controller) -> None:
    collector = SnapshotCollector()
    try:
        target = resolve_targets([str(controller.pid)])
        child = controller.ask("exec-later")["child"]
        row = next(p for p in _tick(collector, target).processes if p.pid == child)
        assert row.name.startswith("python")
        controller.ask("exec-now", child)
        # the exec is the child's to do: wait for it by reading, not by guessing a delay (a failed exec ends the
        # child, a zombie of the controller's: then the loop ends too, and the assertion below says so)
        while read_text(f"/proc/{child}/comm").strip() != "sleep" and read_text(f"/proc/{child}/stat").rpartition(")")[2].split()[0] != "Z":
            os.sched_yield()
        row = next(p for p in _tick(collector, target).processes if p.pid == child)
        assert row.name == "sleep" and row.cmdline == ("sleep", "3600")
    finally:
        collector.close()


@pytest.mark.parametrize("subreaper", [False, True])
def test_a_double_forked_grandchild_is_where_the_machine_wide_pass_put_it(controller: Controller,
                                                                          subreaper: bool) -> None:
    """Its parent exits: the kernel re-parents it to the nearest subreaper or PID 1. Outside the tree, it
    leaves the tree (and has not exited: it is not listed as gone); to a subreaper in the tree, it stays.
    `_tick` checks each tick against the machine-wide answer."""
    collector = SnapshotCollector()
    try:
        if subreaper:
            controller.ask("subreaper")
        target = resolve_targets([str(controller.pid)])
        _tick(collector, target)
        got = controller.ask("double-fork")
        snapshot = _tick(collector, target)
        assert (got["grandchild"] in _pids(snapshot)) is subreaper
        assert got["middle"] not in _pids(snapshot)
        assert all(gone.pid != got["grandchild"] for gone in collector.processes.exited)
        parent = read_proc_table().stats[got["grandchild"]].ppid
        assert (parent == controller.pid) is subreaper
    finally:
        collector.close()


def test_without_children_files_the_machine_wide_pass_is_read_and_said(controller: Controller,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proc_tree, "CHILDREN_FILE", "no-such-children-file")  # as on a kernel without them
    collector = SnapshotCollector()
    try:
        target = resolve_targets([str(controller.pid)])
        child = controller.ask("fork")["child"]
        for _ in range(2):
            snapshot = _tick(collector, target)
            assert _pids(snapshot) == {controller.pid, child}
            status = next(s for s in snapshot.sources if s.name == "processes")
            assert status.status == "ok" and "machine-wide /proc pass" in status.detail
            assert "CONFIG_PROC_CHILDREN" in status.detail
        assert collector._table is not None and collector._table.listed  # the machine was listed
    finally:
        collector.close()


def test_the_followed_tree_is_not_the_machine(controller: Controller) -> None:
    collector = SnapshotCollector()
    try:
        target = resolve_targets([str(controller.pid)])
        child = controller.ask("fork")["child"]
        for _ in range(3):
            _tick(collector, target)
        table = collector._table
        assert table is not None and not table.listed  # /proc was not listed
        assert set(table.stats) == {controller.pid, child}
    finally:
        collector.close()


def test_a_busy_process_of_many_threads_costs_its_main_threads_children_file_only(
        controller: Controller, monkeypatch: pytest.MonkeyPatch) -> None:
    """It ran (its stat line changed) but started no thread: only its main thread's children are read again; the
    other threads' wait for its turn in the rotation (switched off here)."""
    collector = SnapshotCollector()
    try:
        target = resolve_targets([str(controller.pid)])
        got = controller.ask("thread")
        assert _pids(_tick(collector, target)) == {controller.pid, got["child"], got["grandchild"]}  # a first look
        monkeypatch.setattr(proc_tree, "REWALK_TICKS", 10**9)
        read: list[str] = []
        real = proc_tree.read_seq_text

        def noting(path: str) -> str:
            read.append(path)
            return real(path)

        monkeypatch.setattr(proc_tree, "read_seq_text", noting)
        controller.ask("spin")  # it runs (its stat line moves); its thread count stays
        _tick(collector, target)
        mine = [path for path in read if path.startswith(f"/proc/{controller.pid}/")]
        assert mine == [f"/proc/{controller.pid}/task/{controller.pid}/children"]
    finally:
        collector.close()


def test_processes_that_ran_read_no_children_file_when_few_pids_were_made_and_a_fork_is_still_found(
        controller: Controller, monkeypatch: pytest.MonkeyPatch) -> None:
    """40 children that run every pass: when fewer PIDs were made on the node since the pass before last than
    processes ran, only the parents those PIDs name have their children read (not one file per process that
    ran), and a child forked just before a pass is in that pass's tree, as the machine-wide pass says (_tick)."""
    monkeypatch.setattr(proc_tree, "REWALK_TICKS", 10**9)  # no rotation: found by the new PIDs or not at all
    busy = controller.ask("busy", 40)["children"]
    collector = SnapshotCollector()
    try:
        target = resolve_targets([str(controller.pid)])
        _tick(collector, target)
        by_parents = 0
        for _ in range(30):
            walked, answered = collector.tree.walked, collector.tree.new_pids.answered
            child = controller.ask("fork")["child"]
            assert child in _pids(_tick(collector, target))
            if collector.tree.new_pids.answered > answered:
                by_parents += 1
                assert collector.tree.walked - walked < len(busy) // 2  # not the children of each one that ran
        assert by_parents > 0  # the node made few enough PIDs at least once in 30 passes
        assert not collector.tree.fallback
    finally:
        collector.close()

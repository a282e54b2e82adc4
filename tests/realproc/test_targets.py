"""TARGET resolution against real trees: PID, name:REGEX and :PORT select the same tree."""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest

from triage_tui.collect.proc_table import read_proc_table
from triage_tui.collect.snapshot import SnapshotCollector
from triage_tui.collect.targets import resolve_targets, tree_pids
from triage_tui.host.base import TargetError

from .trees import PORT_ARG_TREE, started


def _tree(specs: list[str]) -> list[int]:
    target = resolve_targets(specs)
    return sorted(tree_pids(target, read_proc_table()))


def test_pid_regex_and_listening_port_select_the_same_tree(incident_tree: dict[str, Any]) -> None:
    launcher = incident_tree["launcher"]
    by_pid = _tree([str(launcher)])
    # workers renamed themselves: the tree still holds them, whatever they are called
    assert set(incident_tree["workers"]) <= set(by_pid)
    assert {incident_tree["busy"], incident_tree["zombie"], incident_tree["stopped"]} <= set(by_pid)
    assert _tree([f"name:{incident_tree['tag']}"]) == by_pid
    port_target = resolve_targets([f":{incident_tree['port']}"])
    assert [r.pid for r in port_target.roots] == [launcher]  # the children hold the inode too: topmost wins
    assert "listens" in port_target.roots[0].reason
    assert sorted(tree_pids(port_target)) == by_pid


def test_a_port_selects_the_launcher_when_a_child_has_the_lower_pid(incident_tree: dict[str, Any]) -> None:
    """PIDs wrap: a forked child can have a lower PID than its launcher (CI saw the stopped child at 301 under a
    launcher at 32759), and the first holder of the socket found in PID order was then taken as the root. Here the
    real table is read in an order that puts every child before the launcher, as a wrap would."""
    from triage_tui.collect.targets import _own_lineage, _resolve_port

    table = read_proc_table()
    launcher = incident_tree["launcher"]
    children = [incident_tree["stopped"], *incident_tree["workers"], incident_tree["busy"]]
    assert all(table.parent(c) == launcher for c in children)
    first = [c for c in children if c in table.stats]
    wrapped = dict((pid, table.stats[pid]) for pid in first)
    wrapped.update((pid, stat) for pid, stat in table.stats.items() if pid not in wrapped)
    table.stats.clear()
    table.stats.update(wrapped)
    roots = _resolve_port(f":{incident_tree['port']}", incident_tree["port"], table, _own_lineage(table))
    assert [r.pid for r in roots] == [launcher]


def test_regex_matching_renamed_comm_finds_the_workers(incident_tree: dict[str, Any]) -> None:
    target = resolve_targets(["name:^sched_tp"])
    assert set(incident_tree["workers"]) <= {r.pid for r in target.roots}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_port_asked_for_on_the_command_line_selects_the_launcher() -> None:
    port = _free_port()
    for form in (["--port", str(port)], [f"--port={port}"]):
        with started(PORT_ARG_TREE, "--model", "x", *form) as (_, info):
            target = resolve_targets([f":{port}"])
            assert [r.pid for r in target.roots] == [info["launcher"]]
            assert "asks for --port" in target.roots[0].reason
            assert sorted(tree_pids(target)) == sorted([info["launcher"], info["child"]])
            assert sorted(tree_pids(resolve_targets([str(info["launcher"])]))) == sorted(tree_pids(target))


def test_a_port_target_is_probed_without_port_option() -> None:
    port = _free_port()
    with started(PORT_ARG_TREE, f"--port={port}"):
        collector = SnapshotCollector()
        try:
            snapshot = collector.collect(resolve_targets([f":{port}"]))
        finally:
            collector.close()
    assert {p.address for p in snapshot.ports.probes} == {"127.0.0.1", "::1"}
    assert next(p for p in snapshot.ports.probes if p.address == "127.0.0.1").result == "refused"


def test_no_spec_with_port_resolves_the_port() -> None:
    port = _free_port()
    with started(PORT_ARG_TREE, f"--port={port}") as (_, info):
        target = resolve_targets([], port=port)
        assert [r.pid for r in target.roots] == [info["launcher"]]
        assert not target.auto_picked


def test_no_spec_picks_candidates_with_reasons(incident_tree: dict[str, Any]) -> None:
    target = resolve_targets([], gpu_pids=[incident_tree["workers"][0]])
    assert target.auto_picked
    assert target.roots[0].pid == incident_tree["workers"][0]
    assert target.roots[0].reason == "holds a GPU"
    assert all(r.reason for r in target.roots)
    me = os.getpid()
    assert me not in {r.pid for r in target.roots}


def test_own_process_and_ancestors_are_never_matched() -> None:
    # pytest's own command line contains "pytest"; so do its parents' (shell), maybe
    table = read_proc_table()
    mine = {os.getpid(), *table.ancestors(os.getpid())}
    try:
        target = resolve_targets([f"name:{os.path.basename(__file__)}"])
    except TargetError:
        return  # nothing but us matched: correct
    assert not mine & {r.pid for r in target.roots}


def _dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


@pytest.mark.parametrize("spec, message", [
    ("name:(unclosed", "does not compile"),
    ("name:no-process-is-called-this-9f8e7d", "matches no process"),
    ("name:", "empty regex"),
    ("frobnicate", "malformed target"),
    (":http", "must be a number"),
    (":70000", "1-65535"),
    # "²".isdigit() is True but int("²") raises: these crashed with a ValueError traceback
    ("²", "malformed target"),
    (":²", "must be a number"),
])
def test_bad_specs_give_one_clear_line(spec: str, message: str) -> None:
    with pytest.raises(TargetError) as caught:
        resolve_targets([spec])
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_pid_that_does_not_exist() -> None:
    pid = _dead_pid()
    with pytest.raises(TargetError, match=f"no process with PID {pid}"):
        resolve_targets([str(pid)])


def test_port_nothing_listens_on_and_nobody_asks_for() -> None:
    port = _free_port()
    with pytest.raises(TargetError, match=f"nothing listens on port {port}"):
        resolve_targets([f":{port}"])


def test_a_thread_id_is_refused_with_its_process() -> None:
    """/proc/TID exists for every thread (unlisted): it used to pass as a root whose tree was empty."""
    import threading

    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        assert worker.native_id is not None and worker.native_id != os.getpid()
        with pytest.raises(TargetError, match=f"is a thread of PID {os.getpid()}, not a process"):
            resolve_targets([str(worker.native_id)])
    finally:
        release.set()
        worker.join()


def test_pids_alone_are_resolved_without_a_pass_over_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """#18: the app's opening resolves `triage PID` from /proc/PID itself; the answers are the same."""
    import threading

    import triage_tui.collect.targets as targets

    def no_pass(*args: object, **kwargs: object) -> None:
        raise AssertionError("a pass over every process to resolve PIDs")

    monkeypatch.setattr(targets, "read_proc_table", no_pass)
    me = os.getpid()
    assert [r.pid for r in resolve_targets([str(me), str(os.getppid())]).roots] == [me, os.getppid()]
    dead = _dead_pid()
    with pytest.raises(TargetError, match=f"no process with PID {dead}"):
        resolve_targets([str(dead)])
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        with pytest.raises(TargetError, match=f"is a thread of PID {me}, not a process"):
            resolve_targets([str(worker.native_id)])
    finally:
        release.set()
        worker.join()
    with pytest.raises(AssertionError, match="a pass over every process"):  # a name still looks at them all
        resolve_targets([str(me), "name:python"])

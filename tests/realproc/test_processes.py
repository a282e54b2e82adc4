"""ProcessCollector and the memory collectors against a real stuck tree."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import triage_tui.collect.processes as processes_module
from triage_tui.collect.memory import SmapsReader, collect_cgroup_memory, collect_system_memory, target_memory
from triage_tui.collect.processes import ProcessCollector
from triage_tui.collect.snapshot import SnapshotCollector
from triage_tui.collect.targets import resolve_targets
from triage_tui.host.base import CollectOptions
from triage_tui.model import from_json, is_known, to_json
from triage_tui.model.snapshot import Snapshot, Target, TargetRoot

from .conftest import WEIGHTS_BYTES, WORKERS


def _by_pid(rows: tuple) -> dict[int, Any]:
    return {r.pid: r for r in rows}


@pytest.fixture(scope="module")
def two_ticks(incident_tree: dict[str, Any]) -> tuple[Snapshot, Snapshot]:
    collector = SnapshotCollector()
    try:
        target = resolve_targets([str(incident_tree["launcher"])])
        options = CollectOptions(port=incident_tree["port"], interval_s=0.1)
        first = collector.collect(target, options)
        assert collector.smaps.wait_idle(30)
        second = collector.collect(target, options)
        return first, second
    finally:
        collector.close()


def test_states_of_the_stuck_tree(incident_tree: dict[str, Any], two_ticks: tuple[Snapshot, Snapshot]) -> None:
    rows = _by_pid(two_ticks[1].processes)
    assert len(rows) == WORKERS + 4  # launcher, workers, busy, zombie, stopped
    for pid in incident_tree["workers"]:
        worker = rows[pid]
        assert worker.state == "S" and worker.name.startswith("sched_tp")
        assert worker.thread_states.get("S", 0) >= 1 and "R" not in worker.thread_states
        assert worker.error is None and not worker.exited
    assert rows[incident_tree["zombie"]].state == "Z"
    assert rows[incident_tree["stopped"]].state == "T"
    busy = rows[incident_tree["busy"]]
    assert busy.state == "R" and busy.thread_states.get("R", 0) >= 1


def test_every_field_is_filled_for_a_live_process(incident_tree: dict[str, Any],
                                                  two_ticks: tuple[Snapshot, Snapshot]) -> None:
    launcher = _by_pid(two_ticks[1].processes)[incident_tree["launcher"]]
    for name in ("cpu_percent", "cpu_time_s", "user_time_s", "system_time_s", "threads", "start_time",
                 "ctx_voluntary", "ctx_involuntary", "ctx_voluntary_delta", "ctx_involuntary_delta",
                 "read_bytes", "write_bytes", "read_bytes_delta", "write_bytes_delta", "major_faults",
                 "major_faults_delta", "num_fds", "user", "rss_bytes", "rss_anon_bytes", "rss_file_bytes",
                 "rss_shmem_bytes", "vms_bytes", "pss_bytes", "uss_bytes", "swap_bytes", "pss_read_at"):
        assert is_known(getattr(launcher, name)), f"{name} = {getattr(launcher, name)}"
    assert launcher.user == "root" and launcher.nspid and launcher.nspid[-1] == launcher.pid
    assert launcher.num_fds >= 3  # type: ignore[operator]
    first = _by_pid(two_ticks[0].processes)[incident_tree["launcher"]]
    assert not is_known(first.cpu_percent) and first.cpu_percent.reason == "first sample"


def test_zombie_row_says_why_memory_is_missing(incident_tree: dict[str, Any],
                                               two_ticks: tuple[Snapshot, Snapshot]) -> None:
    zombie = _by_pid(two_ticks[1].processes)[incident_tree["zombie"]]
    assert not is_known(zombie.rss_bytes) and "zombie" in zombie.rss_bytes.reason
    assert not is_known(zombie.num_fds) and "zombie" in zombie.num_fds.reason
    assert zombie.error is None


def test_rss_sum_far_above_pss_sum_for_shared_mmap(incident_tree: dict[str, Any],
                                                    two_ticks: tuple[Snapshot, Snapshot]) -> None:
    rows = _by_pid(two_ticks[1].processes)
    workers = [rows[p] for p in incident_tree["workers"]]
    for w in workers:
        assert w.rss_file_bytes >= WEIGHTS_BYTES  # type: ignore[operator]
    sums = target_memory(workers)
    assert sums.pss_covered == WORKERS
    assert sums.rss_sum_bytes > 2 * sums.pss_sum_bytes  # type: ignore[operator]
    assert two_ticks[1].memory.target.pss_covered == len([p for p in rows.values() if is_known(p.pss_bytes)])


def test_ports_and_probes_of_the_tree(incident_tree: dict[str, Any], two_ticks: tuple[Snapshot, Snapshot]) -> None:
    ports = two_ticks[1].ports
    assert {s.pid for s in ports.listening if s.port == incident_tree["port"]} >= {incident_tree["launcher"]}
    v4 = next(p for p in ports.probes if p.address == "127.0.0.1")
    # the launcher's socket listens but nothing serves it: the kernel completes the handshake, the request
    # gets no reply, and that is its own result (a connect alone would have said "accepted")
    assert v4.result == "no answer", v4
    assert "does not answer" in v4.detail or "closes without a reply" in v4.detail


def test_sources_all_report(two_ticks: tuple[Snapshot, Snapshot]) -> None:
    names = {s.name: s for s in two_ticks[1].sources}
    assert {"processes", "memory", "ports", "kernel"} <= set(names)
    assert all(s.status in ("ok", "stale") for s in names.values())
    assert two_ticks[1].gpus.error is not None  # no GPU collaborator given: said so, not empty
    assert from_json(Snapshot, to_json(two_ticks[1])) == two_ticks[1]


def test_system_and_cgroup_memory_match_free() -> None:
    system = collect_system_memory()
    assert system.total_bytes > system.available_bytes > 0  # type: ignore[operator]
    assert is_known(system.used_bytes) and is_known(system.buff_cache_bytes)
    cgroup = collect_cgroup_memory(os.getpid())
    assert cgroup.version in (1, 2)
    assert cgroup.current_bytes > 0  # type: ignore[operator]
    assert cgroup.max_bytes is None or cgroup.max_bytes > 0


@pytest.fixture()
def three_sleepers() -> Iterator[list[subprocess.Popen]]:
    """Direct children of the test, so the test can reap one and make its PID vanish for real."""
    procs = [subprocess.Popen(["sleep", "1000"], start_new_session=True) for _ in range(3)]
    try:
        yield procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_a_process_that_exits_mid_read_marks_its_row(monkeypatch: pytest.MonkeyPatch,
                                                     three_sleepers: list[subprocess.Popen]) -> None:
    first, victim, last = three_sleepers
    real_read = processes_module.read_text

    def read_then_vanish(path: str) -> str:
        text = real_read(path)
        if path == f"/proc/{victim.pid}/stat":  # it vanishes between its stat and the rest of its files
            victim.kill()
            victim.wait()
        return text

    monkeypatch.setattr(processes_module, "read_text", read_then_vanish)
    rows = _by_pid(ProcessCollector().collect([first.pid, victim.pid, last.pid]))
    assert list(rows) == [first.pid, victim.pid, last.pid]
    assert rows[first.pid].error is None and rows[last.pid].error is None  # the walk went on
    assert rows[victim.pid].exited and "exited" in rows[victim.pid].error.reason  # type: ignore[union-attr]
    assert is_known(rows[victim.pid].cpu_time_s)  # what was read before it went is kept


def test_a_vanished_pid_marks_its_row_and_lands_in_exited(three_sleepers: list[subprocess.Popen]) -> None:
    keep, goner, _ = three_sleepers
    collector = ProcessCollector()
    collector.collect([keep.pid, goner.pid])
    goner.kill()
    goner.wait()
    rows = _by_pid(collector.collect([keep.pid, goner.pid]))
    assert rows[goner.pid].exited and rows[goner.pid].error is not None
    assert rows[keep.pid].error is None
    assert [e.pid for e in collector.exited] == [goner.pid]
    assert not is_known(collector.exited[0].exit_code)


def test_smaps_reader_stays_on_its_thread_and_ages_figures() -> None:
    reader = SmapsReader()
    try:
        reader.submit({os.getpid(): 0}, budget_ms=100, interval_s=1)
        assert reader.wait_idle(30)
        figure = reader.figures()[os.getpid()]
        assert figure.pss_bytes > 0 and figure.uss_bytes > 0  # type: ignore[operator]
        assert figure.cost_ms >= 0
        assert reader._thread.is_alive() and reader._thread is not __import__("threading").current_thread()
    finally:
        reader.close()
    assert not reader._thread.is_alive()


def test_snapshot_survives_a_failing_source(incident_tree: dict[str, Any]) -> None:
    def broken_gpus():  # type: ignore[no-untyped-def]
        raise RuntimeError("driver fell over")

    collector = SnapshotCollector(gpus=broken_gpus)
    try:
        snapshot = collector.collect(resolve_targets([str(incident_tree["launcher"])]))
    finally:
        collector.close()
    gpu_status = next(s for s in snapshot.sources if s.name == "gpus")
    assert gpu_status.status == "failing" and "driver fell over" in gpu_status.detail
    assert snapshot.processes and snapshot.gpus.error is not None


def test_root_that_exited_between_resolve_and_collect() -> None:
    collector = SnapshotCollector()
    try:
        snapshot = collector.collect(Target(roots=(TargetRoot(4_000_001, "gone"),)))
    finally:
        collector.close()
    assert snapshot.processes == () and all(s.status == "ok" for s in snapshot.sources)


def test_a_zombie_that_is_reaped_lands_in_exited_with_its_exit_code() -> None:
    child = subprocess.Popen([sys.executable, "-c", "raise SystemExit(7)"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: a zombie now
    collector = ProcessCollector()
    try:
        (row,) = collector.collect([child.pid])
        assert row.state == "Z"
    finally:
        child.wait()
    collector.collect([])
    assert [(e.pid, e.exit_code) for e in collector.exited] == [(child.pid, 7)]


def test_smaps_budget_bounds_a_tick_and_fresh_figures_are_not_reread(incident_tree: dict[str, Any]) -> None:
    pids = [incident_tree["launcher"], *incident_tree["workers"]]
    reader = SmapsReader()
    try:
        # a budget smaller than any read: each tick starts one read, then stops
        reader.submit({pid: 0 for pid in pids}, budget_ms=1e-6, interval_s=1)
        assert reader.wait_idle(30)
        assert len(reader.figures()) == 1
        reader.submit({pid: 0 for pid in pids}, budget_ms=1e-6, interval_s=1)
        assert reader.wait_idle(30)
        assert len(reader.figures()) == 2  # the never-read go first
        # a figure is not re-read before it is due: re-submitting at once re-reads nothing
        first = reader.figures()
        reader.submit({pid: 2**40 for pid in first}, budget_ms=1000, interval_s=1)
        assert reader.wait_idle(30)
        assert {pid: f.read_at for pid, f in reader.figures().items()} == {
            pid: f.read_at for pid, f in first.items()}
    finally:
        reader.close()

"""One refresh of every source into a Snapshot; a failing source never stops the others.

The composition `triage report` and the app tick through (via Host.collect). Each source is
timed and reported in Snapshot.sources as ok / stale / failing with its duration.
"""

from __future__ import annotations

import dataclasses
import socket
import time
from collections.abc import Callable, Sequence
from typing import Optional, TypeVar

from ..model.options import CollectOptions
from ..model.snapshot import (
    GpuReport,
    KernelReport,
    LogTail,
    MemoryReport,
    PortReport,
    ProcessInfo,
    Snapshot,
    SourceStatus,
    Target,
    TargetMemory,
    TargetRoot,
)
from ..model.unavailable import Unavailable, is_known
from ..model.waits import Wait, WaitSource
from .announced_ports import NamedPort, named_by_processes, named_ports, read_environ
from .kernel import KernelLogCollector
from .memory import SmapsReader, collect_cgroup_memory, collect_system_memory, target_memory
from .ports import PortCollector
from .proc_table import ProcTable, read_proc_table
from .proc_tree import TreeFollower
from .processes import ProcessCollector
from .targets import tree_pids
from .waits import WaitCollector, unchanged_since_last

T = TypeVar("T")
LogsSource = Callable[[tuple[ProcessInfo, ...], CollectOptions], tuple[LogTail, ...]]
GpuSource = Callable[[], GpuReport]
GpuJoin = Callable[[tuple[ProcessInfo, ...], GpuReport], tuple[ProcessInfo, ...]]
STALE_MS = 1000.0  # a source slower than this is reported stale: its figure is late


def port_of_specs(specs: tuple[str, ...]) -> Optional[int]:
    """The N of the first `:N` target spec: a :PORT target is probed even without --port."""
    for spec in specs:
        text = spec.strip()
        if text.startswith(":") and text[1:].isdecimal():
            return int(text[1:])
    return None


def _names_and_start(processes: Sequence[ProcessInfo]) -> tuple[set[str], Optional[float]]:
    """The tree's process names and when its oldest process started (for kernel lines about PIDs never seen)."""
    live = [p for p in processes if not p.exited]
    starts = [float(p.start_time) for p in live if isinstance(p.start_time, (int, float))]
    return {p.name for p in live}, (min(starts) if starts else None)


class SnapshotCollector:
    """Stateful (deltas, smaps schedule, kernel log position): one per host."""

    def __init__(
        self,
        host_name: Optional[str] = None,
        logs: Optional[LogsSource] = None,
        gpus: Optional[GpuSource] = None,
        join_gpus: Optional[GpuJoin] = None,
    ) -> None:
        self.host_name = host_name or socket.gethostname()
        self.logs = logs
        self.gpus = gpus
        self.join_gpus = join_gpus
        self.processes = ProcessCollector()
        self.tree = TreeFollower()
        self.smaps = SmapsReader()
        self.kernel = KernelLogCollector()
        self.ports = PortCollector()
        self.waits = WaitCollector()
        self._last_at: Optional[float] = None
        self._table: Optional[ProcTable] = None  # the last /proc pass: its unchanged stat lines are not parsed again
        # PID -> when the first process seen with it started (None: unknown); the kernel collector drops a line
        # logged before that start, which was about an earlier process of the same PID (pid_max is 32768 on many
        # nodes, and a busy one wraps it within the hour)
        self._seen_pids: dict[int, Optional[float]] = {}
        self._tree: frozenset[int] = frozenset()  # last tick's tree: their stat files are held open
        self._roots: frozenset[int] = frozenset()  # last tick's target roots
        # last tick's tree in order and the roots and children map it was ordered from (a quiet pass shares the map)
        self._order: tuple[tuple[TargetRoot, ...], dict[int, list[int]], list[int]] = ((), {}, [])
        self._live_of: tuple[tuple[ProcessInfo, ...], list[int]] = ((), [])
        self._rss_of: tuple[tuple[ProcessInfo, ...], dict[int, int]] = ((), {})
        self._environ_cache: dict[tuple[int, object], dict[str, str]] = {}
        self._environs_of: tuple[tuple[ProcessInfo, ...], dict[int, dict[str, str]]] = ((), {})
        self._named_of: tuple[tuple[ProcessInfo, ...], list[NamedPort]] = ((), [])  # the rows' named ports
        self._unchanged_of: tuple[tuple[ProcessInfo, ...], frozenset] = ((), frozenset())
        self._pss_fields: dict[int, tuple[object, dict[str, object]]] = {}  # pid -> (figure, its row fields)
        self._target_memory: tuple[tuple[ProcessInfo, ...], Optional[TargetMemory]] = ((), None)
        self._names_of: tuple[tuple[ProcessInfo, ...], tuple[frozenset[str], Optional[float]]] = ((), (frozenset(), None))
        self._last: Optional[Snapshot] = None  # last tick's: its tuples are handed on when nothing in them moved

    def close(self) -> None:
        self.smaps.close()
        self.kernel.close()
        self.processes.close()

    def _run(self, name: str, statuses: list[SourceStatus], fallback: T, read: Callable[[], T]) -> T:
        started = time.perf_counter()
        try:
            value = read()
        except Exception as exc:  # noqa: BLE001 - a source that raises must not take the snapshot down
            ms = (time.perf_counter() - started) * 1000
            statuses.append(SourceStatus(name, "failing", ms, f"{type(exc).__name__}: {exc}"))
            return fallback
        ms = (time.perf_counter() - started) * 1000
        statuses.append(SourceStatus(name, "stale" if ms > STALE_MS else "ok", ms,
                                     f"took {ms:.0f} ms" if ms > STALE_MS else ""))
        return value

    def collect(self, target: Target, options: CollectOptions = CollectOptions()) -> Snapshot:
        taken_at = time.time()
        interval = taken_at - self._last_at if self._last_at is not None else 0.0
        self._last_at = taken_at
        statuses: list[SourceStatus] = []

        tables: list[ProcTable] = []

        def read_processes() -> tuple[ProcessInfo, ...]:
            processes = self.processes
            roots = frozenset(root.pid for root in target.roots)
            same_target, self._roots = roots == self._roots, roots
            # the tree followed down from its roots (proc_tree.py); where the children files cannot be read,
            # the machine-wide pass: for another target (re-resolved after a restart) every process, since its
            # tree may hold processes that were outside the last one; then only the tree and the new
            table = self.tree.follow([root.pid for root in target.roots], self._tree, self._table, processes.held)
            if table is None:
                table = read_proc_table(previous=self._table, held=processes.held, watch=self._tree | roots,
                                        skip_known=same_target)
            self._table = table
            tables.append(table)
            roots_before, children_before, pids = self._order
            if table.children is not children_before or target.roots != roots_before:
                pids = tree_pids(target, table)  # else no parent changed: the same tree, in the same order
                self._order = (target.roots, table.children, pids)
                self._tree = frozenset(pids)
            return processes.collect(pids, table, self._smaps_fields())

        no_processes: tuple[ProcessInfo, ...] = ()
        processes = self._run("processes", statuses, no_processes, read_processes)
        if self.tree.fallback:  # said where the tree came from: the dearer pass, and why
            statuses[-1] = dataclasses.replace(statuses[-1], detail="; ".join(
                part for part in (statuses[-1].detail, self.tree.fallback) if part))
        if self._last is not None:
            # every row last tick's object: last tick's tuple, from here on, so that what is worked out from
            # the rows alone (environments, named ports, log links, the unchanged set) is known by identity
            processes = same_or_new(self._last.processes, processes)
        if self._last is None or processes is not self._last.processes:  # else last tick's rows: all seen
            for p in processes:
                if p.pid not in self._seen_pids:
                    self._seen_pids[p.pid] = float(p.start_time) if isinstance(p.start_time, (int, float)) else None
        processes, memory = self._memory(processes, options, statuses)
        logs: tuple[LogTail, ...] = ()
        if self.logs is not None:
            follow, rows = self.logs, processes
            logs = self._run("logs", statuses, (), lambda: follow(rows, options))
        port_pids = self._live(processes)
        probe_port = options.port if options.port is not None else port_of_specs(target.specs)
        environs = self._environs(processes)
        ranks = frozenset(pid for pid, env in environs.items() if "RANK" in env and "WORLD_SIZE" in env)
        if processes is not self._named_of[0]:
            self._named_of = (processes, named_by_processes(processes, environs))
        named = named_ports(processes, environs, logs, self._named_of[1])
        ports = self._run("ports", statuses, PortReport(error=Unavailable("ports source failed")),
                          lambda: self.ports.collect(port_pids, probe_port, named, ranks, self._unchanged(processes)))
        kernel = self._run("kernel", statuses, KernelReport(error=Unavailable("kernel source failed")),
                           lambda: self.kernel.collect(self._seen_pids, *self._names_and_start(processes)))
        gpus = GpuReport(error=Unavailable("GPU collector not available"))
        if self.gpus is not None:
            gpus = self._run("gpus", statuses, GpuReport(error=Unavailable("GPU source failed")), self.gpus)
            if self.join_gpus is not None:
                joined, gpu_report = self.join_gpus, gpus
                processes = self._run("gpu-join", statuses, processes, lambda: joined(processes, gpu_report))
        live = tuple(self._live(processes))
        no_waits: tuple[tuple[Wait, ...], WaitSource] = ((), WaitSource(error=Unavailable("waits source failed")))
        waits, waits_source = self._run("waits", statuses, no_waits,
                                        lambda: self.waits.collect(live, tables[0] if tables else None,
                                                                   self._unchanged(processes)))
        last = self._last
        if last is not None:
            # every row (wait) is last tick's object: last tick's tuple, so that a long watch's snapshots of a
            # quiet tree share one tuple and one index of rows by PID (36 KB a snapshot at 1,000 processes)
            processes = same_or_new(last.processes, processes)
            waits = same_or_new(last.waits, waits)
        snapshot = Snapshot(
            host=self.host_name, taken_at=taken_at, interval_s=interval, target=target, processes=processes,
            exited=self.processes.exited, memory=memory, logs=logs, ports=ports, gpus=gpus, kernel=kernel,
            waits=waits, waits_source=waits_source,
            sources=tuple(statuses),
        )
        if last is not None:
            snapshot.share_index(last)
        self._last = snapshot
        return snapshot

    def _live(self, processes: tuple[ProcessInfo, ...]) -> list[int]:
        """The PIDs of the rows not exited, once per tuple of rows (the ports and the waits ask)."""
        if processes is not self._live_of[0]:
            self._live_of = (processes, [p.pid for p in processes if not p.exited])
        return self._live_of[1]

    def _names_and_start(self, processes: tuple[ProcessInfo, ...]) -> tuple[frozenset[str], Optional[float]]:
        """_names_and_start, worked out again only for another tuple of rows (a quiet tick hands on last tick's)."""
        if processes is not self._names_of[0]:
            names, start = _names_and_start(processes)
            self._names_of = (processes, (frozenset(names), start))
        return self._names_of[1]

    def _environs(self, processes: tuple[ProcessInfo, ...]) -> dict[int, dict[str, str]]:
        """The few environment variables that name ports and ranks, read once per process (by PID and start
        time: the environment a process started with does not change); last tick's dict for last tick's
        tuple of rows."""
        if processes is self._environs_of[0]:
            return self._environs_of[1]
        out: dict[int, dict[str, str]] = {}
        keep: dict[tuple[int, object], dict[str, str]] = {}
        for p in processes:
            if p.exited:
                continue
            key = (p.pid, p.start_time if isinstance(p.start_time, float) else None)
            env = self._environ_cache.get(key)
            if env is None:
                env = read_environ(p.pid)
            keep[key] = out[p.pid] = env
        self._environ_cache = keep
        self._environs_of = (processes, out)
        return out

    def _unchanged(self, processes: tuple[ProcessInfo, ...]) -> frozenset:
        """unchanged_since_last, once per tuple of rows (the smaps thread and the waits both ask)."""
        if processes is not self._unchanged_of[0]:
            self._unchanged_of = (processes, unchanged_since_last(processes))
        return self._unchanged_of[1]

    def _smaps_fields(self) -> dict[int, dict[str, object]]:
        """The PSS figures the smaps thread already has, as ProcessInfo fields, for the rows being built
        (a figure not read again is the same object: its fields are last tick's dict)."""
        out: dict[int, dict[str, object]] = {}
        kept = self._pss_fields
        for pid, figure in self.smaps.figures().items():
            before = kept.get(pid)
            if before is not None and before[0] is figure:
                out[pid] = before[1]
                continue
            known = is_known(figure.pss_bytes)
            out[pid] = {"pss_bytes": figure.pss_bytes, "uss_bytes": figure.uss_bytes, "swap_bytes": figure.swap_bytes,
                        "pss_read_at": figure.read_at if known else figure.pss_bytes}
            kept[pid] = (figure, out[pid])
        if len(kept) > 2 * len(out) + 100:  # forget processes long gone
            self._pss_fields = {pid: v for pid, v in kept.items() if pid in out}
        return out

    def _sums(self, processes: tuple[ProcessInfo, ...]) -> TargetMemory:
        """target_memory, summed again only when a row is not last tick's object (then a figure moved)."""
        rows, sums = self._target_memory
        if sums is None or len(rows) != len(processes) or any(a is not b for a, b in zip(rows, processes)):
            sums = target_memory(processes)
            self._target_memory = (processes, sums)
        return sums

    def _memory(self, processes: tuple[ProcessInfo, ...], options: CollectOptions,
                statuses: list[SourceStatus]) -> tuple[tuple[ProcessInfo, ...], MemoryReport]:
        """Hand this tick's smaps work to the reader thread (the rows already carry the figures it had)."""
        def read() -> tuple[tuple[ProcessInfo, ...], MemoryReport]:
            if processes is not self._rss_of[0]:  # else last tick's rows: the same figures
                self._rss_of = (processes, {p.pid: (p.rss_bytes if is_known(p.rss_bytes) else 0)
                                            for p in processes if not p.exited})
            live = self._rss_of[1]
            self.smaps.submit(live, options.smaps_budget_ms, options.interval_s, self._unchanged(processes))
            out = processes
            root = next((p.pid for p in out if not p.exited), None)
            cgroup = collect_cgroup_memory(root) if root is not None else None
            report = MemoryReport(system=collect_system_memory(), target=self._sums(out),
                                  smaps_budget_ms=options.smaps_budget_ms, smaps_spent_ms=self.smaps.spent_ms)
            if cgroup is not None:
                report = dataclasses.replace(report, cgroup=cgroup)
            return out, report

        result = self._run("memory", statuses, (processes, MemoryReport()), read)
        blocked = self.smaps.blocked_read()
        if blocked is not None:  # PSS figures keep their (growing) ages; say why they are not refreshed
            statuses.append(SourceStatus("smaps", "stale", 0.0,
                                         f"smaps_rollup of PID {blocked[0]} blocked for {blocked[1]:.0f} s "
                                         "(its mm lock is held: a process stuck in D state?)"))
        return result


def same_or_new(before: tuple[T, ...], now: tuple[T, ...]) -> tuple[T, ...]:
    """`before` when it holds the very objects of `now`, in order; else `now`."""
    if len(before) == len(now) and all(a is b for a, b in zip(before, now)):
        return before
    return now

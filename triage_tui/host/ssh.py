"""SshHost: the Host protocol for a node over SSH, in agent mode (collectors run on the node) or agentless.

When the connection drops, collect() returns a snapshot that holds nothing but an "ssh" source marked
failing, "disconnected since HH:MM:SS", so nothing stale passes for fresh; the Incident keeps the timeline
it had. Reconnection is tried on later refreshes with exponential backoff (1 s doubling to 30 s).
"""

from __future__ import annotations

import dataclasses
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from typing import Optional

from ..model.codec import from_data, to_data
from ..model.mappings import FileMapping
from ..model.snapshot import Snapshot, SourceStatus, Target
from ..model.stacks import StackCapture
from ..model.text_format import clock as _clock
from ..model.unavailable import Unavailable
from .base import CollectOptions, StackOptions, TargetError
from .ssh_agent_client import AgentSession, NoUsablePython
from .ssh_agentless import (
    MIN_CPU_INTERVAL_S,
    CpuSample,
    Sections,
    agentless_mappings,
    agentless_mappings_script,
    build_script,
    build_snapshot,
    cpu_sample,
    new_marker,
    ps_rows,
    resolve_from_ps,
    snapshot_clock,
    split_sections,
)
from .ssh_agentless_stacks import PyspyOnNode
from .ssh_connect import Connection, SshError, SshOptions, connect
from .ssh_exec import bounded_shell, run_command

BACKOFF_START_S = 1.0
BACKOFF_MAX_S = 30.0
CPU_BASELINES = 4  # agentless: CPU tick samples kept, so a refresh soon after the last has an older baseline


class SshHost:
    """One node over SSH. Calls are serialised (one channel, one request at a time): a stack capture
    started from the UI thread waits for the refresh in flight, and the next refresh waits for it."""

    def __init__(self, options: SshOptions, agentless: bool = False, request_timeout_s: float = 30.0,
                 backoff_start_s: float = BACKOFF_START_S, progress: Optional[Callable[[str], None]] = None) -> None:
        self.options = options
        self._progress = progress or (lambda _: None)
        self.name = options.destination
        self.want_agentless = agentless
        self.request_timeout_s = request_timeout_s
        self.mode = "agentless" if agentless else "agent"
        self.mode_notes: tuple[str, ...] = ()
        self._conn: Optional[Connection] = None
        self._agent: Optional[AgentSession] = None
        self._down_since: Optional[float] = None
        self._down_reason = ""
        self._next_try = 0.0
        self._backoff_start = backoff_start_s
        self._backoff = backoff_start_s
        self._status_pids: list[int] = []
        # agentless: the last refreshes' CPU ticks (newest last), for the next CPU %
        self._cpu: tuple[CpuSample, ...] = ()
        self._pending_note = ""  # said once, in the first snapshot after a reconnect
        self._lock = threading.RLock()
        self._closed_sent = 0
        self._closed_received = 0
        self._pyspy: Optional[PyspyOnNode] = None  # agentless: found or uploaded on the first capture
        self._stale_dirs: list[str] = []  # an upload a dropped connection could not remove

    # ------------------------------------------------------------ connection
    @property
    def bytes_sent(self) -> int:
        return self._closed_sent + (self._agent.bytes_sent if self._agent else 0)

    @property
    def bytes_received(self) -> int:
        return self._closed_received + (self._agent.bytes_received if self._agent else 0)

    @property
    def connected(self) -> bool:
        return self._conn is not None and self._conn.is_active()

    @property
    def agent_dir(self) -> str:
        return self._agent.private_dir if self._agent else ""

    def _ensure(self, pids: Sequence[int] = ()) -> Connection:
        if self._conn is not None and self._conn.is_active():
            return self._conn
        now = time.time()
        if self._conn is not None and self._down_since is None:
            self._down_since, self._down_reason = now, "connection lost"  # noticed now, between refreshes
        self._drop()
        if self._down_since is not None and now < self._next_try:
            raise SshError(self._down_text() + f"; next attempt in {self._next_try - now:.0f} s")
        try:
            conn = connect(self.options, self._progress)
            if not self.want_agentless:
                try:
                    self._agent = AgentSession.start(conn, pids, self.request_timeout_s, self._progress)
                    self.mode, self.mode_notes = "agent", self._agent.notes
                except NoUsablePython as exc:
                    self.mode, self.mode_notes = "agentless", (f"agentless mode: {exc}",)
                except BaseException:
                    conn.close()
                    raise
            else:
                self.mode_notes = ("agentless mode (--agentless)",)
        except SshError as exc:
            self._progress("ready")
            self._mark_down(str(exc))
            raise
        self._progress("ready")
        self.mode_notes = (*self.mode_notes, *conn.notes)
        self._conn = conn
        if self._down_since is not None:
            self._pending_note = (f"reconnected at {_clock(time.time())} after an outage since "
                                  f"{_clock(self._down_since)} ({self._down_reason})")
        self._down_since, self._backoff = None, self._backoff_start
        return conn

    def _mark_down(self, reason: str) -> None:
        now = time.time()
        if self._down_since is None:
            self._down_since = now
        self._down_reason = reason
        self._next_try = now + self._backoff
        self._backoff = min(self._backoff * 2, BACKOFF_MAX_S)

    def _down_text(self) -> str:
        return f"disconnected since {_clock(self._down_since or time.time())}: {self._down_reason}"

    def _drop(self) -> None:
        if self._pyspy is not None:
            if self._conn is not None and self._conn.is_active():
                self._pyspy.remove(self._conn, 5.0, self._count)
            elif self._pyspy.private_dir:
                self._stale_dirs.append(self._pyspy.private_dir)  # removed after the reconnect
            self._pyspy = None
        if self._agent is not None:
            self._agent.close(timeout_s=3.0)
            self._closed_sent += self._agent.bytes_sent  # keep the totals across reconnects
            self._closed_received += self._agent.bytes_received
            self._agent = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _failed(self, exc: SshError) -> None:
        """A request failed on a live-looking connection: treat it as down and reconnect later."""
        self._drop()
        self._mark_down(str(exc))

    # ------------------------------------------------------------ Host protocol
    def _resolve_locked(self, specs: Sequence[str], port: Optional[int] = None) -> Target:
        conn = self._ensure([int(s) for s in specs if s.isdecimal()])
        try:
            if self._agent is not None:
                reply = self._agent.request("resolve", self.request_timeout_s, specs=list(specs), port=port)
                return from_data(Target, reply["target"])
            marker = new_marker()
            sections = self._run_script(conn, marker, build_script(marker, [], [], gpus=False))
            return resolve_from_ps(specs, ps_rows(sections), sections.get("ss"), port)
        except SshError as exc:
            self._failed(exc)
            raise

    def _collect_locked(self, target: Target, options: CollectOptions) -> Snapshot:
        started = time.time()
        try:
            conn = self._ensure([r.pid for r in target.roots])
            if self._agent is not None:
                reply = self._agent.request("collect", self.request_timeout_s, target=to_data(target), options=to_data(options))
                snapshot: Snapshot = from_data(Snapshot, reply["snapshot"])
                # the node as the user named it, in both modes (the agent's host is the node's hostname)
                node_name = f"; node hostname {snapshot.host}" if snapshot.host != self.name else ""
                snapshot = dataclasses.replace(snapshot, host=self.name)
                notes = SourceStatus("mode", "ok", 0.0, "; ".join(self.mode_notes) + node_name)
                ssh = SourceStatus("ssh", "ok", (time.time() - started) * 1000, self._take_note("agent mode"))
                return _with_sources(snapshot, ssh, notes)
            marker = new_marker()
            status_pids = sorted(set(self._status_pids) | {r.pid for r in target.roots})
            sections = self._run_script(conn, marker, build_script(marker, status_pids, options.logs,
                                                                       roots=[r.pid for r in target.roots],
                                                                       port=options.port))
            sample = cpu_sample(sections, status_pids, snapshot_clock(sections))
            # the newest baseline old enough for a CPU %: a refresh that comes soon after the last (a report's
            # final look, a key press) is measured against the one before (never over < MIN_CPU_INTERVAL_S)
            old_enough = [c for c in self._cpu if sample.at - c.at >= MIN_CPU_INTERVAL_S]
            baseline = old_enough[-1] if old_enough else (self._cpu[0] if self._cpu else None)
            snapshot = build_snapshot(self.name, target, options, sections, status_pids, started,
                                      (time.time() - started) * 1000, baseline)
            self._cpu = (*self._cpu[-(CPU_BASELINES - 1):], sample)
            self._status_pids = [p.pid for p in snapshot.processes if not p.exited]
            # the mode source says why agentless (flag, or no Python we may run) before what it cannot read
            snapshot = dataclasses.replace(snapshot, sources=tuple(
                dataclasses.replace(x, detail="; ".join((*self.mode_notes, x.detail))) if x.name == "mode" else x
                for x in snapshot.sources))
            if self._pending_note:
                sources = tuple(dataclasses.replace(x, detail=self._take_note(x.detail)) if x.name == "ssh" else x
                                for x in snapshot.sources)
                snapshot = dataclasses.replace(snapshot, sources=sources)
            return snapshot
        except SshError as exc:
            if self.connected:
                self._failed(exc)
            return Snapshot(host=self.name, taken_at=started, interval_s=options.interval_s, target=target,
                            sources=(SourceStatus("ssh", "failing", (time.time() - started) * 1000, self._down_text()),))
        except TargetError as exc:  # connected, but the node could not read the tree (e.g. no ps there)
            return Snapshot(host=self.name, taken_at=started, interval_s=options.interval_s, target=target,
                            sources=(SourceStatus("ssh", "ok", (time.time() - started) * 1000, f"{self.mode} mode"),
                                     SourceStatus("processes", "failing", 0.0, str(exc))))

    def _capture_stacks_locked(self, pids: Sequence[int], options: StackOptions) -> StackCapture:
        started = time.time()
        try:
            conn = self._ensure(pids)
            if self._agent is None:
                if self._pyspy is None:
                    self._pyspy = PyspyOnNode.prepare(conn, self.request_timeout_s, self._count, self._stale_dirs)
                    self._stale_dirs = []
                return self._pyspy.capture(conn, pids, options, self.request_timeout_s, self._count)
            timeout = options.timeout_s * max(1, -(-len(pids) // max(options.concurrency, 1))) + self.request_timeout_s
            reply = self._agent.request("capture_stacks", timeout, pids=list(pids), options=to_data(options))
            return from_data(StackCapture, reply["capture"])
        except SshError as exc:
            if self.connected:
                self._failed(exc)
            return StackCapture(taken_at=started, pids=tuple(pids), notes=(f"no capture: {self._down_text()}",))

    def _wait_for_budgeted_reads_locked(self, timeout_s: float = 10.0) -> bool:
        """LocalHost's hook for one-shot reports (PSS is read off-thread on the node); agentless has no PSS."""
        if self._agent is None:
            return True
        try:
            reply = self._agent.request("wait_for_budgeted_reads", timeout_s + self.request_timeout_s, wait_s=timeout_s)
        except SshError as exc:
            self._failed(exc)
            return False
        return bool(reply.get("done"))

    def _mappings_by_file_locked(self, pid: int, target_pids: Sequence[int]) -> tuple[FileMapping, ...] | Unavailable:
        """The `m` view: the node's /proc/PID/smaps (through the agent, or one `cat` script agentless);
        the client's /proc is never read for a remote PID."""
        try:
            conn = self._ensure([pid])
            if self._agent is not None:
                reply = self._agent.request("mappings_by_file", self.request_timeout_s, pid=int(pid),
                                            targets=[int(p) for p in target_pids])
                if "unavailable" in reply:
                    return from_data(Unavailable, reply["unavailable"])
                return tuple(from_data(list[FileMapping], reply.get("mappings", [])))
            marker = new_marker()
            result = run_command(conn, bounded_shell(self.request_timeout_s - 2), self.request_timeout_s,
                                 stdin=agentless_mappings_script(marker, pid, target_pids).encode())
            self._count(result.bytes_sent, result.bytes_received)
            return agentless_mappings(pid, result.stdout.decode(errors="replace"), marker)
        except SshError as exc:
            if self.connected:
                self._failed(exc)
            return Unavailable(f"mappings not read: {self._down_text()}", "")

    def _close_locked(self) -> None:
        self._drop()

    # ------------------------------------------------------------ serialised entry points
    def resolve(self, specs: Sequence[str], port: Optional[int] = None) -> Target:
        with self._lock:
            return self._resolve_locked(specs, port)

    def collect(self, target: Target, options: CollectOptions) -> Snapshot:
        with self._lock:
            return self._collect_locked(target, options)

    def capture_stacks(self, pids: Sequence[int], options: StackOptions) -> StackCapture:
        with self._lock:
            return self._capture_stacks_locked(pids, options)

    def wait_for_budgeted_reads(self, timeout_s: float = 10.0) -> bool:
        with self._lock:
            return self._wait_for_budgeted_reads_locked(timeout_s)

    def mappings_by_file(self, pid: int, target_pids: Sequence[int]) -> tuple[FileMapping, ...] | Unavailable:
        with self._lock:
            return self._mappings_by_file_locked(pid, target_pids)

    def close(self) -> None:
        with self._lock:
            self._close_locked()

    def run_argv(self, argv: Sequence[str], timeout_s: float = 15.0) -> tuple[int, str, str]:
        """One plain command on the node (e.g. `scontrol listpids J`, which asks that node's slurmd)."""
        with self._lock:
            conn = self._ensure()
            done = run_command(conn, " ".join(shlex.quote(a) for a in argv), timeout_s)
            self._count(done.bytes_sent, done.bytes_received)
            return done.exit_status, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")

    def _take_note(self, detail: str) -> str:
        note, self._pending_note = self._pending_note, ""
        return f"{detail}; {note}" if note else detail

    def _count(self, sent: int, received: int) -> None:
        self._closed_sent += sent
        self._closed_received += received

    def _run_script(self, conn: Connection, marker: str, script: str) -> Sections:
        # the node stops the script a little before we stop waiting for it
        result = run_command(conn, bounded_shell(self.request_timeout_s - 2), self.request_timeout_s, stdin=script.encode())
        self._closed_sent += result.bytes_sent
        self._closed_received += result.bytes_received
        return split_sections(result.stdout.decode(errors="replace"), marker)


def _with_sources(snapshot: Snapshot, *extra: SourceStatus) -> Snapshot:
    return dataclasses.replace(snapshot, sources=(*snapshot.sources, *extra))

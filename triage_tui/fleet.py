"""A job across nodes: one Incident per node, refreshed in parallel, and the job-level diagnosis over them.

The fan-out is the engines that already reach the nodes (an SSH connection and agent per node, or this
machine for a Slurm node that is this one); there is no daemon of ours. Concurrency is bounded, every
node has a deadline, and a slow or dead node never stalls the others: a refresh waits for the nodes that
answered last time, at most `node_timeout_s`; a node still in flight is shown late with the time of its
last answer and picked up when it answers.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ALL_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Optional, Union

from .diagnose.job import diagnose_job
from .host.base import CollectOptions, Host, StackOptions, TargetError
from .host.ssh_connect import SshError
from .incident import HostOutage, Incident, Recorder
from .model.job import JobMoment, NodeEvidence
from .model.diagnosis import Hypothesis
from .model.snapshot import Snapshot, Target
from .model.stacks import StackCapture

DEFAULT_CONCURRENCY = 16
DEFAULT_NODE_TIMEOUT_S = 30.0


class NodeWatch:
    """One node of the job: its host (opened on first use), its Incident once the target resolved there.

    `step` runs in a pool thread and never raises: every failure becomes the node's state."""

    def __init__(self, name: str, make_host: Callable[[], Host],
                 specs: Union[Sequence[str], Callable[[Host], Sequence[str]]], port: Optional[int],
                 options: CollectOptions, mode: str = "",
                 make_recorder: Optional[Callable[[str], Optional[Recorder]]] = None) -> None:
        self.name = name
        self.make_recorder = make_recorder  # given the node's name, once its target resolved
        self.make_host = make_host
        self.specs = specs  # the TARGET specs, or how to find them on the node (a Slurm job's PIDs there)
        self.port = port
        self.options = options
        self.mode = mode
        self.host: Optional[Host] = None
        self.incident: Optional[Incident] = None
        self.reachable = False
        self.reason = "connecting"
        self.last_answer_at: Optional[float] = None
        self.tick_ms = 0.0
        self.started_at: Optional[float] = None  # when the step in flight began
        self._lock = threading.Lock()

    @property
    def latest(self) -> Optional[Snapshot]:
        latest = self.incident.latest if self.incident is not None else None
        return latest.snapshot if latest is not None else None

    @property
    def hypotheses(self) -> tuple[Hypothesis, ...]:
        latest = self.incident.latest if self.incident is not None else None
        return latest.diagnosis.hypotheses if latest is not None else ()

    @property
    def stacks(self) -> Optional[StackCapture]:
        return self.incident.latest_stacks if self.incident is not None else None

    def _host_mode(self) -> str:
        return str(getattr(self.host, "mode", "") or self.mode or "local")

    def step(self) -> None:
        with self._lock:
            started = time.monotonic()
            try:
                self._step()
            except Exception as exc:  # noqa: BLE001 — one node's bug must not end the job's view
                self.reachable, self.reason = False, f"internal error on this node's refresh: {exc!r}"
            finally:
                self.tick_ms = (time.monotonic() - started) * 1000
                self.started_at = None

    def _step(self) -> None:
        if self.host is None:
            self.host = self.make_host()
        if self.incident is None:
            try:
                target = self._resolve(self.host)
            except SshError as exc:
                self.reachable, self.reason = False, str(exc)
                return
            except TargetError as exc:  # connected, but nothing of the job runs there
                self.reachable, self.reason = True, f"no process of the target: {exc}"
                self.last_answer_at = time.time()
                return
            recorder = self.make_recorder(self.name) if self.make_recorder is not None else None
            self.incident = Incident(self.host, target, self.options, recorder=recorder)
        try:
            snapshot = self.incident.tick().snapshot
        except HostOutage:  # the node's last good Moment stays; its hypotheses are not reset by the outage
            self.reachable, self.reason = False, self.incident.outage.removeprefix("ssh ")
            return
        failing = [s for s in snapshot.sources if s.name == "ssh" and s.status == "failing"]
        if failing:
            self.reachable, self.reason = False, failing[0].detail
            return
        self.reachable, self.reason = True, ""
        self.last_answer_at = snapshot.taken_at

    def _resolve(self, host: Host) -> Target:
        if not callable(self.specs):
            return host.resolve(list(self.specs), port=self.port)
        # PIDs a scheduler listed (scontrol listpids) may include one that ended since, such as the step that
        # listed them: leave out each PID the node says is gone, and resolve the rest
        pids = [str(p) for p in self.specs(host)]
        for _ in range(len(pids)):
            try:
                return host.resolve(pids, port=self.port)
            except SshError:
                raise
            except TargetError as exc:
                gone = re.search(r"no process with PID (\d+)", str(exc))
                if gone is None or gone.group(1) not in pids or len(pids) == 1:
                    raise
                pids.remove(gone.group(1))
        return host.resolve(pids, port=self.port)

    def capture(self, options: StackOptions) -> None:
        with self._lock:
            if self.incident is None or not self.reachable:
                return
            try:
                self.incident.capture_stacks(None, options)
                self.incident.tick()  # the engine reads the capture
            except Exception as exc:  # noqa: BLE001
                self.reason = f"stack capture failed: {exc!r}"

    def evidence(self, now: float, timeout_s: float) -> NodeEvidence:
        reason, reachable = self.reason, self.reachable
        if self.started_at is not None and now - self.started_at > timeout_s:
            late = now - self.started_at
            reason = f"no answer for {late:.0f} s" + (f" ({reason})" if reason and reason != "connecting" else "")
            reachable = False
        snapshot = self.latest if self.incident is not None else None
        received = int(getattr(self.host, "bytes_received", 0) or 0)
        return NodeEvidence(self.name, reachable, reason, self._host_mode() if self.host else self.mode,
                            self.last_answer_at, snapshot if reachable else None, self.hypotheses, self.stacks,
                            self.tick_ms, received)

    def close(self) -> None:
        try:
            if self.incident is not None:
                self.incident.close()
            elif self.host is not None:
                self.host.close()
        except Exception:  # noqa: BLE001 — closing one node must not keep the others open
            pass


class Fleet:
    """Every node of the job, refreshed in parallel (at most `concurrency` at once)."""

    def __init__(self, watches: Sequence[NodeWatch], concurrency: int = DEFAULT_CONCURRENCY,
                 node_timeout_s: float = DEFAULT_NODE_TIMEOUT_S) -> None:
        if not watches:
            raise TargetError("no node to watch")
        self.watches = list(watches)
        self.node_timeout_s = node_timeout_s
        self._pool = ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(watches))),
                                        thread_name_prefix="triage-node")
        self._futures: dict[str, Future[None]] = {}
        self.timeline: list[JobMoment] = []

    def _submit(self, watch: NodeWatch, call: Callable[[], None]) -> Future[None]:
        running = self._futures.get(watch.name)
        if running is not None and not running.done():
            return running  # still in flight from an earlier refresh: never two at once on one node
        watch.started_at = time.time()
        future = self._pool.submit(call)
        self._futures[watch.name] = future
        return future

    def tick(self) -> JobMoment:
        """Refresh every node; wait for those that answered last time (bounded), never for a late one."""
        started = time.monotonic()
        first = not self.timeline
        waited = []
        for w in self.watches:
            was_in_flight = w.name in self._futures and not self._futures[w.name].done()
            future = self._submit(w, w.step)
            if first or (w.reachable and not was_in_flight):
                waited.append(future)
        wait(waited, timeout=self.node_timeout_s, return_when=ALL_COMPLETED)
        return self._moment(started)

    def capture_stacks(self, options: StackOptions = StackOptions()) -> JobMoment:
        """Stacks of every reachable node at once (each node's py-spy runs on that node, in parallel)."""
        started = time.monotonic()
        futures = [self._submit(w, functools.partial(w.capture, options)) for w in self.watches if w.reachable]
        wait(futures, timeout=self.node_timeout_s + options.timeout_s)
        return self._moment(started)

    def _moment(self, started: float) -> JobMoment:
        now = time.time()
        evidence = tuple(w.evidence(now, self.node_timeout_s) for w in self.watches)
        late = tuple(w.name for w in self.watches if w.name in self._futures and not self._futures[w.name].done())
        moment = JobMoment(now, evidence, diagnose_job(evidence, now), (time.monotonic() - started) * 1000, late)
        self.timeline.append(moment)
        del self.timeline[:-500]
        return moment

    def close(self) -> None:
        for w in self.watches:
            w.close()
        self._pool.shutdown(wait=False, cancel_futures=True)

"""The watch loop both faces share: collect → observe → diagnose → record, and the timeline.

The app and `triage report` are two views of one Incident; neither wires host, engine and
recorder itself. Incident is not thread-safe: one worker ticks it at a time (the app runs
`tick` in a thread worker and posts the result to the UI thread).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import Any, Optional, Protocol

from .diagnose.engine import Diagnosis, DiagnosisEngine
from .diagnose.stack_groups import compare_captures
from .host.base import CollectOptions, Host, StackOptions
from .model.snapshot import Snapshot, Target
from .model.stacks import StackCapture


class Recorder(Protocol):
    def write_snapshot(self, snapshot: Snapshot) -> None: ...
    def write_stacks(self, capture: StackCapture) -> None: ...
    def write_changes(self, at: float, changes: Sequence[str]) -> None: ...
    def close(self) -> None: ...


class HostOutage(Exception):
    """The host could not be reached this tick: nothing was read, which is not "nothing runs".

    Raised by Incident.tick instead of absorbing an empty snapshot: the timeline keeps the last good
    one (the faces show it, marked stale), the engine's hypotheses stay as they were (an outage is not
    evidence that the target is gone), and "last good" stays at the last good read."""


def outage_of(snapshot: Snapshot) -> str:
    """What a snapshot says of a host that could not be reached (a failing "ssh" source with nothing
    read), or "" for a snapshot that holds a read."""
    if snapshot.processes:
        return ""
    return next((f"{s.name} {s.detail}".strip() for s in snapshot.sources if s.name == "ssh" and s.status == "failing"), "")


class Incident:
    """One incident being watched on one host."""

    def __init__(
        self,
        host: Host,
        target: Target,
        options: CollectOptions = CollectOptions(),
        engine: Optional[DiagnosisEngine] = None,
        recorder: Optional[Recorder] = None,
        max_timeline: int = 2000,
    ) -> None:
        self.host = host
        self.target = target
        self.options = options
        self.engine = engine if engine is not None else DiagnosisEngine()
        self.recorder = recorder
        self.timeline: list[Snapshot] = []
        self.changelog: list[str] = []
        self.latest_stacks: Optional[StackCapture] = None
        self.max_timeline = max_timeline
        self._lock = threading.Lock()
        self.listeners: list[Callable[[str, Any], None]] = []
        self.outage = ""  # why the last tick read nothing (the host is unreachable), "" when it read

    @property
    def latest(self) -> Optional[Snapshot]:
        return self.timeline[-1] if self.timeline else None

    def tick(self) -> Snapshot:
        """Collect one snapshot, run the engine over it, record it; return it."""
        with self._lock:
            self._watch_for_restart()
            snapshot = self.host.collect(self.target, self.options)
            outage = outage_of(snapshot)
            if outage and self.timeline:  # with nothing good yet, the failing source is all there is to show
                self.outage = outage
                raise HostOutage(outage)
            self.outage = ""
            return self._absorb(snapshot)

    def _watch_for_restart(self) -> None:
        """The whole target is gone: resolve its specs again, so that a restart under the same spec
        (a new PID for `name:…`, a new listener on `:PORT`) is watched from the tick it appears.
        The timeline keeps the last moment of the old one; a PID spec finds nothing new, and that is
        what it should find."""
        latest = self.latest
        if latest is None or latest.live_pids() or not self.target.specs or self.target.auto_picked:
            return
        try:
            found = self.host.resolve(self.target.specs, port=self.options.port)
        except Exception:  # noqa: BLE001 - nothing there yet (TargetError) or the host is down: keep watching
            return
        if found.roots and {r.pid for r in found.roots} != {r.pid for r in self.target.roots}:
            self.target = found

    def _absorb(self, snapshot: Snapshot) -> Snapshot:
        diagnosis: Diagnosis = self.engine.update(snapshot, self.latest_stacks)
        snapshot = dataclasses.replace(
            snapshot,
            observations=diagnosis.observations,
            hypotheses=diagnosis.hypotheses,
            stacks=self.latest_stacks,
        )
        self.timeline.append(snapshot)
        if len(self.timeline) > self.max_timeline:
            del self.timeline[: len(self.timeline) - self.max_timeline]
        self.changelog.extend(diagnosis.changes)
        if self.recorder is not None:
            self.recorder.write_snapshot(snapshot)
            if diagnosis.changes:
                self.recorder.write_changes(snapshot.taken_at, diagnosis.changes)
        return snapshot

    @staticmethod
    def wants_auto_stacks(snapshot: Snapshot) -> bool:
        """True when the engine saw the whole target idle: the moment `--auto-stacks` captures, once
        (py-spy pauses the target, so no face repeats it unasked)."""
        return any(o.id == "all-idle" for o in snapshot.observations)

    def target_pids(self) -> tuple[int, ...]:
        return self.latest.live_pids() if self.latest else ()

    def capture_stacks(
        self, pids: Optional[Sequence[int]] = None, options: StackOptions = StackOptions()
    ) -> StackCapture:
        """Capture stacks of `pids` (default: the whole target) and keep it as the latest capture."""
        chosen = tuple(pids) if pids else self.target_pids()
        capture = self.host.capture_stacks(chosen, options)
        earlier = self.latest_stacks
        if earlier is not None:  # same stacks as last time → unchanged-for-N-s: stuck, not slow
            capture = compare_captures(earlier, capture)
        with self._lock:
            self.latest_stacks = capture
            if self.recorder is not None:
                self.recorder.write_stacks(capture)
        return capture

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()
        self.host.close()

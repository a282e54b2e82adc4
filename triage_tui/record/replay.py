"""A recorded incident played back through the same face as a live `Incident`.

The app ticks an incident and renders its timeline; given a ReplayIncident it steps through the
recording instead of collecting, with the hypotheses as they stood at each moment (they are part
of each recorded snapshot). Nothing here touches a process: a stack capture request is answered
from the recording.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Optional

from ..model.options import CollectOptions, StackOptions
from ..model.snapshot import Snapshot, Target
from ..model.stacks import StackCapture
from .reader import Recording

NO_LIVE_CAPTURE = "replay: no live capture"


class ReplayHost:
    """Stands where a Host would: a name for the title bar, nothing to collect from."""

    def __init__(self, name: str) -> None:
        self.name = name

    def close(self) -> None:
        pass


class ReplayIncident:
    """Looks like triage_tui.incident.Incident to the app, fed by a Recording."""

    replay = True  # the app may show "replay" in its banner

    def __init__(self, recording: Recording, preload: int = 0) -> None:
        """`preload`: how many recorded snapshots are in the timeline from the start (the app opened
        with live=False shows the timeline as it is and steps through it with [ ] { } End)."""
        self.recording = recording
        self.host = ReplayHost(f"{recording.host or 'unknown host'} (replay)")
        first = recording.snapshots[0] if recording.snapshots else None
        self.target: Target = first.target if first is not None else Target(tuple(recording.header.get("target", ())))
        self.options = CollectOptions(interval_s=first.interval_s if first is not None and first.interval_s else 2.0)
        self.engine = None
        self.recorder = None
        self.timeline: list[Snapshot] = []
        self.changelog: list[str] = []
        self.latest_stacks: Optional[StackCapture] = None
        self.listeners: list[Callable[[str, Any], None]] = []
        self._next = 0  # index of the next recorded snapshot
        self._next_change = 0
        for _ in range(min(preload, len(recording.snapshots))):
            self.tick()

    @property
    def latest(self) -> Optional[Snapshot]:
        return self.timeline[-1] if self.timeline else None

    @property
    def finished(self) -> bool:
        return self._next >= len(self.recording.snapshots)

    def tick(self) -> Snapshot:
        """The next recorded snapshot (the last one again once the recording is over)."""
        snapshots = self.recording.snapshots
        if not snapshots:
            return Snapshot(host=self.host.name, target=self.target)
        if self.finished:
            return snapshots[-1]
        snapshot = snapshots[self._next]
        self._next += 1
        self.timeline.append(snapshot)
        changes = self.recording.changes
        while self._next_change < len(changes) and changes[self._next_change][0] <= snapshot.taken_at:
            self.changelog.append(changes[self._next_change][1])
            self._next_change += 1
        if snapshot.stacks is not None:
            self.latest_stacks = snapshot.stacks
        return snapshot

    def target_pids(self) -> tuple[int, ...]:
        return self.latest.live_pids() if self.latest else ()

    def capture_stacks(
        self, pids: Optional[Sequence[int]] = None, options: StackOptions = StackOptions()
    ) -> StackCapture:
        """The recorded capture nearest in time to the moment shown, or an empty one that says why."""
        latest = self.latest
        now = latest.taken_at if latest is not None else 0.0
        captures = self.recording.stacks
        if not captures:
            chosen = tuple(pids) if pids else self.target_pids()
            return StackCapture(taken_at=now, pids=chosen, notes=(NO_LIVE_CAPTURE,))
        capture = min(captures, key=lambda c: abs(c.taken_at - now))
        self.latest_stacks = capture
        return capture

    def close(self) -> None:
        pass

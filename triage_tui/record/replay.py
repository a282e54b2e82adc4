"""A recorded incident played back through the same IncidentView a live `Incident` is.

The app renders an IncidentView's Moments; a ReplayView serves the recorded ones in order, each
with the diagnosis as it stood then (recorded with it: the engine does not run again, so a replay
shows what the on-call engineer saw even after the rules change). Nothing here touches a process
or this machine's /proc: a stack capture request is answered from the recording, and mappings,
never recorded, are unavailable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from ..model.diagnosis import Diagnosis
from ..model.mappings import FileMapping
from ..model.moment import Moment
from ..model.options import CollectOptions, StackOptions
from ..model.snapshot import Snapshot, Target
from ..model.stacks import StackCapture
from ..model.timeline import MomentTimeline
from ..model.unavailable import Unavailable
from .reader import Recording

NO_LIVE_CAPTURE = "replay: no live capture"
MAPPINGS_NOT_RECORDED = Unavailable("mappings were not recorded",
                                    "a replay has only what was recorded; press m in a live triage on the host")


class ReplayView(MomentTimeline):
    """An IncidentView fed by a Recording: tick() serves the next recorded Moment."""

    replay = True  # the app may show "replay" in its banner

    def __init__(self, recording: Recording, preload: int = 0) -> None:
        """`preload`: how many recorded Moments are in the timeline from the start (the app opened
        with live=False shows the timeline as it is and steps through it with [ ] { } End)."""
        self.recording = recording
        self.host_name = f"{recording.host or 'unknown host'} (replay)"
        moments = recording.moments
        first = moments[0].snapshot if moments else None
        self.target: Target = first.target if first is not None else Target(tuple(recording.header.get("target", ())))
        self.options = CollectOptions(interval_s=first.interval_s if first is not None and first.interval_s else 2.0)
        super().__init__()
        self.latest_stacks: Optional[StackCapture] = None
        self._next = 0  # index of the next recorded moment
        for _ in range(min(preload, len(moments))):
            self.tick()

    @property
    def recording_message(self) -> str:
        return ""

    @property
    def finished(self) -> bool:
        return self._next >= len(self.recording.moments)

    def tick(self) -> Moment:
        """The next recorded Moment (the last one again once the recording is over)."""
        moments = self.recording.moments
        if not moments:
            return Moment(Snapshot(host=self.host_name, target=self.target), Diagnosis())
        if self.finished:
            return moments[-1]
        moment = moments[self._next]
        self._next += 1
        self._append(moment)
        if moment.stacks is not None:
            self.latest_stacks = moment.stacks
        return moment

    def capture_stacks(
        self, pids: Optional[Sequence[int]] = None, options: StackOptions = StackOptions()
    ) -> StackCapture:
        """The recorded capture nearest in time to the moment shown, or an empty one that says why."""
        latest = self.latest
        now = latest.snapshot.taken_at if latest is not None else 0.0
        captures = self.recording.stacks
        if not captures:
            chosen = tuple(pids) if pids else self.target_pids()
            return StackCapture(taken_at=now, pids=chosen, notes=(NO_LIVE_CAPTURE,))
        capture = min(captures, key=lambda c: abs(c.taken_at - now))
        self.latest_stacks = capture
        return capture

    def mappings_by_file(self, pid: int, target_pids: Sequence[int]) -> tuple[FileMapping, ...] | Unavailable:
        return MAPPINGS_NOT_RECORDED

    def wait_for_budgeted_reads(self, timeout_s: float = 10.0) -> bool:
        return True  # nothing is read

    def close(self) -> None:
        pass

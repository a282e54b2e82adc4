"""The Moments a view has served and the changelog lines they announced: what a live Incident and a
ReplayView both hold, kept in one place so the two faces of an IncidentView cannot drift apart."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from .timeline_thinning import appended

if TYPE_CHECKING:  # the model's dataclasses: imported after the app's first frame (#18)
    from .moment import Moment


class MomentTimeline:
    """Tuples replaced on every append, never mutated: a face holding the old tuple keeps a consistent
    timeline. The changelog is never trimmed with the timeline (it is the whole incident's story)."""

    max_timeline: Optional[int] = None  # None: keep every Moment (a replay holds what was recorded anyway)
    thin = False  # a live watch thins its quiet past (timeline_thinning.py); a replay shows every Moment recorded

    def __init__(self) -> None:
        self._timeline: tuple[Moment, ...] = ()
        self._changelog: tuple[str, ...] = ()

    def _append(self, moment: Moment) -> None:
        if self.thin:
            self._timeline = appended(self._timeline, moment, self.max_timeline)
        else:
            timeline = self._timeline + (moment,)
            self._timeline = timeline[-self.max_timeline:] if self.max_timeline is not None else timeline
        self._changelog += moment.diagnosis.changes

    @property
    def timeline(self) -> tuple[Moment, ...]:
        return self._timeline

    @property
    def changelog(self) -> tuple[str, ...]:
        return self._changelog

    @property
    def latest(self) -> Optional[Moment]:
        return self._timeline[-1] if self._timeline else None

    def target_pids(self) -> tuple[int, ...]:
        """The target's live PIDs at the latest Moment (none before the first)."""
        latest = self.latest
        return latest.snapshot.live_pids() if latest else ()

"""Looking back through the app's timeline: which Moment is shown, and the keys that move it.

The app keeps its own timeline (an immutable tuple of the Moments its workers brought); `view_at` is the
`taken_at` of the Moment shown while looking back, None while live. `[` `]` step one refresh, `{` `}` a
minute, End goes back to live.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from .panes import View

if TYPE_CHECKING:  # the model's dataclasses: imported after the app's first frame (#18)
    from textual.app import App

    from ..model.moment import Moment

    _AppBase = App[None]
else:
    _AppBase = object

HISTORY = 12  # moments kept for sparklines


class LookingBack(_AppBase):
    """The app's part that knows which Moment is shown (a mixin of TriageApp)."""

    timeline: tuple[Moment, ...]
    changelog: tuple[str, ...]
    view_at: Optional[float]
    _last_jump: Optional[tuple[Optional[float], Optional[float], int]]  # (from, to, seconds)

    if TYPE_CHECKING:
        def render_all(self) -> None: ...

    @property
    def latest(self) -> Optional[Moment]:
        return self.timeline[-1] if self.timeline else None

    def shown_moment(self) -> Optional[Moment]:
        timeline = self.timeline
        if not timeline:
            return None
        if self.view_at is None:
            return timeline[-1]
        return timeline[self._index_of(self.view_at)]

    def _index_of(self, taken_at: float) -> int:
        timeline = self.timeline
        for i in range(len(timeline) - 1, -1, -1):
            if timeline[i].taken_at <= taken_at:
                return i
        return 0

    def _view(self, moment: Moment) -> View:
        timeline = self.timeline
        if self.view_at is None:
            return View(moment, timeline[-HISTORY:], self.changelog)
        i = self._index_of(self.view_at)
        return View(moment, timeline[max(0, i - HISTORY + 1): i + 1], self.changelog)

    def action_step(self, delta: int) -> None:
        timeline = self.timeline
        if not timeline:
            return
        i = len(timeline) - 1 if self.view_at is None else self._index_of(self.view_at)
        i += delta
        if i >= len(timeline) - 1 and delta > 0:
            self.action_live()
            return
        self.view_at = timeline[max(0, i)].taken_at
        self.render_all()

    def action_jump(self, seconds: int) -> None:
        timeline = self.timeline
        if not timeline:
            return
        # `{` then `}` comes back to the very refresh it left (refreshes are not evenly spaced, so a
        # minute back and a minute forward can land elsewhere): the jump just made is undone exactly.
        last = self._last_jump
        if last is not None and last[1] == self.view_at and (seconds > 0) != (last[2] > 0):
            self._last_jump = None
            self.view_at = last[0]
            self.render_all()
            return
        came_from = self.view_at
        base = timeline[-1].taken_at if self.view_at is None else self.view_at
        target = base + seconds
        if target >= timeline[-1].taken_at:
            self.view_at = None
        else:
            self.view_at = timeline[self._index_of(max(target, timeline[0].taken_at))].taken_at
        self._last_jump = (came_from, self.view_at, seconds)
        self.render_all()

    def action_live(self) -> None:
        self.view_at = None
        self.render_all()

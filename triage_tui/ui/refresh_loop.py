"""The app's refresh loop: a timer asks for a tick, a thread worker runs it, a message brings the Moment.

The UI thread never calls the host: `Incident.tick` runs in a thread worker (through `call_cancellable`,
so quitting never waits for a slow source), which posts MomentReady or TickFailed back. One tick at a
time: a timer that fires while one runs is skipped, and the header shows the refresh as stale.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Optional

from textual import work
from textual.worker import Worker, WorkerState, get_current_worker

from ..incident import HostOutage, IncidentView, OpeningFailed, wants_auto_stacks
from ..model.timeline_thinning import appended
from .messages import MomentReady, OpenFailed, TickFailed
from .workers import Cancelled, call_cancellable

if TYPE_CHECKING:  # the model's dataclasses: imported after the app's first frame (#18)
    from textual.app import App

    from ..model.moment import Moment

    _AppBase = App[None]
else:
    _AppBase = object

MAX_TIMELINE = 2000  # moments the app keeps to look back through (as many as an Incident keeps)


class RefreshLoop(_AppBase):
    """The app's part that asks for refreshes and takes their Moments in (a mixin of TriageApp)."""

    incident: IncidentView
    clock: Callable[[], float]
    paused: bool
    live: bool
    collecting_since: Optional[float]
    last_error: str
    ticks_started: int
    timeline: tuple[Moment, ...]
    changelog: tuple[str, ...]
    view_at: Optional[float]
    _last_jump: Optional[tuple[Optional[float], Optional[float], int]]  # (from, to, seconds): looking_back.py
    auto_stacks: bool
    _auto_capture: bool
    opening_failure: Optional[OpeningFailed]
    panes_mounting: bool

    if TYPE_CHECKING:
        def render_all(self) -> None: ...
        def render_header(self) -> None: ...
        def action_capture(self, whole_target: bool) -> None: ...

    def refresh_timer_fired(self) -> None:
        self.render_header()  # a slow refresh shows as stale even while nothing arrives
        if not self.paused:
            self.request_tick()

    def request_tick(self) -> bool:
        """Start a refresh unless one is running; True when one was started."""
        if self.collecting_since is not None:
            return False
        self.collecting_since = self.clock()
        self.ticks_started += 1
        self._collect()
        return True

    def action_refresh_now(self) -> None:
        self.request_tick()

    @work(thread=True, group="collect", exit_on_error=False)
    def _collect(self) -> None:
        try:
            moment = call_cancellable(self.incident.tick)
        except Cancelled:
            return
        except OpeningFailed as exc:  # the target found nothing (or the record was refused): the app ends
            if not get_current_worker().is_cancelled:
                self.post_message(OpenFailed(exc))
            return
        except HostOutage as exc:  # the last good moment stays on screen, stale; hypotheses stay as they were
            if not get_current_worker().is_cancelled:
                self.post_message(TickFailed(f"host unreachable ({exc}): showing the last good refresh"))
            return
        except Exception as exc:  # the host promises not to raise; if it does, say so and go on
            if not get_current_worker().is_cancelled:
                self.post_message(TickFailed(f"{type(exc).__name__}: {exc}"))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(MomentReady(moment))

    def on_moment_ready(self, message: MomentReady) -> None:
        self.collecting_since = None
        self.last_error = ""
        moment = message.moment
        if not self.timeline or moment is not self.timeline[-1]:  # a finished replay serves its last one again
            if self.incident.replay:  # a replay shows every Moment recorded
                self.timeline = (self.timeline + (moment,))[-MAX_TIMELINE:]
            else:  # the quiet past thinned as the Incident thins it, never the Moment on screen or the jump back to
                jump = self._last_jump
                keep = {t for t in (self.view_at, jump[0] if jump else None) if t is not None}
                self.timeline = appended(self.timeline, moment, MAX_TIMELINE, keep)
            self.changelog += moment.diagnosis.changes
        if self.auto_stacks and wants_auto_stacks(moment):
            self.auto_stacks = False  # once: py-spy pauses the target, so it is never repeated unasked
            self._auto_capture = True
            self.action_capture(True)
        if self.view_at is None:
            self.render_all()
        else:
            self.render_header()  # looking back: the panes stay, the banner counts on

    def on_open_failed(self, message: OpenFailed) -> None:
        """The incident could not be opened after the first frame: the app ends, and run_app raises the
        failure once the terminal is restored, so its one line and exit code are the command's."""
        self.opening_failure = message.failure
        if not self.panes_mounting:  # else the mount ends the app when it is done (never half mounted)
            self.exit(return_code=message.failure.code)

    def on_tick_failed(self, message: TickFailed) -> None:
        self.collecting_since = None
        self.last_error = message.error
        self.render_header()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "collect" and event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self.collecting_since = None

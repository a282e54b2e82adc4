"""The watch loop every face shares: collect → diagnose → record, and the timeline of Moments.

The app, `triage report` and `e` are views of one IncidentView; none wires host, engine and
recorder itself. A live `Incident` ticks a Host (local, SSH, or the tests' FixtureHost) through the
real engine; `record.replay.ReplayView` serves recorded Moments without running the engine again.
Incident is not thread-safe for ticks: one worker ticks it at a time (the app runs `tick` in a
thread worker and posts the Moment to the UI thread).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Optional, Protocol

from .host.base import CollectOptions, Host, StackOptions
from .model.timeline import MomentTimeline
from .model.unavailable import Unavailable

if TYPE_CHECKING:  # the model's dataclasses: imported after the app's first frame (#18)
    from .model.mappings import FileMapping
    from .model.moment import Moment
    from .model.snapshot import Snapshot, Target
    from .model.stacks import StackCapture

if TYPE_CHECKING:  # the engine (its rules, vocabulary, lexicon: ~65 ms) is imported on the first tick,
    from .diagnose.engine import DiagnosisEngine  # in the app's worker thread, not before the first frame


class Recorder(Protocol):
    def write_moment(self, moment: Moment) -> None: ...
    def write_stacks(self, capture: StackCapture) -> None: ...
    def close(self) -> None: ...


class HostOutage(Exception):
    """The host could not be reached this tick: nothing was read, which is not "nothing runs".

    Raised by Incident.tick instead of absorbing an empty snapshot: the timeline keeps the last good
    Moment (the faces show it, marked stale), the engine's hypotheses stay as they were (an outage is
    not evidence that the target is gone), and "last good" stays at the last good read."""


def outage_of(snapshot: Snapshot) -> str:
    """What a snapshot says of a host that could not be reached (a failing "ssh" source with nothing
    read), or "" for a snapshot that holds a read."""
    if snapshot.processes:
        return ""
    return next((f"{s.name} {s.detail}".strip() for s in snapshot.sources if s.name == "ssh" and s.status == "failing"), "")


class IncidentView(Protocol):
    """What every face reads and asks of an incident, live or replayed."""

    host_name: str  # for the title bar and report file names
    target: Target
    options: CollectOptions
    replay: bool  # recorded Moments, not a live host: the app says so

    @property
    def timeline(self) -> Sequence[Moment]:
        """The Moments so far, oldest first (bounded: the oldest are dropped on a long watch)."""
        ...

    @property
    def latest(self) -> Optional[Moment]: ...

    @property
    def changelog(self) -> Sequence[str]:
        """Every changelog line so far (never trimmed with the timeline)."""
        ...

    @property
    def recording_message(self) -> str:
        """One line on the record ("recording to …", "not recording: …"), "" when none."""
        ...

    def tick(self) -> Moment:
        """One refresh (live) or the next recorded Moment (replay)."""
        ...

    def capture_stacks(self, pids: Optional[Sequence[int]] = None,
                       options: StackOptions = StackOptions()) -> StackCapture: ...

    def mappings_by_file(self, pid: int, target_pids: Sequence[int]) -> tuple[FileMapping, ...] | Unavailable: ...

    def wait_for_budgeted_reads(self, timeout_s: float = 10.0) -> bool: ...

    def close(self) -> None: ...


def wants_auto_stacks(moment: Moment) -> bool:
    """True when the engine saw the whole target idle: the moment `--auto-stacks` captures, once
    (py-spy pauses the target, so no face repeats it unasked)."""
    return any(o.id == "all-idle" for o in moment.diagnosis.observations)


RESTART_EVERY_TICK = 10  # a target gone: its specs resolved again every tick for this many ticks,
RESTART_SLOW_TICKS = 5  # then once in this many (Incident._watch_for_restart)


# While an Incident is watched, the cyclic collector's youngest generation is collected after this many new
# container objects, not Python's default 700 (#18). A refresh of 1,000 changed processes makes thousands of
# containers that live on (rows, samples, waits, what the next refresh reuses): at 700 the collector ran ~9
# times a refresh and its middle generation about once, traversing them (7.0 ms a refresh, measured with
# gc.callbacks; 2.6 ms at 10,000), and freed nothing (0 objects collected in 30 refreshes). Reference counting
# frees all that is not in a cycle either way; a cycle waits at most this many allocations longer.
WATCH_GC_THRESHOLD = 10_000


def collect_cycles_less_often() -> None:
    """The youngest generation's threshold raised to WATCH_GC_THRESHOLD, never lowered (a process that set a
    larger one keeps it; 0, the collector off by threshold, stays 0); the older generations' as they are."""
    young, middle, old = gc.get_threshold()
    if 0 < young < WATCH_GC_THRESHOLD:
        gc.set_threshold(WATCH_GC_THRESHOLD, middle, old)


class Incident(MomentTimeline):
    """One incident being watched on one host: an IncidentView over a live Host and the engine."""

    replay = False
    thin = True  # the quiet past of a long watch is thinned (model/timeline_thinning.py); the record has it all

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
        self.host_name = host.name
        self.target = target
        self.options = options
        self._engine = engine
        self.recorder = recorder
        super().__init__()
        self.latest_stacks: Optional[StackCapture] = None
        self.max_timeline = max_timeline
        self._lock = threading.Lock()
        self._gone_ticks = 0  # ticks since the whole target was seen gone (the restart watch's cadence)
        self.outage = ""  # why the last tick read nothing (the host is unreachable), "" when it read
        collect_cycles_less_often()

    @property
    def engine(self) -> DiagnosisEngine:
        """The engine, made on first use: the app's first frame is drawn before it is imported."""
        if self._engine is None:
            from .diagnose.engine import DiagnosisEngine

            self._engine = DiagnosisEngine()
        return self._engine

    @property
    def recording_message(self) -> str:
        return str(getattr(self.recorder, "message", "") or "")

    def tick(self) -> Moment:
        """Collect one snapshot, run the engine over it, record the Moment; return it."""
        with self._lock:
            self._watch_for_restart()
            snapshot = self.host.collect(self.target, self.options)
            outage = outage_of(snapshot)
            if outage and self._timeline:  # with nothing good yet, the failing source is all there is to show
                self.outage = outage
                raise HostOutage(outage)
            self.outage = ""
            stacks = self.latest_stacks
            from .model.moment import Moment  # the model's dataclasses: after the app's first frame

            moment = Moment(snapshot, self.engine.update(snapshot, stacks), stacks)
            self._append(moment)
            if self.recorder is not None:
                self.recorder.write_moment(moment)
            return moment

    def _watch_for_restart(self) -> None:
        """The whole target is gone: resolve its specs again, so that a restart under the same spec
        (a new PID for `name:…`, a new listener on `:PORT`) is watched from the tick it appears.
        The timeline keeps the last moment of the old one. Only the specs that can find something new look:
        PIDs alone find nothing new (that is what they should find), so they never resolve again. A look is
        the dear machine-wide pass (every process's stat line and command line), so it is made every tick for
        the first RESTART_EVERY_TICK ticks after the target went (a supervisor's quick restart is watched at
        once), then once in RESTART_SLOW_TICKS ticks."""
        latest = self.latest
        if latest is None or latest.snapshot.live_pids() or not self.target.specs or self.target.auto_picked:
            self._gone_ticks = 0
            return
        if all(spec.strip().isdecimal() for spec in self.target.specs):
            return
        self._gone_ticks += 1
        if self._gone_ticks > RESTART_EVERY_TICK and self._gone_ticks % RESTART_SLOW_TICKS:
            return
        try:
            found = self.host.resolve(self.target.specs, port=self.options.port)
        except Exception:  # noqa: BLE001 - nothing there yet (TargetError) or the host is down: keep watching
            return
        if found.roots and {r.pid for r in found.roots} != {r.pid for r in self.target.roots}:
            self.target = found

    def capture_stacks(
        self, pids: Optional[Sequence[int]] = None, options: StackOptions = StackOptions()
    ) -> StackCapture:
        """Capture stacks of `pids` (default: the whole target) and keep it as the latest capture."""
        chosen = tuple(pids) if pids else self.target_pids()
        capture = self.host.capture_stacks(chosen, options)
        from .diagnose.stack_groups import compare_captures  # not before the app's first frame: only with stacks
        earlier = self.latest_stacks
        if earlier is not None:  # same stacks as last time → unchanged-for-N-s: stuck, not slow
            capture = compare_captures(earlier, capture)
        with self._lock:
            self.latest_stacks = capture
            if self.recorder is not None:
                self.recorder.write_stacks(capture)
        return capture

    def mappings_by_file(self, pid: int, target_pids: Sequence[int]) -> tuple[FileMapping, ...] | Unavailable:
        """`pid`'s mappings by file, read by the host the PID belongs to (never this machine's /proc
        for another host's PID)."""
        return self.host.mappings_by_file(pid, target_pids)

    def wait_for_budgeted_reads(self, timeout_s: float = 10.0) -> bool:
        return self.host.wait_for_budgeted_reads(timeout_s)

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()
        self.host.close()


class OpeningFailed(Exception):
    """The incident could not be opened (no such process, a --record path refused): `message` is the one
    line for the user, `code` the exit status (1 a runtime failure, 2 a malformed command line)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class IncidentOpening:
    """An IncidentView whose Incident is opened on its first use (the first tick, in the app's worker).

    The app draws its first frame before the host's collectors are imported and the target is resolved
    (#18: first frame ≤ 0.3 s); `open_incident` does both. Until it has, the view holds no Moment; if it
    fails it raises OpeningFailed, which the app turns into its exit (the line printed, the code kept)."""

    replay = False

    def __init__(self, open_incident: Callable[[], IncidentView], host_name: str) -> None:
        self._open = open_incident
        self._incident: Optional[IncidentView] = None
        self._opening = threading.Lock()  # held while it opens (one opening, however many callers)
        self._state = threading.Lock()  # held only to set or read _incident and _closed together
        self._closed = False
        self.warnings: list[str] = []  # said while it opened (not recording, and why): shown and printed at exit
        self.host_name = host_name
        self._target: Optional[Target] = None
        self.options = CollectOptions()

    @property
    def target(self) -> Target:
        """The opened Incident's target; before it is open, none (made when asked: the model's dataclasses are
        not imported before the app's first frame)."""
        if self._target is None:
            from .model.snapshot import Target

            self._target = Target(specs=(), roots=())
        return self._target

    def opened(self) -> IncidentView:
        """The Incident, opened now if it is not yet (blocking: from a worker thread)."""
        with self._opening:
            if self._incident is None:
                incident = self._open()
                self.host_name, self._target, self.options = incident.host_name, incident.target, incident.options
                with self._state:
                    self._incident = incident
                    closed = self._closed
                if closed:  # the app quit while it was opening: close() found nothing to close
                    incident.close()
            return self._incident

    @property
    def incident(self) -> Optional[IncidentView]:
        """The Incident once opened, else None."""
        return self._incident

    @property
    def recorder(self) -> Optional[Recorder]:
        return getattr(self._incident, "recorder", None)

    @property
    def timeline(self) -> Sequence[Moment]:
        return self._incident.timeline if self._incident is not None else ()

    @property
    def latest(self) -> Optional[Moment]:
        return self._incident.latest if self._incident is not None else None

    @property
    def changelog(self) -> Sequence[str]:
        return self._incident.changelog if self._incident is not None else ()

    @property
    def recording_message(self) -> str:
        message = self._incident.recording_message if self._incident is not None else ""
        return message or "; ".join(self.warnings)

    def tick(self) -> Moment:
        return self.opened().tick()

    def capture_stacks(self, pids: Optional[Sequence[int]] = None,
                       options: StackOptions = StackOptions()) -> StackCapture:
        return self.opened().capture_stacks(pids, options)

    def mappings_by_file(self, pid: int, target_pids: Sequence[int]) -> tuple[FileMapping, ...] | Unavailable:
        return self.opened().mappings_by_file(pid, target_pids)

    def wait_for_budgeted_reads(self, timeout_s: float = 10.0) -> bool:
        return self._incident.wait_for_budgeted_reads(timeout_s) if self._incident is not None else True

    def close(self) -> None:
        with self._state:  # never waits for an opening: quitting is at once
            self._closed = True
            incident = self._incident
        if incident is not None:
            incident.close()

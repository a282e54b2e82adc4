"""The interactive app: six panes over an IncidentView (live or replayed), refreshed by thread workers.

The UI thread never calls the host: `tick`, `capture_stacks`, the mappings read and the report
export run in thread workers, which post messages back. The app keeps its own timeline, an
immutable tuple of the Moments those messages brought, so what it shows never depends on a
list another thread trims. Each blocking call runs in a
daemon thread the worker waits on while checking for cancellation, so quitting never waits
for a slow source (the host's own hard timeouts end that thread later).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Optional

from textual import events, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Container
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerState, get_current_worker

from ..incident import HostOutage, IncidentView, wants_auto_stacks
from ..model.mappings import FileMapping
from ..model.moment import Moment
from ..model.unavailable import Unavailable
from ..render.plain_text import visible
from .export import ExportError, export_report_somewhere
from .header import render_banner, render_header
from .key_hints import KeyHints
from .messages import MappingsReady, MomentReady, ReportExported, StacksFailed, StacksReady, TickFailed
from .panes import Pane, View, update_static
from .panes.gpus import GpusPane
from .panes.hypotheses import HypothesesPane
from .panes.log import LogPane
from .panes.memory import MemoryPane
from .panes.processes import ProcessesPane
from .panes.stacks import StacksPane
from .screens import HelpScreen, MappingsScreen
from .verdict_line import render_verdict_line, stacks_summary, verdict_of
from .workers import Cancelled, call_cancellable

HISTORY = 12  # moments kept for sparklines
MAX_TIMELINE = 2000  # moments the app keeps to look back through (as many as an Incident keeps)
PANE_IDS = ("processes", "gpus", "memory", "log", "stacks", "hypotheses")


class TriageApp(App[None]):
    CSS_PATH = "triage.tcss"
    TITLE = "triage"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-medium"), (200, "-wide")]
    BINDINGS = [
        # the footer shows these first, so `? help` and `q quit` fit at 80 columns
        Binding("question_mark", "help", "help"),
        Binding("q", "quit", "quit"),
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),  # as in htop and nvitop
        Binding("f1", "help", "help", show=False),
        Binding("f10", "quit", "quit", show=False, priority=True),
        *(Binding(str(n), f"focus_pane({n})", f"pane {n}", show=False) for n in range(1, 7)),
        Binding("S", "capture(True)", "all stacks"),
        Binding("z", "zoom", "zoom"),
        Binding("s", "capture(False)", "stacks", show=False),
        Binding("m", "memory_map", "mem map", show=False),
        Binding("p", "pause", "pause", show=False),
        Binding("r", "refresh_now", "refresh", show=False),
        Binding("left_square_bracket", "step(-1)", "back", show=False),
        Binding("right_square_bracket", "step(1)", "fwd", show=False),
        Binding("left_curly_bracket", "jump(-60)", "-1 min", show=False),
        Binding("right_curly_bracket", "jump(60)", "+1 min", show=False),
        Binding("end", "live", "live", show=False, priority=True),
        Binding("e", "export", "export", show=False),
    ]

    def __init__(
        self,
        incident: IncidentView,
        interval: float = 2.0,
        theme: str = "dark",
        live: bool = True,
        clock: Callable[[], float] = time.time,
        export_dir: str = ".",
        auto_stacks: bool = False,
        export_dirs: Sequence[str] = (),
    ) -> None:
        super().__init__()
        self.auto_stacks = auto_stacks  # capture the whole target once, by itself, when it all idles
        self.incident = incident
        self.interval = interval
        self.live = live
        self.clock = clock
        self.export_dirs: tuple[str, ...] = tuple(export_dirs) or (export_dir,)  # `e` tries these in order
        self.theme = "textual-light" if theme == "light" else "textual-dark"
        self.paused = False
        self.collecting_since: Optional[float] = None
        self.last_error = ""
        self.view_at: Optional[float] = None  # taken_at of the snapshot shown while looking back
        self.timeline: tuple[Moment, ...] = tuple(incident.timeline)[-MAX_TIMELINE:]
        self.changelog: tuple[str, ...] = tuple(incident.changelog)
        self.zoomed: Optional[str] = None
        self._narrow_rows: Optional[str] = None  # the narrow grid's row heights as last set
        self._last_jump: Optional[tuple[Optional[float], Optional[float], int]] = None  # (from, to, seconds)
        self.last_export: Optional[str] = None
        self.ticks_started = 0
        self._capturing = False

    # ------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Static("", id="header")
        yield Static("", id="banner")
        yield Static("", id="verdict")
        with Container(id="panes"):
            yield ProcessesPane(id="processes", classes="pane")
            yield GpusPane(id="gpus", classes="pane")
            yield MemoryPane(id="memory", classes="pane")
            yield LogPane(id="log", classes="pane")
            yield StacksPane(id="stacks", classes="pane")
            yield HypothesesPane(id="hypotheses", classes="pane")
        yield KeyHints(id="keys")

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.query_one(KeyHints).show_for(event.widget)

    def on_mount(self) -> None:
        self.query_one("#banner").display = False
        self.pane(1).focus_target.focus()
        self.render_all()
        if self.live:
            self.set_interval(self.interval, self.refresh_timer_fired)
            # the first collection (and the engine's import) after the first frame is painted: the
            # layout shows at once, the panes fill when the Moment arrives
            self.call_after_refresh(self.request_tick)

    def pane(self, number: int) -> Pane:
        return self.query_one(f"#{PANE_IDS[number - 1]}", Pane)

    def focused_pane(self) -> Optional[Pane]:
        node = self.focused
        while node is not None and not isinstance(node, Pane):
            node = node.parent  # type: ignore[assignment]
        return node

    # ------------------------------------------------------------ what is shown
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

    def render_all(self) -> None:
        moment = self.shown_moment()
        self.render_header()
        self.render_verdict()
        if moment is None:
            return
        view = self._view(moment)
        for number in range(1, 7):
            self.pane(number).show(view)
        self._fit_layout()

    def render_verdict(self) -> None:
        """The line under the header: the engine's top cause at the moment shown, or what is missing."""
        timeline = self.timeline
        shown = self.shown_moment()
        upto = list(timeline) if self.view_at is None else list(timeline)[: self._index_of(self.view_at) + 1]
        v = verdict_of(shown, upto, has_stacks=shown is not None and shown.stacks is not None)
        line = self.query_one("#verdict", Static)
        update_static(line, render_verdict_line(v, max(20, self.size.width - 2)))

    def _fit_layout(self) -> None:
        """A GPU pane with nothing to show takes one line (and its grid cell goes to Hypotheses); at
        80x24 Processes takes the whole first screen under the verdict, the other panes below it."""
        empty = self.query_one(GpusPane).empty
        self.screen.set_class(empty, "-nogpu")
        panes = self.query_one("#panes")
        if self.screen.has_class("-narrow"):
            first = max(8, panes.size.height - (1 if empty else 0))
            rows = f"{first} " + " ".join(["12"] * 5)
            if self._narrow_rows != rows:
                self._narrow_rows = rows
                panes.styles.grid_rows = rows  # textual parses the text
        elif self._narrow_rows is not None:
            self._narrow_rows = None
            panes.styles.clear_rule("grid_rows")

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_layout)
        self.call_after_refresh(self.render_verdict)

    def render_header(self) -> None:
        latest = self.latest
        update_static(self.query_one("#header", Static), render_header(
            latest.snapshot if latest else None, self.interval, self.clock(), self.paused, self.collecting_since,
            self.last_error, host=self.incident.host_name, live=self.live, recording=self.incident.recording_message,
        ))
        banner = self.query_one("#banner", Static)
        shown = self.shown_moment()
        if self.view_at is not None and shown is not None:
            banner.update(render_banner(shown.snapshot, self._index_of(self.view_at), len(self.timeline),
                                        latest.snapshot if latest else None, self.live))
            banner.display = True
        else:
            banner.display = False

    # ------------------------------------------------------------ refresh
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

    @work(thread=True, group="collect", exit_on_error=False)
    def _collect(self) -> None:
        try:
            moment = call_cancellable(self.incident.tick)
        except Cancelled:
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
            self.timeline = (self.timeline + (moment,))[-MAX_TIMELINE:]
            self.changelog += moment.diagnosis.changes
        if self.auto_stacks and wants_auto_stacks(moment):
            self.auto_stacks = False  # once: py-spy pauses the target, so it is never repeated unasked
            self._auto_capture = True
            self.action_capture(True)
        if self.view_at is None:
            self.render_all()
        else:
            self.render_header()  # looking back: the panes stay, the banner counts on

    def on_tick_failed(self, message: TickFailed) -> None:
        self.collecting_since = None
        self.last_error = message.error
        self.render_header()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "collect" and event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self.collecting_since = None

    # ------------------------------------------------------------ keys: panes
    def action_focus_pane(self, number: int) -> None:
        pane = self.pane(number)
        if self.zoomed is not None and self.zoomed != pane.id:
            self._set_zoom(pane.id)
        # Focus now, not after the next refresh (Widget.focus defers it): a key typed right after
        # (`6z`) then acts on the pane it names.
        self.screen.set_focus(pane.focus_target, scroll_visible=False)
        pane.scroll_visible(animate=False)

    def action_zoom(self) -> None:
        pane = self.focused_pane() or self.pane(1)
        self._set_zoom(None if self.zoomed == pane.id else pane.id)

    def _set_zoom(self, pane_id: Optional[str]) -> None:
        self.zoomed = pane_id
        self.screen.set_class(pane_id is not None, "-zoom")
        for pane in self.query(".pane"):
            pane.set_class(pane.id == pane_id, "-zoomed")
        if pane_id is None:  # back from zoom: the view goes to the pane that has focus, not to the top
            focused = self.focused_pane()
            if focused is not None:
                self.call_after_refresh(focused.scroll_visible, animate=False)

    # ------------------------------------------------------------ keys: refresh and time
    def action_pause(self) -> None:
        self.paused = not self.paused
        self.render_header()

    def action_refresh_now(self) -> None:
        self.request_tick()

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

    # ------------------------------------------------------------ keys: on-demand reads
    def selected_pids(self) -> tuple[int, ...]:
        procs = self.query_one(ProcessesPane)
        if procs.tagged:
            return tuple(sorted(procs.tagged))
        pid = procs.selected_pid()
        return (pid,) if pid is not None else ()

    def action_capture(self, whole_target: bool) -> None:
        if self._capturing:
            self.notify("a stack capture is already running")
            return
        pids: Optional[tuple[int, ...]] = None if whole_target else self.selected_pids()
        if pids == ():
            self.notify("no process selected")
            return
        what = "the whole target" if pids is None else f"{len(pids)} process{'es' if len(pids) > 1 else ''} ({', '.join(map(str, pids[:6]))})"
        self._capturing = True
        self.query_one(StacksPane).set_progress(f"capturing stacks of {what} with py-spy…")
        # said where it is seen at every size: at 80x24 the Stacks pane is below the first screen
        self.notify(f"capturing stacks of {what} with py-spy… (5 shows the Stacks pane)", timeout=4)
        self._capture(pids)

    @work(thread=True, group="stacks", exit_on_error=False)
    def _capture(self, pids: Optional[Sequence[int]]) -> None:
        try:
            capture = call_cancellable(self.incident.capture_stacks, pids)
        except Cancelled:
            return
        except Exception as exc:
            if not get_current_worker().is_cancelled:
                self.post_message(StacksFailed(f"stack capture failed: {type(exc).__name__}: {exc}"))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(StacksReady(capture))

    def on_stacks_ready(self, message: StacksReady) -> None:
        self._capturing = False
        auto, self._auto_capture = getattr(self, "_auto_capture", False), False
        self.query_one(StacksPane).set_capture(message.capture, automatic=auto)
        self.notify(visible(stacks_summary(message.capture) + " (5 shows them)"), timeout=8, markup=False)
        if self.live and not self.paused:
            self.request_tick()  # the engine reads the capture on the next tick: take it now, not in 2 s

    def on_stacks_failed(self, message: StacksFailed) -> None:
        self._capturing = False
        self.query_one(StacksPane).set_error(message.error)
        self.notify(visible(message.error), severity="error", timeout=8, markup=False)

    # ------------------------------------------------------------ the command palette
    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Ctrl+P lists triage's own actions by name (the keys are in `?`), then textual's."""
        yield SystemCommand("Capture stacks: whole target", "py-spy every process of the target at once (S)",
                            lambda: self.action_capture(True))
        yield SystemCommand("Capture stacks: selected", "py-spy the selected or tagged processes (s)",
                            lambda: self.action_capture(False))
        yield SystemCommand("Export the report", "write the Markdown report of the incident so far (e)",
                            self.action_export)
        procs = self.query_one(ProcessesPane)
        for key, what in (("cpu", "CPU %"), ("pss", "memory (PSS)"), ("rss", "RSS"), ("time", "CPU time"),
                          ("pid", "PID"), ("name", "name")):
            yield SystemCommand(f"Sort processes by {what}", f"the Processes pane, by {what}",
                                lambda key=key: procs.action_sort_by(key))
        yield SystemCommand("Reverse the process sort", "I", procs.action_reverse_sort)
        yield SystemCommand("Processes: tree / flat", "t", procs.action_toggle_tree)
        for number in range(1, 7):
            name = self.pane(number).title
            yield SystemCommand(f"Go to pane {number}: {name}", f"focus {name} ({number})",
                                lambda number=number: self.action_focus_pane(number))
        yield SystemCommand("Zoom the focused pane", "full screen, and back (z)", self.action_zoom)
        yield SystemCommand("Step back a refresh", "[", lambda: self.action_step(-1))
        yield SystemCommand("Step forward a refresh", "]", lambda: self.action_step(1))
        yield SystemCommand("Back a minute", "{", lambda: self.action_jump(-60))
        yield SystemCommand("Forward a minute", "}", lambda: self.action_jump(60))
        yield SystemCommand("Back to live", "End", self.action_live)
        yield SystemCommand("Pause / resume refresh", "p", self.action_pause)
        yield SystemCommand("Refresh now", "r", self.action_refresh_now)
        yield SystemCommand("Memory map of the selected process", "m", self.action_memory_map)
        yield SystemCommand("Help: every key", "? or F1", self.action_help)
        yield from super().get_system_commands(screen)

    def action_memory_map(self) -> None:
        procs = self.query_one(ProcessesPane)
        pid = procs.selected_pid()
        moment = self.shown_moment()
        if pid is None or moment is None:
            self.notify("no process selected")
            return
        info = moment.snapshot.process(pid)
        targets = moment.snapshot.live_pids()
        self.push_screen(MappingsScreen(pid, info.name if info else "?"))
        self._read_mappings(pid, targets)

    @work(thread=True, group="smaps", exclusive=True, exit_on_error=False)
    def _read_mappings(self, pid: int, targets: tuple[int, ...]) -> None:
        # Through the IncidentView, so the host the PID belongs to reads it (the node over --ssh;
        # nothing in a replay): never this machine's /proc for another host's PID.
        mappings: Sequence[FileMapping] = ()
        error = ""
        try:
            result = call_cancellable(self.incident.mappings_by_file, pid, targets)
        except Cancelled:
            return
        except Exception as exc:  # a host promises not to raise; if it does, say so on the screen
            result = Unavailable(f"cannot read the mappings of PID {pid}: {type(exc).__name__}: {exc}")
        if isinstance(result, Unavailable):
            error = f"{result.reason}" + (f" ({result.hint})" if result.hint else "")
        else:
            mappings = result
        if not get_current_worker().is_cancelled:
            self.post_message(MappingsReady(pid, mappings, error))

    def on_mappings_ready(self, message: MappingsReady) -> None:
        screen = self.screen
        if isinstance(screen, MappingsScreen) and screen.pid == message.pid:
            moment = self.shown_moment()
            screen.show_mappings(message.mappings, message.error, len(moment.snapshot.processes) if moment else 0)

    def action_export(self) -> None:
        self.notify("writing the report…")
        self._export()

    @work(thread=True, group="export", exclusive=True, exit_on_error=False)
    def _export(self) -> None:
        try:
            path = call_cancellable(export_report_somewhere, self.timeline, self.changelog, self.incident.host_name,
                                    self.export_dirs)
        except Cancelled:
            return
        except ExportError as exc:
            self.post_message(ReportExported("", str(exc)))
            return
        except Exception as exc:
            self.post_message(ReportExported("", f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(ReportExported(path))

    def on_report_exported(self, message: ReportExported) -> None:
        if message.error:
            self.notify(visible(f"report not written: {message.error}"), severity="error", markup=False)
            return
        self.last_export = message.path
        self.notify(visible(f"report written to {message.path}"), timeout=10, markup=False)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        self.workers.cancel_all()
        self.exit()


def run_app(incident: IncidentView, interval: float = 2.0, theme: str = "dark", live: bool = True, auto_stacks: bool = False) -> int:
    """Open the app on `incident` (a live Incident, the demo's, or a replay source) until the user quits."""
    app = TriageApp(incident, interval=interval, theme=theme, live=live, auto_stacks=auto_stacks,
                    export_dirs=export_directories(incident))
    try:
        app.run()
    finally:
        incident.close()
        message = str(getattr(getattr(incident, "recorder", None), "message", "") or "")
        if message:
            print(f"triage: {message}", file=sys.stderr)  # where the record is, for replay/report
    # textual prints the traceback of a crash and sets a return code: a crash must not read as success
    return int(app.return_code or 0)


def export_directories(incident: Any) -> tuple[str, ...]:
    """Where `e` tries to write, in order: the record's directory (the incident's files together),
    else the current directory, else the XDG state directory."""
    out: list[str] = []
    path = (getattr(getattr(incident, "recorder", None), "path", None)
            or getattr(getattr(incident, "recording", None), "path", None))
    if path:
        out.append(os.path.dirname(os.path.abspath(str(path))))
    out.append(os.getcwd() if os.path.isdir(".") else ".")
    from ..record.recorder import state_directory

    out.append(str(state_directory()))
    return tuple(dict.fromkeys(out))

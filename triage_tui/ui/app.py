"""The interactive app: six panes over an IncidentView (live or replayed), refreshed by thread workers.

The UI thread never calls the host: `tick`, `capture_stacks`, the mappings read and the report
export run in thread workers, which post messages back. The app keeps its own timeline, an
immutable tuple of the Moments those messages brought, so what it shows never depends on a
list another thread trims. Each blocking call runs in a
daemon thread the worker waits on while checking for cancellation, so quitting never waits
for a slow source (the host's own hard timeouts end that thread later).

This module holds the layout, the rendering of what is shown and the pane keys; the app's other
parts are mixins, one module each: the refresh loop (`refresh_loop`), looking back through the
timeline (`looking_back`), the reads a key asks for (`on_demand`) and the command palette (`palette`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Optional

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.screen import Screen
from textual.widgets import Static

from ..incident import IncidentView, OpeningFailed
from .dirty_lines import paint_dirty_lines_only
from .export import export_directories
from .header import render_banner, render_header
from .key_hints import KeyHints
from .looking_back import LookingBack
from .on_demand import OnDemandReads
from .palette import Palette
from .pane_set import PANE_IDS, pending_panes, real_panes
from .panes import Pane, RowsStatic, update_static
from .refresh_loop import MAX_TIMELINE, RefreshLoop
from .text_lines import TextLines
from .verdict_line import render_verdict_line, verdict_of

if TYPE_CHECKING:  # the model's dataclasses: imported after the app's first frame (#18)
    from ..model.moment import Moment

__all__ = ["PANE_IDS", "TriageApp", "run_app"]

STARTED_BY_S = 5.0  # `started` is called by then even if no Moment has come (a slow opening, a failed one)


class TriageApp(RefreshLoop, LookingBack, OnDemandReads, Palette, App[None]):
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
        export_dirs_of: Optional[Callable[[], Sequence[str]]] = None,
        started: Optional[Callable[[], None]] = None,
    ) -> None:
        super().__init__()
        self._started = started  # called once the first Moment is shown (the start's GC pause ends: commands/)
        self.auto_stacks = auto_stacks  # capture the whole target once, by itself, when it all idles
        self.incident = incident
        self.interval = interval
        self.live = live
        self.clock = clock
        self.export_dirs: tuple[str, ...] = tuple(export_dirs) or (export_dir,)  # `e` tries these in order
        self.export_dirs_of = export_dirs_of  # else these, asked at `e` (the record's directory, once it is open)
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
        self._auto_capture = False  # the capture running is the automatic one
        self.opening_failure: Optional[OpeningFailed] = None  # why the incident could not be opened
        self.panes_ready = False  # the real panes are mounted (the first frame shows their frames only)
        self.panes_mounting = False

    # ------------------------------------------------------------ layout
    def get_default_screen(self) -> Screen[None]:
        return paint_dirty_lines_only(Screen(id="_default"))  # a quiet refresh renders its changed lines only

    def compose(self) -> ComposeResult:
        yield TextLines(id="header")
        yield Static("", id="banner")
        yield RowsStatic("", id="verdict")
        with Container(id="panes"):
            yield from pending_panes()  # the real panes are mounted in their place after the first frame
        yield KeyHints(id="keys")

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.query_one(KeyHints).show_for(event.widget)

    def on_mount(self) -> None:
        self.query_one("#banner").display = False
        self.render_header()
        self.render_verdict()
        # The first frame is the layout alone: the header and six pane frames. After it is painted, the
        # first collection starts (in its worker: the host, the target, the engine) and the real panes
        # are mounted in the frames' place; the panes fill when the Moment arrives.
        if self.live:
            self.set_interval(self.interval, self.refresh_timer_fired)
            self.call_after_refresh(self.request_tick)
        self.call_after_refresh(self._mount_panes)
        if self._started is not None:
            self.set_timer(STARTED_BY_S, self._say_started)  # whatever happens to the first Moment

    def _say_started(self) -> None:
        started, self._started = self._started, None
        if started is not None:
            started()

    async def _mount_panes(self) -> None:
        """The real panes in place of the first frame's pane frames (with the focus and zoom asked for
        meanwhile), then what the timeline holds already."""
        if self.opening_failure is not None:  # the app is ending already
            return
        wanted = self.focused_pane()
        number = PANE_IDS.index(wanted.id) + 1 if wanted is not None and wanted.id in PANE_IDS else 1
        container = self.query_one("#panes")
        self.panes_mounting = True
        try:
            await container.remove_children()
            await container.mount_all(real_panes())
        finally:
            self.panes_mounting = False
        self.panes_ready = True
        if self.opening_failure is not None:  # it failed while the panes were mounted: end now
            self.exit(return_code=self.opening_failure.code)
            return
        if self.zoomed is not None:
            self._set_zoom(self.zoomed)
        self.screen.set_focus(self.pane(number).focus_target, scroll_visible=False)
        self.render_all()

    def pane(self, number: int) -> Pane:
        return self.query_one(f"#{PANE_IDS[number - 1]}", Pane)

    def focused_pane(self) -> Optional[Pane]:
        node = self.focused
        while node is not None and not isinstance(node, Pane):
            node = node.parent  # type: ignore[assignment]
        return node

    def render_all(self) -> None:
        moment = self.shown_moment()
        self.render_header()
        self.render_verdict()
        if moment is None or not self.panes_ready:
            return
        view = self._view(moment)
        for number in range(1, 7):
            self.pane(number).show(view)
        self._fit_layout()
        if self._started is not None:
            self.call_after_refresh(self._say_started)  # the first Moment shown: after its paint

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
        from .panes.gpus import GpusPane

        if not self.panes_ready:
            return
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
        self.query_one("#header", TextLines).show(render_header(
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

    # ------------------------------------------------------------ keys: pause, help, quit
    def action_pause(self) -> None:
        self.paused = not self.paused
        self.render_header()

    def action_help(self) -> None:
        from .screens import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        self.workers.cancel_all()
        self.exit()


def run_app(incident: IncidentView, interval: float = 2.0, theme: str = "dark", live: bool = True, auto_stacks: bool = False,
            handover: Optional[Callable[[], None]] = None, started: Optional[Callable[[], None]] = None) -> int:
    """Open the app on `incident` (a live Incident, the demo's, or a replay source) until the user quits.

    handover: called as textual takes the terminal (the early frame's, commands/early_frame.py: from here on
    textual leaves the alternate screen at its exit). started: called once the first Moment is shown, or
    STARTED_BY_S after the app is up without one."""
    app = TriageApp(incident, interval=interval, theme=theme, live=live, auto_stacks=auto_stacks,
                    export_dirs_of=lambda: export_directories(incident), started=started)
    try:
        if handover is not None:
            handover()
        app.run()
    finally:
        incident.close()
        message = str(getattr(getattr(incident, "recorder", None), "message", "") or "")
        if message:
            print(f"triage: {message}", file=sys.stderr)  # where the record is, for replay/report
        for warning in getattr(incident, "warnings", ()):  # said while the app opened it (not recording)
            print(f"triage: warning: {warning}", file=sys.stderr)
    if app.opening_failure is not None:  # the command prints its one line, with its exit code
        raise app.opening_failure
    # textual prints the traceback of a crash and sets a return code: a crash must not read as success
    return int(app.return_code or 0)


"""The reads the user asks for: stacks (`s`, `S`, and the automatic one), a memory map (`m`), the report (`e`).

Each runs in a thread worker (py-spy, smaps and file writes block) and posts its result back as a message;
the host's own hard timeouts end a hung call, and `call_cancellable` lets the app quit meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Optional

from textual import work
from textual.worker import get_current_worker

from ..incident import IncidentView
from ..model.unavailable import Unavailable
from ..render.plain_text import visible
from .export import ExportError, export_report_somewhere
from .messages import MappingsReady, ReportExported, StacksFailed, StacksReady
from .verdict_line import stacks_summary
from .workers import Cancelled, call_cancellable

if TYPE_CHECKING:  # the model's dataclasses: imported after the app's first frame (#18)
    from textual.app import App

    from ..model.mappings import FileMapping
    from ..model.moment import Moment
    from .panes.processes import ProcessesPane
    from .panes.stacks import StacksPane

    _AppBase = App[None]
else:
    _AppBase = object


class OnDemandReads(_AppBase):
    """The app's part that runs the reads a key asks for (a mixin of TriageApp)."""

    incident: IncidentView
    live: bool
    paused: bool
    timeline: tuple[Moment, ...]
    changelog: tuple[str, ...]
    export_dirs: tuple[str, ...]
    export_dirs_of: Optional[Callable[[], Sequence[str]]]
    last_export: Optional[str]
    _capturing: bool
    _auto_capture: bool
    panes_ready: bool

    if TYPE_CHECKING:
        def shown_moment(self) -> Optional[Moment]: ...
        def request_tick(self) -> bool: ...

    def _processes(self) -> Optional[ProcessesPane]:
        """The Processes pane, or None in the moment before the panes are mounted (keys typed at start)."""
        from .panes.processes import ProcessesPane

        return self.query_one(ProcessesPane) if self.panes_ready else None

    def _stacks(self) -> Optional[StacksPane]:
        from .panes.stacks import StacksPane

        return self.query_one(StacksPane) if self.panes_ready else None

    def selected_pids(self) -> tuple[int, ...]:
        procs = self._processes()
        if procs is None:
            return ()
        if procs.tagged:
            return tuple(sorted(procs.tagged))
        pid = procs.selected_pid()
        return (pid,) if pid is not None else ()

    # ------------------------------------------------------------ stacks
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
        stacks = self._stacks()
        if stacks is not None:
            stacks.set_progress(f"capturing stacks of {what} with py-spy…")
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
        auto, self._auto_capture = self._auto_capture, False
        stacks = self._stacks()
        if stacks is not None:
            stacks.set_capture(message.capture, automatic=auto)
        self.notify(visible(stacks_summary(message.capture) + " (5 shows them)"), timeout=8, markup=False)
        if self.live and not self.paused:
            self.request_tick()  # the engine reads the capture on the next tick: take it now, not in 2 s

    def on_stacks_failed(self, message: StacksFailed) -> None:
        self._capturing = False
        stacks = self._stacks()
        if stacks is not None:
            stacks.set_error(message.error)
        self.notify(visible(message.error), severity="error", timeout=8, markup=False)

    # ------------------------------------------------------------ memory map
    def action_memory_map(self) -> None:
        from .screens import MappingsScreen

        procs = self._processes()
        pid = procs.selected_pid() if procs is not None else None
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
        from .screens import MappingsScreen

        screen = self.screen
        if isinstance(screen, MappingsScreen) and screen.pid == message.pid:
            moment = self.shown_moment()
            screen.show_mappings(message.mappings, message.error, len(moment.snapshot.processes) if moment else 0)

    # ------------------------------------------------------------ the report
    def action_export(self) -> None:
        self.notify("writing the report…")
        self._export()

    @work(thread=True, group="export", exclusive=True, exit_on_error=False)
    def _export(self) -> None:
        try:
            dirs = tuple(self.export_dirs_of()) if self.export_dirs_of is not None else self.export_dirs
            path = call_cancellable(export_report_somewhere, self.timeline, self.changelog, self.incident.host_name, dirs)
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

"""Ctrl+P, the command palette: triage's own actions by name, each with its key, then textual's."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from textual.app import SystemCommand
from textual.screen import Screen

from .panes import Pane

if TYPE_CHECKING:
    from textual.app import App

    _AppBase = App[None]
else:
    _AppBase = object


class Palette(_AppBase):
    """The app's command palette (a mixin of TriageApp)."""

    if TYPE_CHECKING:
        def pane(self, number: int) -> Pane: ...
        def action_capture(self, whole_target: bool) -> None: ...
        def action_export(self) -> None: ...
        def action_focus_pane(self, number: int) -> None: ...
        def action_zoom(self) -> None: ...
        def action_step(self, delta: int) -> None: ...
        def action_jump(self, seconds: int) -> None: ...
        def action_live(self) -> None: ...
        def action_pause(self) -> None: ...
        def action_refresh_now(self) -> None: ...
        def action_memory_map(self) -> None: ...
        def action_help(self) -> None: ...

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Ctrl+P lists triage's own actions by name (the keys are in `?`), then textual's."""
        yield from _triage_commands(self)
        yield from super().get_system_commands(screen)


def _triage_commands(app: Palette) -> Iterable[SystemCommand]:
    yield SystemCommand("Capture stacks: whole target", "py-spy every process of the target at once (S)",
                        lambda: app.action_capture(True))
    yield SystemCommand("Capture stacks: selected", "py-spy the selected or tagged processes (s)",
                        lambda: app.action_capture(False))
    yield SystemCommand("Export the report", "write the Markdown report of the incident so far (e)",
                        app.action_export)
    from .panes.processes import ProcessesPane

    procs = app.query_one(ProcessesPane)
    for key, what in (("cpu", "CPU %"), ("pss", "memory (PSS)"), ("rss", "RSS"), ("time", "CPU time"),
                      ("pid", "PID"), ("name", "name")):
        yield SystemCommand(f"Sort processes by {what}", f"the Processes pane, by {what}",
                            lambda key=key: procs.action_sort_by(key))
    yield SystemCommand("Reverse the process sort", "I", procs.action_reverse_sort)
    yield SystemCommand("Processes: tree / flat", "t", procs.action_toggle_tree)
    for number in range(1, 7):
        name = app.pane(number).title
        yield SystemCommand(f"Go to pane {number}: {name}", f"focus {name} ({number})",
                            lambda number=number: app.action_focus_pane(number))
    yield SystemCommand("Zoom the focused pane", "full screen, and back (z)", app.action_zoom)
    yield SystemCommand("Step back a refresh", "[", lambda: app.action_step(-1))
    yield SystemCommand("Step forward a refresh", "]", lambda: app.action_step(1))
    yield SystemCommand("Back a minute", "{", lambda: app.action_jump(-60))
    yield SystemCommand("Forward a minute", "}", lambda: app.action_jump(60))
    yield SystemCommand("Back to live", "End", app.action_live)
    yield SystemCommand("Pause / resume refresh", "p", app.action_pause)
    yield SystemCommand("Refresh now", "r", app.action_refresh_now)
    yield SystemCommand("Memory map of the selected process", "m", app.action_memory_map)
    yield SystemCommand("Help: every key", "? or F1", app.action_help)

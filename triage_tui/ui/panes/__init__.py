"""One module per pane. Each pane is a container with a `show(view)` method and a focus target."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget

from ...model.snapshot import Snapshot
from ..process_rows import IdleTracker


@dataclass(frozen=True)
class View:
    """What every pane renders from: the snapshot shown, the history before it, idle times."""

    snapshot: Snapshot
    history: Sequence[Snapshot]  # recent snapshots up to and including `snapshot`, oldest first
    idle: IdleTracker
    changelog: Sequence[str] = ()


class Pane(Vertical):
    """A bordered pane; `focus_target` is the widget that takes focus for keys 1-6."""

    number = 0
    title = ""

    def on_mount(self) -> None:
        self.border_title = f"{self.number} {self.title}"

    @property
    def focus_target(self) -> Widget:
        return self

    def show(self, view: View) -> None:  # pragma: no cover - every pane overrides
        raise NotImplementedError


class PaneScroll(VerticalScroll):
    """A pane's scrollable body: arrows and j/k move it."""

    BINDINGS = [
        Binding("j", "scroll_down", "down", show=False),
        Binding("k", "scroll_up", "up", show=False),
    ]

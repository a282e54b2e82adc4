"""One module per pane. Each pane is a container with a `show(view)` method and a focus target."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

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


def _extent(text: Text) -> tuple[int, int]:
    """(lines, widest line in cells): what decides the height a Static needs at a given width."""
    lines = text.plain.split("\n")
    return len(lines), max(cell_len(line) for line in lines)


def update_static(widget: Static, text: Text) -> None:
    """Show `text` in `widget`, at the least cost: nothing when it is what is shown (most panes on most
    refreshes), a repaint of the widget alone when it keeps its height, a layout only when its height
    may change. A layout re-flows and repaints the whole screen, every refresh, for every pane."""
    shown: object = getattr(widget, "_triage_shown", None)
    if isinstance(shown, Text) and shown == text:
        return
    widget._triage_shown = text  # type: ignore[attr-defined]
    new = _extent(text)
    old = _extent(shown) if isinstance(shown, Text) else None
    width = widget.size.width
    # same number of lines, none of them wrapping (before or after): the height cannot change
    same_height = old is not None and old[0] == new[0] and width > 0 and max(old[1], new[1]) < width
    widget.update(text, layout=not same_height)

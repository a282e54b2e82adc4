"""One module per pane. Each pane is a container with a `show(view)` method and a focus target."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

if TYPE_CHECKING:  # the model's dataclasses: imported after the app's first frame (#18)
    from ...model.diagnosis import Diagnosis
    from ...model.moment import Moment
    from ...model.snapshot import Snapshot


@dataclass(frozen=True)
class View:
    """What every pane renders from: the Moment shown, the Moments before it, the changelog."""

    moment: Moment
    history: Sequence[Moment]  # recent Moments up to and including `moment`, oldest first
    changelog: Sequence[str] = ()

    @property
    def snapshot(self) -> Snapshot:
        return self.moment.snapshot

    @property
    def diagnosis(self) -> Diagnosis:
        return self.moment.diagnosis


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


def _height(widget: Static, width: int) -> int:
    """Lines the widget's content takes at `width`, measured as textual measures it for a layout."""
    return widget.visual.get_height(widget.styles, width)  # type: ignore[arg-type]  # textual itself passes styles here


def _one_line(text: Text, width: int) -> bool:
    """Whether `text` takes one line at `width` for certain (no newline, and it fits): its height is known
    without measuring it (measuring wraps the text, the dearer half of a one-line update)."""
    return 0 < text.cell_len <= width and "\n" not in text.plain


def update_static(widget: Static, text: Text) -> None:
    """Show `text` in `widget`, at the least cost: nothing when it is what is shown (most panes on most
    refreshes), a repaint of the widget alone when its height stays, a layout only when its height
    changes. A layout re-flows and repaints the whole screen: every refresh, for five panes."""
    shown: object = getattr(widget, "_triage_shown", None)
    if isinstance(shown, Text) and shown == text:
        return
    widget._triage_shown = text  # type: ignore[attr-defined]
    width = widget.content_size.width
    if not isinstance(shown, Text) or width <= 0:
        widget.update(text)
        return
    if _one_line(shown, width) and _one_line(text, width):  # most updates: a figure in a line that fits
        widget.update(text, layout=False)
        return
    before = _height(widget, width)
    widget.update(text, layout=False)
    if _height(widget, width) != before:
        widget.clear_cached_dimensions()
        widget.refresh(layout=True)

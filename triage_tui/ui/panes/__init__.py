"""One module per pane. Each pane is a container with a `show(view)` method and a focus target."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Region
from textual.visual import Visual, VisualType, visualize
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


def _height_of(visual: Visual, widget: Static, width: int) -> int:
    """Lines `visual` takes at `width` in `widget`, measured as textual measures it for a layout."""
    return visual.get_height(widget.styles, width)  # type: ignore[arg-type]  # textual itself passes styles here


def _height(widget: Static, width: int) -> int:
    """Lines the widget's content takes at `width`, measured as textual measures it for a layout."""
    return _height_of(widget.visual, widget, width)


def _one_line(text: Text, width: int) -> bool:
    """Whether `text` takes one line at `width` for certain (no newline, and it fits): its height is known
    without measuring it (measuring wraps the text, the dearer half of a one-line update)."""
    return 0 < text.cell_len <= width and "\n" not in text.plain


class RowsStatic(Static):
    """A Static whose text can be replaced with only some of its rows repainted (`update_static`).

    textual's `Static.update` and its `content` setter repaint the whole widget (and the setter lays
    the screen out); `show_rows` sets what `visual` returns and refreshes the rows named, through
    public API only (textual renders the content again from `visual` when a region of it is dirty)."""

    _rows_visual: Optional[Visual] = None
    _rows_text: Optional[Text] = None
    _rows_of: Optional[dict[tuple[str, int], int]] = None  # rows a long line takes, by its characters and width

    @property
    def visual(self) -> Visual:
        return self._rows_visual if self._rows_visual is not None else super().visual

    @property
    def content(self) -> VisualType:
        return self._rows_text if self._rows_text is not None else super().content

    @content.setter
    def content(self, content: VisualType) -> None:
        self.update(content)  # what textual's setter does (a new visual, laid out)

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        self._rows_visual = self._rows_text = None
        super().update(content, layout=layout)

    def show_rows(self, text: Text, rows: Sequence[tuple[int, int]]) -> None:
        """Show `text`, whose rows outside `rows` ((first, count) each) are what is shown now."""
        self._rows_visual, self._rows_text = visualize(self, text, markup=False), text
        width = self.content_size.width
        self.refresh(*(Region(0, first, width, count) for first, count in rows))


def _rows(widget: RowsStatic, line: Text, width: int) -> int:
    """Rows one line of a Static's text takes at `width`: 1 when it fits (known without wrapping it),
    else as textual wraps it (kept by its characters: a long line, such as the Memory pane's verdict,
    seldom changes)."""
    if line.cell_len <= width:
        return 1
    if widget._rows_of is None or len(widget._rows_of) > 64:
        widget._rows_of = {}
    cache, key = widget._rows_of, (line.plain, width)
    if key not in cache:
        cache[key] = _height_of(visualize(widget, line, markup=False), widget, width)
    return cache[key]


def _changed_rows(widget: RowsStatic, shown: Text, text: Text, width: int) -> list[tuple[int, int]] | None:
    """(first row, rows) of each line where `text` differs from `shown`, when the two have as many lines,
    each taking as many rows as before, and the same base style; else None (repainted whole)."""
    if (shown.style, shown.justify, shown.overflow, shown.no_wrap) != (text.style, text.justify, text.overflow,
                                                                        text.no_wrap):
        return None
    if shown.spans == text.spans:  # the usual: figures moved in place (a Text's split is the dearer part)
        quick = _changed_plain_rows(widget, shown.plain.split("\n"), text.plain.split("\n"), width)
        if quick is not None:
            return quick
    old, new = shown.split("\n", allow_blank=True), text.split("\n", allow_blank=True)
    if len(old) != len(new):
        return None
    out, row = [], 0
    for a, b in zip(old, new, strict=True):
        rows = _rows(widget, a, width)
        if a.plain != b.plain or a.spans != b.spans:
            if _rows(widget, b, width) != rows:
                return None
            out.append((row, rows))
        row += rows
    return out


def _changed_plain_rows(widget: RowsStatic, old: list[str], new: list[str], width: int) -> list[tuple[int, int]] | None:
    """`_changed_rows` for two texts with the same spans, when every line keeps its length (so each line
    keeps its styles, at the same offsets): the lines whose characters differ, each taking as many rows as
    before, without splitting the Texts (the dearer part); else None."""
    if len(old) != len(new):
        return None
    out, row = [], 0
    for a, b in zip(old, new, strict=True):
        if len(a) != len(b):
            return None
        rows = _plain_rows(widget, a, width)
        if a != b:
            if _plain_rows(widget, b, width) != rows:
                return None
            out.append((row, rows))
        row += rows
    return out


def _plain_rows(widget: RowsStatic, line: str, width: int) -> int:
    """`_rows` of a line given by its characters (a line's rows do not depend on its styles)."""
    return 1 if cell_len(line) <= width else _rows(widget, Text(line), width)


def update_static(widget: Static, text: Text) -> None:
    """Show `text` in `widget`, at the least cost: nothing when it is what is shown (most panes on most
    refreshes), the changed lines alone when its lines stay one to one (a figure moved in the Memory
    pane: one line, not sixteen, through the widget and every container under it), a repaint of the
    widget alone when its height stays, a layout only when its height changes. A layout re-flows and
    repaints the whole screen: every refresh, for five panes."""
    shown: object = getattr(widget, "_triage_shown", None)
    if isinstance(shown, Text) and shown == text and shown.style == text.style:
        return
    widget._triage_shown = text  # type: ignore[attr-defined]
    width = widget.content_size.width
    if not isinstance(shown, Text) or width <= 0:
        widget.update(text)
        return
    if _one_line(shown, width) and _one_line(text, width):  # most updates: a figure in a line that fits
        widget.update(text, layout=False)
        return
    if isinstance(widget, RowsStatic):
        changed = _changed_rows(widget, shown, text, width)
        if changed is not None:
            widget.show_rows(text, changed)
            return
    before = _height(widget, width)
    widget.update(text, layout=False)
    if _height(widget, width) != before:
        widget.clear_cached_dimensions()
        widget.refresh(layout=True)

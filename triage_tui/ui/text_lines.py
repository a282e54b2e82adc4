"""A line or two of rich Text painted through textual's line API: the header and the log's status line.

Both change every second (the time of the last good refresh, "last line 5m03s ago"). A Static paints a new
text through textual's Content (convert, wrap, format, style: ~0.3-0.4 ms for one line here, each of them
every refresh); this widget renders the Text with rich, as the process table renders its cells, and keeps
the lines until the text or the width changes. It lays out only when its height changes.
"""

from __future__ import annotations

from typing import Any, Optional

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget


class TextLines(Widget):
    """`text` wrapped at the widget's width (at most its max-height of lines are seen)."""

    DEFAULT_CSS = "TextLines { height: auto; }"

    def __init__(self, text: Optional[Text] = None, *, id: Optional[str] = None, classes: Optional[str] = None) -> None:
        super().__init__(id=id, classes=classes)
        self.text = text if text is not None else Text()
        self._lines: Optional[tuple[int, Style, list[Strip]]] = None  # (width, base style, lines) of self.text

    def show(self, text: Text) -> None:
        """Show `text`: nothing when it is what is shown, its lines repainted, a layout when its height changes."""
        if text == self.text:
            return
        width, old = self.size.width, self.text
        self.text = text
        self._lines = None
        if width > 0 and _one_line(old, width) and _one_line(text, width):  # the usual: a figure moved
            changed = _changed_cells(old, text)
            if changed is not None:  # only those cells go to the terminal (the line is made again whole)
                # content-relative: textual adds the padding (adding it here too sent the cells one column
                # to the right of the figure, which a terminal showed stale at the end of a styled run)
                self.refresh(Region(changed[0], 0, changed[1] - changed[0], 1))
            else:
                self.refresh()
            return
        same_height = width > 0 and len(self._wrap(text, width)) == len(self._wrap(old, width))
        self.refresh(layout=not same_height)

    def _wrap(self, text: Text, width: int) -> list[Text]:
        if _one_line(text, width) and "\t" not in text.plain:  # the usual: the line as rich would wrap it
            return [text]
        return list(text.wrap(self.app.console, max(1, width))) or [Text()]

    def render(self) -> Text:
        return self.text  # what it shows (textual asks a widget for it; the lines are painted by render_line)

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return len(self._wrap(self.text, width))

    def render_line(self, y: int) -> Strip:
        width, base = self.size.width, self.rich_style
        if self._lines is None or self._lines[0] != width or self._lines[1] != base:
            self._lines = (width, base, [self._strip(line, width, base) for line in self._wrap(self.text, width)])
        lines = self._lines[2]
        return lines[y] if 0 <= y < len(lines) else Strip.blank(width, base)

    def _strip(self, line: Text, width: int, base: Style) -> Strip:
        segments = [Segment(seg.text, base + seg.style if seg.style else base)
                    for seg in line.render(self.app.console, end="") if seg.text]
        return Strip(segments).extend_cell_length(width, base).crop(0, width)


def _one_line(text: Text, width: int) -> bool:
    """One line at `width` for certain: no newline, and it fits (known without wrapping it)."""
    return 0 < text.cell_len <= width and "\n" not in text.plain


def _changed_cells(old: Text, new: Text) -> Optional[tuple[int, int]]:
    """The columns [start, end) where one line `new` differs from `old` when the two differ only in
    characters, in place (the same length, styles and spans: "last good 23:14:05" to "…:06"); else None."""
    a, b = old.plain, new.plain
    if len(a) != len(b) or old.spans != new.spans or old.style != new.style:
        return None
    start = next((i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y), len(a))
    end = len(a) - next((i for i, (x, y) in enumerate(zip(reversed(a), reversed(b), strict=True)) if x != y), len(a))
    if start >= end:
        return None
    return cell_len(a[:start]), max(cell_len(a[:end]), cell_len(b[:end]))

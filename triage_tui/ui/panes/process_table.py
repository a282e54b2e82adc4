"""The Processes pane's table: a line-API widget that makes and paints only the rows on screen.

textual's DataTable holds every row's cells and measures them to size its columns: at 1,000 processes
a refresh made, compared and stored 11,000 cells though some 45 rows are seen. This table holds the
row keys and a function that makes one row's cells when asked (`cells_at`). A refresh asks only for
the rows on screen, compares them with what those lines last painted and repaints the lines that
differ: on most refreshes of a quiet tree, none, so no layout and no paint. A row off screen is made
when it is scrolled to, from the data of that moment: never a stale cache.

Figures have fixed widths, as htop's do (nothing to measure per refresh); name, wchan and GPU are as wide
as their widest text, which the pane works out when its rows change, and shrink when the pane is narrow: a
cell too long for its column ends in "…". A cell is a str (plain text, never markup) or a rich Text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Optional

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..style_per_paint import StylePerPaint

# the width of each column's text (its figures' widest form: 4194304, 100.0%, 12m05s, 1023M)
COLUMN_WIDTHS = {"PID": 7, "St": 6, "CPU%": 6, "CPU time": 8, "idle": 5, "thr R/all": 9, "RSS": 5, "PSS": 5}
# the columns as wide as their widest text (told by the pane when its rows change), shrunk to this least
# width, the first one first (wchan before the name: the name tells the ranks apart), when the pane is
# narrower than every column at its width
FLEXIBLE = {"wchan": 8, "GPU": 3, "name": 16}
PAD = 1  # blank cells either side of a column's text

Cells = Sequence[object]


def _text(value: object) -> Text:
    return value if isinstance(value, Text) else Text(str(value))


def _cell_key(value: object) -> object:
    """What a cell shows, hashable: a str itself; a Text by its text, style and spans (a Text is mutable
    and has no hash). Two cells with the same key render the same segments."""
    if isinstance(value, Text):
        return (value.plain, str(value.style), tuple(value.spans), value.overflow, value.end)
    return str(value)


class ProcessTable(StylePerPaint, ScrollView, can_focus=True):
    """Rows of fixed-width columns under a header line that stays; a row cursor (up/down, j/k, page keys)."""

    DEFAULT_CSS = """
    ProcessTable {
        background: $surface;
        color: $foreground;
        &:focus { background-tint: $foreground 5%; }
        & > .process-table--header { text-style: bold; background: $panel; color: $foreground; }
        & > .process-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        &:focus > .process-table--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
    }
    """
    COMPONENT_CLASSES = {"process-table--header", "process-table--cursor"}
    BINDINGS = [
        Binding("up,k", "cursor_up", "up", show=False),
        Binding("down,j", "cursor_down", "down", show=False),
        Binding("pageup", "page_up", "page up", show=False),
        Binding("pagedown", "page_down", "page down", show=False),
        Binding("home", "first", "first row", show=False),
    ]

    def __init__(self, *, id: Optional[str] = None, classes: Optional[str] = None) -> None:
        super().__init__(id=id, classes=classes)
        self.columns: tuple[str, ...] = ()
        self.cursor_row = 0
        self._keys: Sequence[str] = ()
        self._cells_at: Callable[[int], Cells] = lambda index: ()
        self._widths: tuple[int, ...] = ()
        self._natural: dict[str, int] = {}  # the flexible columns' widest text
        self._painted: dict[int, tuple[str, Cells]] = {}  # screen line -> (row key, cells) it last showed
        self._strips: dict[str, tuple[tuple[Any, ...], Strip]] = {}  # row key -> (what it showed, its line)
        self._cell_segments: dict[tuple[object, ...], tuple[Segment, ...]] = {}  # a cell's segments, by what it shows
        self.rows_made = 0  # row lines rendered into segments (tests count what a refresh painted)

    # ------------------------------------------------------------ what it shows
    @property
    def row_count(self) -> int:
        return len(self._keys)

    def set_columns(self, columns: Sequence[str]) -> None:
        self.columns = tuple(columns)
        self._fit_columns()

    def set_natural_widths(self, widths: dict[str, int]) -> None:
        """The widest text of each flexible column (name, wchan, GPU) over every row, not only those shown."""
        if widths != self._natural:
            self._natural = dict(widths)
            self._fit_columns()

    def show_rows(self, keys: Sequence[str], cells_at: Callable[[int], Cells]) -> None:
        """Show the rows `keys` (one per row, in order), row i's cells being `cells_at(i)`, asked only for
        rows on screen. The same keys as shown: only the lines whose cells changed are repainted."""
        self._cells_at = cells_at
        if list(keys) != list(self._keys):
            self._keys = keys
            self.cursor_row = min(self.cursor_row, max(0, len(keys) - 1))
            self._painted.clear()
            self._set_virtual_size()
            self.refresh()
            return
        self._keys = keys
        for line, (key, painted) in list(self._painted.items()):
            index = self._index_at(line)
            if index is None or index >= len(keys) or keys[index] != key:
                self._painted.pop(line, None)  # scrolled since: the scroll repainted it
                continue
            cells = cells_at(index)
            if cells is not painted and list(cells) != list(painted):
                self._refresh_cells(line, cells, painted)

    def _refresh_cells(self, line: int, cells: Cells, painted: Cells) -> None:
        """Repaint the cells of screen line `line` that differ from what it painted, from the first to the last
        of them (the line is made again whole, from kept cells; only that stretch is sent to the terminal:
        one span, as textual crops the line once per span it sends)."""
        if len(cells) != len(painted) or len(cells) != len(self._widths):
            self.refresh(Region(0, line, max(self.size.width, self.virtual_size.width), 1))
            return
        x = -int(self.scroll_offset.x)
        first = last = None  # the columns from the first changed cell to the end of the last: one region,
        for new, old, width in zip(cells, painted, self._widths, strict=True):  # one span to crop and send
            if new is not old and _cell_key(new) != _cell_key(old):
                first = x if first is None else first
                last = x + width + 2 * PAD
            x += width + 2 * PAD
        if first is not None and last is not None:
            self.refresh(Region(first, line, last - first, 1))

    def get_row_at(self, index: int) -> list[object]:
        return list(self._cells_at(index))

    def get_row(self, key: str) -> list[object]:
        return self.get_row_at(list(self._keys).index(key))

    def get_cell(self, key: str, column: str) -> object:
        return self.get_row(key)[self.columns.index(column)]

    # ------------------------------------------------------------ the cursor
    def move_cursor(self, row: int, animate: bool = False) -> None:
        if not self._keys:
            return
        row = max(0, min(row, len(self._keys) - 1))
        old, self.cursor_row = self.cursor_row, row
        self._refresh_row(old)
        self._refresh_row(row)
        top, rows = int(self.scroll_offset.y), self._rows_on_screen()
        if row < top:
            self.scroll_to(y=row, animate=animate, immediate=True)
        elif rows > 0 and row >= top + rows:
            self.scroll_to(y=row - rows + 1, animate=animate, immediate=True)

    def action_cursor_up(self) -> None:
        self.move_cursor(self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self.cursor_row + 1)

    def action_page_up(self) -> None:
        self.move_cursor(self.cursor_row - max(1, self._rows_on_screen()))

    def action_page_down(self) -> None:
        self.move_cursor(self.cursor_row + max(1, self._rows_on_screen()))

    def action_first(self) -> None:
        self.move_cursor(0)

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1:
            self.move_cursor(int(self.scroll_offset.y) + event.y - 1)

    def on_focus(self) -> None:
        self.refresh()  # the cursor's style follows focus

    def on_blur(self) -> None:
        self.refresh()

    def on_resize(self) -> None:
        self._fit_columns()

    # ------------------------------------------------------------ painting
    def render_line(self, y: int) -> Strip:
        scroll_x = int(self.scroll_offset.x)
        width = self.size.width
        base = self.rich_style
        if y == 0:
            strip = self._line(self.columns, base + self.get_component_rich_style("process-table--header"))
        else:
            index = self._index_at(y)
            if index is None or index >= len(self._keys):
                return Strip.blank(width, base)
            key = self._keys[index]
            cells = self._cells_at(index)
            self._painted[y] = (key, cells)
            cursor = index == self.cursor_row
            seen = (tuple(cells), cursor, cursor and self.has_focus, self._widths, base)  # base: a new theme, a style
            cached = self._strips.get(key)
            if cached is not None and cached[0] == seen:
                strip = cached[1]
            else:
                style = base + self.get_component_rich_style("process-table--cursor") if cursor else None
                strip = self._line(cells, base, style)
                self.rows_made += 1
                if len(self._strips) > 4 * max(50, self.size.height):
                    self._strips.clear()
                self._strips[key] = (seen, strip)
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def _line(self, cells: Sequence[object], base: Style, over: Optional[Style] = None) -> Strip:
        """One line of `cells` at the column widths, on `base`; `over` (the cursor) on top of every cell's style.

        Each cell's segments are kept by its text, width and styles: a row whose idle-for moved (every row,
        every second, in a tree's first minute) is made of ten kept cells and one made again."""
        segments: list[Segment] = []
        kept = self._cell_segments
        for cell, width in zip(cells, self._widths, strict=False):
            key = (_cell_key(cell), width, base, over)
            made = kept.get(key)
            if made is None:
                made = self._cell(_text(cell), width, base, over)
                if len(kept) > 8192:  # a long watch's figures come and go: start again rather than grow
                    kept.clear()
                kept[key] = made
            segments.extend(made)
        return Strip(segments)

    def _cell(self, cell: Text, width: int, base: Style, over: Optional[Style]) -> tuple[Segment, ...]:
        under = base + over if over is not None else base
        if cell.cell_len > width:
            cell = cell.copy()
            cell.truncate(width, overflow="ellipsis")
        segments = [Segment(" " * PAD, under)]
        for seg in cell.render(self.app.console, end=""):
            if seg.text:
                style = base + seg.style if seg.style else base
                segments.append(Segment(seg.text, style + over if over is not None else style))
        segments.append(Segment(" " * (width - cell.cell_len + PAD), under))
        return tuple(segments)

    def _fit_columns(self) -> None:
        room = self.scrollable_content_region.width or self.size.width
        widths = {c: COLUMN_WIDTHS.get(c) or max(len(c), self._natural.get(c, FLEXIBLE.get(c, 8))) for c in self.columns}
        over = sum(widths.values()) + 2 * PAD * len(widths) - room
        for column, least in FLEXIBLE.items():  # too wide for the pane: shrink wchan first, the name last
            if over <= 0 or column not in widths:
                continue
            cut = min(over, max(0, widths[column] - max(least, len(column))))
            widths[column] -= cut
            over -= cut
        fitted = tuple(widths[c] for c in self.columns)
        if fitted != self._widths:
            self._widths = fitted
            self._strips.clear()
            self._set_virtual_size()
            self.refresh()

    def _set_virtual_size(self) -> None:
        self.virtual_size = Size(sum(w + 2 * PAD for w in self._widths), len(self._keys) + 1)

    def _rows_on_screen(self) -> int:
        return max(0, self.scrollable_content_region.height - 1)  # less the header

    def _index_at(self, line: int) -> Optional[int]:
        return None if line < 1 else int(self.scroll_offset.y) + line - 1

    def _refresh_row(self, index: int) -> None:
        line = index - int(self.scroll_offset.y) + 1
        if 1 <= line <= self._rows_on_screen():
            self.refresh(Region(0, line, max(self.size.width, self.virtual_size.width), 1))

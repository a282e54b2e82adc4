"""A terminal in memory that applies what the app sends, to check partial repaints against a full render.

Every update textual hands the driver (a full frame or the changed spans of a partial one) is applied to
a grid of cells, as a terminal would apply it. After any run of refreshes the grid must equal a full
render of the screen made at that moment: a changed figure whose cells were not sent (a region off by a
column, a line left out) leaves the old figure in the grid, and the comparison names the line.
"""

from __future__ import annotations

from typing import Any

from rich.cells import get_character_cell_size
from rich.segment import ControlType, Segment
from rich.style import Style


class MirrorTerminal:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.cells: list[list[tuple[str, Style]]] = [[(" ", Style())] * width for _ in range(height)]
        self.updates = 0

    def apply(self, update: Any, console: Any) -> None:
        """Write `update` (a LayoutUpdate or ChopsUpdate) at its cursor moves."""
        x = y = 0
        self.updates += 1
        for segment in console.render(update):
            if segment.control:
                for code in segment.control:
                    if code[0] == ControlType.CURSOR_MOVE_TO:
                        x, y = code[1], code[2]  # 0-based here (rich adds 1 in the escape)
                continue
            if segment.text == "\n":
                continue  # each line's spans start with a cursor move
            for char in segment.text:
                size = get_character_cell_size(char)
                if 0 <= y < self.height and 0 <= x < self.width and size:
                    self.cells[y][x] = (char, segment.style or Style())
                    for extra in range(1, size):
                        if x + extra < self.width:
                            self.cells[y][x + extra] = ("", segment.style or Style())
                x += size

    def differences(self, strips: list[Any]) -> list[str]:
        """Lines of the grid that differ from `strips` (a full render), each as "line N: grid | full"."""
        out = []
        for y, strip in enumerate(strips[: self.height]):
            full = MirrorTerminal(self.width, 1)
            full.apply_line(strip)
            if [c for c in self.cells[y]] != full.cells[0]:
                grid = "".join(c for c, _ in self.cells[y])
                want = "".join(c for c, _ in full.cells[0])
                out.append(f"line {y}: {grid.rstrip()!r} | {want.rstrip()!r}" if grid != want
                           else f"line {y}: same characters, other styles: {want.rstrip()!r}")
        return out

    def apply_line(self, strip: Any) -> None:
        x = 0
        for segment in strip:
            if segment.control:
                continue
            for char in segment.text:
                size = get_character_cell_size(char)
                if x < self.width and size:
                    self.cells[0][x] = (char, segment.style or Style())
                    for extra in range(1, size):
                        if x + extra < self.width:
                            self.cells[0][x + extra] = ("", segment.style or Style())
                x += size


def mirror(app: Any, monkeypatch: Any) -> MirrorTerminal:
    """A MirrorTerminal fed every update the app displays from now on (and the screen as it is now)."""
    width, height = app.size
    term = MirrorTerminal(width, height)
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        line = MirrorTerminal(width, 1)
        line.apply_line(strip)
        term.cells[y] = line.cells[0]
    real = type(app)._display

    def display(self: Any, screen: Any, renderable: Any) -> None:
        if renderable is not None and self is app:
            term.apply(renderable, app.console)
        return real(self, screen, renderable)

    monkeypatch.setattr(type(app), "_display", display)
    return term


__all__ = ["MirrorTerminal", "mirror", "Segment"]

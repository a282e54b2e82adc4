"""A screen whose partial repaints render only the lines that changed, not every widget between them.

textual paints a refresh by rendering, for every widget that overlaps the box around all the changed
regions, all of that widget's lines, then sending the changed ones. A quiet refresh of the app changes
a few lines far apart (the header's time at the top, the log's "last line … ago" lower down, an idle-for
cell in between): that box is the whole screen, so every pane rendered every line from its cache, every
refresh — most of what a refresh that changed almost nothing cost the UI thread to paint.

`DirtyLinesCompositor` asks each widget only for its lines that a changed region crosses (and only
where a changed region crosses the widget's columns), through the same `Widget.render_lines(crop)`
textual uses for a clipped widget. What reaches the terminal is the same: textual's own partial
update writes only the changed spans, from the widget that is in front at each cell, and a widget in
front of a changed cell always crosses it. A full repaint (a resize, a layout of the whole screen, a
screenshot) is textual's own, unchanged.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from typing import Any, Optional

from textual._compositor import Compositor
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip

__all__ = ["DirtyLinesCompositor", "paint_dirty_lines_only"]


class DirtyLinesCompositor(Compositor):
    """textual's compositor, rendering only changed lines on a partial update (see the module)."""

    _spans_by_line: Optional[dict[int, list[tuple[int, int]]]] = None

    def render_partial_update(self) -> Any:
        spans: dict[int, list[tuple[int, int]]] = {}
        for y, x1, x2 in self._regions_to_spans(self._dirty_regions):
            spans.setdefault(y, []).append((x1, x2))
        self._spans_by_line = spans
        try:
            return super().render_partial_update()
        finally:
            self._spans_by_line = None

    def _get_renders(self, crop: Optional[Region] = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        spans = self._spans_by_line
        if spans is None:  # a full update, a screenshot: textual's own
            yield from super()._get_renders(crop)
            return
        dirty = sorted(spans)
        for widget, (region, clip) in self.visible_widgets.items():
            shown = region.intersection(clip)
            if not shown:
                continue
            left, right = shown.x, shown.right
            crossed = [y for y in dirty[bisect_left(dirty, shown.y):bisect_left(dirty, shown.bottom)]
                       if any(x1 < right and x2 > left for x1, x2 in spans[y])]
            start = 0
            for i in range(1, len(crossed) + 1):  # runs of consecutive lines, one render each
                if i == len(crossed) or crossed[i] != crossed[i - 1] + 1:
                    top, height = crossed[start], crossed[i - 1] - crossed[start] + 1
                    lines = Region(left, top, shown.width, height)
                    yield lines, lines, widget.render_lines(Region(left - region.x, top - region.y, shown.width, height))
                    start = i


def paint_dirty_lines_only(screen: Screen[Any]) -> Screen[Any]:
    """`screen` with the compositor above, made before it is first laid out (its own holds nothing yet)."""
    if type(getattr(screen, "_compositor", None)) is Compositor:
        screen._compositor = DirtyLinesCompositor()
    return screen

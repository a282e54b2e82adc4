"""A line-API widget's rich style read once per paint, not once per line.

textual's `rich_style` walks every ancestor's CSS each time it is read and caches nothing; a line-API
widget (the process table, the hypotheses tree) reads it for every line it renders, so a changed row
paid the walk again: about a third of what the process table's changed rows cost in a watch's first
minute, when idle-for and the PSS figures move on every row shown. Within one `render_lines` call no
style can change (textual paints between messages), so the style read at its start serves its lines.
Outside a paint `rich_style` is textual's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip

if TYPE_CHECKING:  # a mixin of a textual Widget: checked as one
    from textual.widget import Widget

    _WidgetBase = Widget
else:
    _WidgetBase = object

__all__ = ["StylePerPaint"]


class StylePerPaint(_WidgetBase):
    """Mixin for a textual Widget that renders through `render_line` (put it before the widget class)."""

    _style_in_paint: Optional[Style] = None

    @property
    def rich_style(self) -> Style:
        held = self._style_in_paint
        return held if held is not None else super().rich_style

    def render_lines(self, crop: Region) -> list[Strip]:
        outer = self._style_in_paint is not None  # re-entered (a widget painting inside its own paint): keep it
        if not outer:
            self._style_in_paint = super().rich_style
        try:
            return super().render_lines(crop)
        finally:
            if not outer:
                self._style_in_paint = None

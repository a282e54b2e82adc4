"""Pane 5: the latest stack capture, grouped by identical stack, the odd one out marked."""

from __future__ import annotations

from typing import Any, Optional

from rich.text import Text
from textual.widgets import Static

from ...model.stacks import StackCapture
from ...render.plain_text import visible
from .. import format as fmt
from . import Pane, PaneScroll, RowsStatic, View, update_static
from .waits import WaitsSection

HOW_TO = ("No stack capture yet. Press s for the selected (or tagged) processes, S for the whole target "
          "(py-spy dump: it pauses each process for a moment).")


class StacksPane(Pane):
    number = 5
    title = "Stacks"

    def __init__(self, **kwargs: Any) -> None:  # textual.Widget keywords, passed on
        super().__init__(**kwargs)
        self.progress = ""  # "capturing stacks of 8 processes…" while a capture runs
        self.error = ""
        self.automatic = ""  # set when the app captured by itself
        self._capture: Optional[StackCapture] = None

    def compose(self):
        with PaneScroll(id="stack-scroll"):
            waits = WaitsSection("", id="waits-body")
            waits.display = False
            yield waits
            yield RowsStatic(HOW_TO, id="stack-body")

    @property
    def focus_target(self) -> PaneScroll:
        return self.query_one(PaneScroll)

    def show(self, view: View) -> None:
        self.query_one(WaitsSection).show(view.snapshot)
        if view.moment.stacks is not None:
            self._capture = view.moment.stacks
        self._redraw()

    def set_capture(self, capture: StackCapture, automatic: bool = False) -> None:
        self._capture = capture
        self.automatic = (f"captured by itself at {fmt.clock(capture.taken_at)}: the whole target had idled past "
                          "the threshold (py-spy paused each process for a moment; --no-auto-stacks: never)"
                          if automatic else "")
        self.progress = ""
        self.error = ""
        self._redraw()

    def set_progress(self, text: str) -> None:
        self.progress = text
        self.error = ""
        self._redraw()

    def set_error(self, text: str) -> None:
        self.progress = ""
        self.error = text
        self._redraw()

    def _redraw(self) -> None:
        out = Text()
        if self.progress:
            out.append(self.progress + "\n", style="bold cyan")
        if self.error:
            out.append(visible(self.error) + "\n", style="bold red")
        if self.automatic and self._capture is not None:
            out.append(self.automatic + "\n", style="cyan")
        if self._capture is None:
            out.append(HOW_TO, style="" if not self.progress else "dim")
        else:
            out.append_text(render_capture(self._capture))
        update_static(self.query_one("#stack-body", Static), out)


def render_capture(capture: StackCapture) -> Text:
    out = Text()
    out.append(f"capture at {fmt.clock(capture.taken_at)} of {len(capture.pids)} processes, "
               f"{len(capture.groups)} groups ({capture.duration_ms:.0f} ms)\n", style="bold")
    for note in capture.notes:
        out.append(f"note: {visible(note)}\n", style="yellow")
    failed = [p for p in capture.processes if p.error is not None]
    for p in failed:
        out.append(f"PID {p.pid}: {visible(fmt.reason(p.error))}\n", style="red")
    for g in sorted(capture.groups, key=lambda g: not g.odd_one_out):  # the rank that differs first
        who = ", ".join(str(p) for p in g.pids[:8]) + ("…" if len(g.pids) > 8 else "")
        head = f"{'ODD ONE OUT ' if g.odd_one_out else ''}{len(g.members)} threads in {len(g.pids)} processes ({who})"
        out.append(head + "\n", style="bold magenta" if g.odd_one_out else "bold")
        out.append(visible(f"  wait: {g.wait_kind}" + (f" in {g.wait_frame}" if g.wait_frame else "")))
        if g.unchanged_for_s is not None:
            out.append(f", unchanged for {fmt.duration(g.unchanged_for_s)}")
        out.append("\n")
        if g.odd_one_out and g.departs_at:
            out.append(f"  departs at: {visible(g.departs_at)}\n", style="magenta")
        for f in g.frames[:6]:
            where = f" ({f.file}:{f.line})" if f.file else ""
            out.append(f"    {visible(f.function)}{visible(where)}\n", style="dim" if f.native else "")
        if len(g.frames) > 6:
            out.append(f"    … {len(g.frames) - 6} more frames\n", style="dim")
    return out

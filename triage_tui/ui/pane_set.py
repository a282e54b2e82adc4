"""The six panes in grid order, and the frames that stand for them in the first frame.

The first frame (#18: ≤ 0.3 s) shows the layout with each pane's border and title only: a `PendingPane`
per pane, nothing inside. The real panes (their modules, their tables, trees and logs) are made and
mounted in their place right after that frame is painted (`real_panes`), before the first Moment.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from . import panes as pane_base

PANES = (("processes", "Processes"), ("gpus", "GPUs"), ("memory", "Memory"), ("log", "Log"),
         ("stacks", "Stacks"), ("hypotheses", "Hypotheses"))  # (id, title), keys 1-6
PANE_IDS = tuple(pane_id for pane_id, _ in PANES)


class PendingPane(pane_base.Pane):
    """A pane's frame before the pane itself is mounted: its border, its number and title."""

    def __init__(self, number: int, title: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]  # textual.Widget keywords, passed on
        self.number = number
        self.title = title

    def compose(self) -> ComposeResult:
        yield Static(Text("…", style="dim"))

    def show(self, view: pane_base.View) -> None:
        pass  # nothing to show until the real pane is mounted in its place


def pending_panes() -> list[pane_base.Pane]:
    return [PendingPane(number, title, id=pane_id, classes="pane") for number, (pane_id, title) in enumerate(PANES, 1)]


def real_panes() -> list[pane_base.Pane]:
    """The six panes, made now (their modules are imported here, after the first frame)."""
    from .panes.gpus import GpusPane
    from .panes.hypotheses import HypothesesPane
    from .panes.log import LogPane
    from .panes.memory import MemoryPane
    from .panes.processes import ProcessesPane
    from .panes.stacks import StacksPane

    kinds = (ProcessesPane, GpusPane, MemoryPane, LogPane, StacksPane, HypothesesPane)
    made: list[pane_base.Pane] = [kind(id=pane_id, classes="pane") for kind, pane_id in zip(kinds, PANE_IDS)]
    assert [p.title for p in made] == [title for _, title in PANES], "PANES names each pane as it titles itself"
    return made

"""Pane 6: ranked hypotheses, each expandable to evidence for/against and the next check; the changelog."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Tree

from ...model.snapshot import Hypothesis, Snapshot
from .. import format as fmt
from . import Pane, View

STATUS_STYLE = {"likely": "bold red", "possible": "yellow", "unlikely": "dim", "ruled out": "dim strike"}


class HypothesisTree(Tree[str]):
    BINDINGS = [
        Binding("j", "cursor_down", "down", show=False),
        Binding("k", "cursor_up", "up", show=False),
    ]


class HypothesesPane(Pane):
    number = 6
    title = "Hypotheses"

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._key: object = None

    def compose(self):  # type: ignore[no-untyped-def]
        tree = HypothesisTree("hypotheses", id="hyp-tree")
        tree.show_root = False
        tree.guide_depth = 2
        yield tree

    @property
    def focus_target(self) -> HypothesisTree:
        return self.query_one(HypothesisTree)

    def show(self, view: View) -> None:
        snap = view.snapshot
        key = (snap.hypotheses, snap.observations if not snap.hypotheses else (), tuple(view.changelog[-20:]))
        if key == self._key:
            return
        self._key = key
        tree = self.query_one(HypothesisTree)
        expanded = {n.data for n in tree.root.children if n.is_expanded}
        tree.clear()
        if snap.hypotheses:
            for rank, h in enumerate(sorted(snap.hypotheses, key=lambda h: -h.score), 1):
                node = tree.root.add(_label(rank, h), data=h.id, expand=h.id in expanded)
                for text in h.for_:
                    node.add_leaf(Text("+ " + text, style="green"))
                for text in h.against:
                    node.add_leaf(Text("− " + text, style="red"))
                if h.next_check:
                    node.add_leaf(Text("next: " + h.next_check, style="bold cyan"))
        else:
            _add_observations(tree, snap)
        if view.changelog:
            log = tree.root.add(Text("changelog", style="bold"), data="changelog", expand="changelog" in expanded)
            for line in view.changelog[-20:]:
                log.add_leaf(line)
        if tree.cursor_line < 0:
            tree.cursor_line = 0


def _label(rank: int, h: Hypothesis) -> Text:
    text = Text(f"{rank}. ")
    text.append(f"{h.status:<9}", style=STATUS_STYLE.get(h.status, ""))
    text.append(f" {h.title} ({h.score:.2f})")
    return text


def _add_observations(tree: Tree[str], snap: Snapshot) -> None:
    if not snap.observations:
        tree.root.add_leaf(Text("no hypotheses and no observations yet", style="dim"))
        return
    node = tree.root.add(Text("observations (no hypotheses yet)", style="bold"), data="observations", expand=True)
    for o in snap.observations:
        node.add_leaf(Text(f"{fmt.clock(o.at)} [{o.source}] {o.text}"))

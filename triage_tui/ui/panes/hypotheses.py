"""Pane 6: ranked hypotheses, each expandable to evidence for/against and the next check; the changelog."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from rich.cells import cell_len
from rich.text import Text, TextType
from textual.binding import Binding
from textual.widgets import Tree

from ...model.snapshot import Hypothesis, Snapshot
from ...render.plain_text import visible
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
        self._spec: Optional[list[NodeSpec]] = None  # the nodes shown

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
        spec = _spec(snap, view.changelog)
        if spec == self._spec:
            return
        tree = self.query_one(HypothesisTree)
        if self._spec is not None and _relabels(self._spec, spec) and len(tree.root.children) == len(spec):
            # Same nodes, some labels changed (an evidence figure that ticks): relabel those lines.
            # Rebuilding the tree would lay out (re-flow and repaint) the whole screen every refresh.
            for node, new, old in zip(tree.root.children, spec, self._spec, strict=True):
                if not _same(new.label, old.label):
                    node.set_label(new.label)
                for leaf, a, b in zip(node.children, new.leaves, old.leaves, strict=True):
                    if not _same(a, b):
                        leaf.set_label(a)
            self._spec = spec
            return
        self._spec = spec
        expanded = {n.data for n in tree.root.children if n.is_expanded}
        tree.clear()
        for item in spec:
            if item.is_leaf:
                tree.root.add_leaf(item.label)
                continue
            node = tree.root.add(item.label, data=item.data, expand=item.expand or item.data in expanded)
            for leaf in item.leaves:
                node.add_leaf(leaf)
        if tree.cursor_line < 0:
            tree.cursor_line = 0


@dataclass(frozen=True)
class NodeSpec:
    """One top-level node of the tree as it is to be shown (compared with the last one shown)."""

    label: TextType
    data: Optional[str] = None
    expand: bool = False  # expanded on a rebuild even if it was not before
    leaves: tuple[TextType, ...] = ()
    is_leaf: bool = False

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, NodeSpec) and _same(self.label, other.label) and self.data == other.data
                and self.expand == other.expand and self.is_leaf == other.is_leaf
                and len(self.leaves) == len(other.leaves)
                and all(_same(a, b) for a, b in zip(self.leaves, other.leaves, strict=True)))

    __hash__ = None  # type: ignore[assignment]


def _same(a: TextType, b: TextType) -> bool:
    return type(a) is type(b) and a == b


def _relabels(old: list[NodeSpec], new: list[NodeSpec]) -> bool:
    """Whether `new` can be shown by replacing labels of `old` in place: the same nodes in the same
    order, and no label wider than before (a wider one changes the tree's scrollable width, which
    only a rebuild recomputes; a narrower one leaves it a little wide, which is harmless)."""
    if [(n.data, n.is_leaf, len(n.leaves)) for n in old] != [(n.data, n.is_leaf, len(n.leaves)) for n in new]:
        return False
    return all(_width(a) <= _width(b) for o, n in zip(old, new, strict=True)
               for a, b in zip((n.label, *n.leaves), (o.label, *o.leaves), strict=True))


def _width(label: TextType) -> int:
    return label.cell_len if isinstance(label, Text) else cell_len(label)


def _spec(snap: Snapshot, changelog: Sequence[str]) -> list[NodeSpec]:
    spec: list[NodeSpec] = []
    if snap.hypotheses:
        for rank, h in enumerate(sorted(snap.hypotheses, key=lambda h: -h.score), 1):
            leaves: list[TextType] = [Text("+ " + visible(text), style="green") for text in h.for_]
            leaves += [Text("− " + visible(text), style="red") for text in h.against]
            if h.next_check:
                leaves.append(Text("next: " + visible(h.next_check), style="bold cyan"))
            spec.append(NodeSpec(_label(rank, h), h.id, False, tuple(leaves)))
    elif not snap.observations:
        spec.append(NodeSpec(Text("no hypotheses and no observations yet", style="dim"), is_leaf=True))
    else:
        spec.append(NodeSpec(Text("observations (no hypotheses yet)", style="bold"), "observations", True,
                             tuple(Text(visible(f"{fmt.clock(o.at)} [{o.source}] {o.text}")) for o in snap.observations)))
    if changelog:
        spec.append(NodeSpec(Text("changelog", style="bold"), "changelog", False,
                             tuple(Text(visible(c)) for c in changelog[-20:])))
    return spec


def _label(rank: int, h: Hypothesis) -> Text:
    text = Text(f"{rank}. ")
    text.append(f"{h.status:<9}", style=STATUS_STYLE.get(h.status, ""))
    text.append(f" {visible(h.title)} ({h.score:.2f})")
    return text

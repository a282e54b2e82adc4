"""Pane 6: ranked hypotheses, each expandable to evidence for/against and the next check; the changelog.

Causes come first in the engine's order (never re-sorted here). What would only be noise on the
first look — unlikely hypotheses with nothing for them, ruled-out ones — folds under one "N more"
line that expands. A tree line cannot wrap, so long texts are wrapped here into continuation lines
at the pane's width (no line is cut, nothing scrolls sideways).
"""

from __future__ import annotations

import functools
import operator
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from rich.cells import cell_len
from rich.text import Text, TextType
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ...model.diagnosis import Diagnosis, Hypothesis
from ...render.plain_text import visible
from ...render.verdict import dedupe_evidence, is_quiet, split_next_check
from .. import format as fmt
from ..style_per_paint import StylePerPaint
from . import Pane, View

if TYPE_CHECKING:
    from typing_extensions import Self

STATUS_STYLE = {"likely": "bold red", "possible": "yellow", "unlikely": "dim", "ruled out": "dim strike"}


class HypothesisTree(StylePerPaint, Tree[str]):
    BINDINGS = [
        Binding("j", "cursor_down", "down", show=False),
        Binding("k", "cursor_up", "up", show=False),
    ]

    def _invalidate(self) -> None:
        """textual's Tree._invalidate without the layout it asks for on every node added or cleared: the
        tree's box is set by its CSS (1fr), never by its lines. When the lines it shows change in number,
        its virtual size changes when they are built, and that lays the screen out (its scrollbar); a
        rebuild that changes only what collapsed nodes hold (most of them: a figure in an evidence row,
        a changelog line) repaints the tree and lays nothing out. (A layout re-flows the whole screen:
        ~25 ms here, a third of a tree's first-minute refreshes, before.)"""
        self._clear_line_cache()
        self._updates += 1
        self.root._reset()
        self.refresh()

    # A rebuild that changes how many lines the tree shows sets its virtual size, which asks textual for a
    # layout of the whole screen (~25-40 ms with the paint after it: most of what the app's UI thread spent
    # in a watch's first 24 s at 2 s refresh). The tree's box is its CSS's, never its lines', so that layout
    # moves nothing unless a scrollbar appears or goes: the sideways one never does (overflow-x hidden),
    # and the vertical one does not when the lines fit the tree's height before and after. Then the tree
    # is repainted alone. Both hooks are textual's public ones (a `watch_` method, `refresh`); the watcher
    # runs just before the reactive's own refresh, and the permission is for that one refresh.
    _repaint_only_for: Optional[Size] = None

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        height = self.scrollable_content_region.height
        fits = 0 < height and old.height <= height and new.height <= height
        quiet = self.styles.overflow_x == "hidden" and not self.show_vertical_scrollbar
        self._repaint_only_for = new if fits and quiet and self.is_mounted else None

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Self:
        if layout and self._repaint_only_for is not None:
            layout = self._repaint_only_for != self.virtual_size
            self._repaint_only_for = None
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)


class HypothesesPane(Pane):
    number = 6
    title = "Hypotheses"

    def __init__(self, **kwargs: Any) -> None:  # textual.Widget keywords, passed on
        super().__init__(**kwargs)
        self._key: object = None
        self._spec: Optional[list[NodeSpec]] = None  # the nodes shown
        self._width = 0  # the width the texts were wrapped at

    def compose(self):
        tree = HypothesisTree("hypotheses", id="hyp-tree")
        tree.show_root = False
        tree.guide_depth = 2
        yield tree

    @property
    def focus_target(self) -> HypothesisTree:
        return self.query_one(HypothesisTree)

    def on_resize(self) -> None:
        view = getattr(self, "_view", None)
        if view is not None and self._text_width() != self._width:
            self._key = None
            self.show(view)

    def _text_width(self) -> int:
        return max(30, self.size.width - 2 - 2)  # less the border and the scrollbar

    def show(self, view: View) -> None:
        self._view = view
        diagnosis = view.diagnosis
        width = self._text_width()
        key = (diagnosis.hypotheses, diagnosis.observations if not diagnosis.hypotheses else (),
               tuple(view.changelog[-20:]), width)
        if key == self._key:
            return
        self._key = key
        self._width = width
        spec = _spec(diagnosis, view.changelog, width)
        if spec == self._spec:
            return
        tree = self.query_one(HypothesisTree)
        if self._spec is not None and _relabels(self._spec, spec, width) and len(tree.root.children) == len(spec):
            # Same nodes, some labels changed (an evidence figure that ticks): relabel those lines.
            # Rebuilding the tree would lay out (re-flow and repaint) the whole screen every refresh.
            for node, new, old in zip(tree.root.children, spec, self._spec, strict=True):
                if new is old:  # the same hypothesis, kept by _node: nothing in it moved
                    continue
                if not _same(new.label, old.label):
                    node.set_label(new.label)
                hidden = not node.is_expanded  # its leaves are on no line of the tree
                for leaf, a, b in zip(node.children, new.leaves, old.leaves, strict=True):
                    if a is not b and not _same(a, b):  # a wrapped line kept by _wrap is the same Text
                        _relabel(tree, leaf, a, hidden)
            self._spec = spec
            return
        self._spec = spec
        expanded = {n.data for n in tree.root.children if n.is_expanded}
        tree.clear()
        for item in spec:
            if item.is_leaf:
                tree.root.add_leaf(item.label)
                continue
            branch = tree.root.add(item.label, data=item.data, expand=item.expand or item.data in expanded)
            for text in item.leaves:
                branch.add_leaf(text)
        if tree.cursor_line < 0:
            tree.cursor_line = 0


def _relabel(tree: HypothesisTree, leaf: TreeNode[str], label: TextType, hidden: bool) -> None:
    """`leaf.set_label(label)`; for a leaf under a collapsed node, without the refresh set_label asks for:
    a callback message that looks for the leaf among the lines shown, and finds it on none (~0.15 ms each,
    for the half-dozen evidence rows under collapsed hypotheses whose "idle for N s" ticks every refresh).
    The label is set as set_label sets it (textual's label, its count of updates, which its line cache
    reads); expanding the node lays its lines out again. Where a textual release keeps a node otherwise,
    set_label itself."""
    if hidden and isinstance(getattr(leaf, "_label", None), Text) and isinstance(getattr(leaf, "_updates", None), int):
        leaf._label = tree.process_label(label)
        leaf._updates += 1
    else:
        leaf.set_label(label)


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


def _relabels(old: list[NodeSpec], new: list[NodeSpec], width: int = 0) -> bool:
    """Whether `new` can be shown by replacing labels of `old` in place: the same nodes in the same
    order, and no label wider than before or than the width the texts were wrapped at (`width`; a label
    wider than both would change the tree's scrollable width, which only a rebuild recomputes; every
    line is painted across the tree's width, so one that grows within it needs nothing more: "idle for
    9 s" becoming "idle for 10 s" is one line repainted, not the tree rebuilt and the screen laid out)."""
    if [(n.data, n.is_leaf, len(n.leaves)) for n in old] != [(n.data, n.is_leaf, len(n.leaves)) for n in new]:
        return False
    node_room, leaf_room = width - NODE_INDENT, width - LEAF_INDENT
    return all(n is o or (_width(n.label) <= max(_width(o.label), node_room)
                          and all(a is b or _width(a) <= max(_width(b), leaf_room)
                                  for a, b in zip(n.leaves, o.leaves, strict=True)))
               for o, n in zip(old, new, strict=True))


def _width(label: TextType) -> int:
    return label.cell_len if isinstance(label, Text) else cell_len(label)


LEAF_INDENT = 4  # a leaf's tree guide ("├── ")
NODE_INDENT = 2  # a node's expand mark ("▶ ")
FOLDED = "folded"  # the data of the "N more" node


def folds(h: Hypothesis) -> bool:
    """Under "N more" (still there, one key away): render.verdict.is_quiet, the rule every face uses."""
    return is_quiet(h)


def _wrapped(text: str, width: int, style: str, first: str = "", rest: str = "  ") -> list[TextType]:
    """`text` as tree lines of at most `width` cells: `first` before the first, `rest` before the others."""
    return list(_wrap(text, width, style, first, rest))


@functools.lru_cache(maxsize=1024)
def _wrap(text: str, width: int, style: str, first: str, rest: str) -> tuple[Text, ...]:
    # Kept: most evidence texts are the same from one refresh to the next, and wrapping them all again
    # was most of what a quiet refresh cost the UI thread. The Texts are shared: the tree copies a label.
    # The evidence quotes names, paths and log lines: made visible before it is wrapped, and a Text.
    # 1,024: a refresh wraps ~100-150 texts; texts with a growing figure ("idle for 7 min") add a few a tick,
    # which at 4,096 grew a long watch's memory by ~1 MB before the oldest were dropped.
    lines = textwrap.wrap(visible(text), max(12, width), initial_indent=first, subsequent_indent=rest,
                          break_long_words=True, break_on_hyphens=False) or [first]
    return tuple(Text(line, style=style) for line in lines)


def _leaves(h: Hypothesis, width: int) -> list[TextType]:
    """The rule rows the score is the clipped sum of, each with its weight (+0.25 …), then the cap and
    why; a hypothesis from an older record (no rows) shows its for/against texts. Then the next check."""
    leaves: list[TextType] = []
    if h.evidence:
        for row in h.evidence:
            leaves += _wrapped(f"{row.weight:+.2f} {row.text}", width, "green" if row.weight > 0 else "red")
        if h.status == "ruled out":
            leaves += _wrapped(f"ruled out: {h.cap_reason}", width, "red")
        elif h.cap_reason:
            leaves += _wrapped(f"score capped at {h.cap:.2f}: {h.cap_reason}", width, "yellow")
    else:
        for text in dedupe_evidence(h.for_):
            leaves += _wrapped(text, width, "green", "+ ")
        for text in dedupe_evidence(h.against):
            leaves += _wrapped(text, width, "red", "− ")
    if h.next_check:
        leaves += _next_check(h.next_check, width)
    return leaves


@functools.lru_cache(maxsize=256)
def _next_check(next_check: str, width: int) -> tuple[Text, ...]:
    """The next check's lines (kept: the same few checks every refresh; their split is regular expressions)."""
    check = split_next_check(next_check)
    lines = _wrap(check.shell, width, "bold cyan", "next: ", "      ")
    if check.key:
        lines += (Text.assemble(("      press ", "dim"), (check.key, "bold reverse"), (" to do it here", "dim")),)
    return lines


def _spec(diagnosis: Diagnosis, changelog: Sequence[str], width: int = 76) -> list[NodeSpec]:
    spec: list[NodeSpec] = []
    leaf_width = width - LEAF_INDENT
    if diagnosis.hypotheses:
        ordered = list(diagnosis.hypotheses)  # the engine's order: never re-sorted here
        shown = [h for h in ordered if not folds(h)]
        folded = [h for h in ordered if folds(h)]
        for rank, h in enumerate(shown, 1):
            spec.append(_node_of(rank, h, width))
        if folded:
            spec.append(_folded_node(tuple(folded), leaf_width))
    elif not diagnosis.observations:
        spec.append(NodeSpec(Text("no hypotheses and no observations yet", style="dim"), is_leaf=True))
    else:
        leaves = []
        for o in diagnosis.observations:
            leaves += _wrapped(f"{fmt.clock(o.at)} [{o.source}] {o.text}", leaf_width, "")
        spec.append(NodeSpec(Text("observations (no hypotheses yet)", style="bold"), "observations", True, tuple(leaves)))
    if changelog:
        leaves = []
        for line in changelog[-20:]:
            leaves += _wrapped(line, leaf_width, "")
        spec.append(NodeSpec(Text("changelog", style="bold"), "changelog", False, tuple(leaves)))
    return spec


_FOLDED_KEPT: list[tuple[tuple[Hypothesis, ...], int, NodeSpec]] = []  # the last "N more" node made


def _folded_node(folded: tuple[Hypothesis, ...], leaf_width: int) -> NodeSpec:
    """The "N more" node of the hypotheses folded under it; the last one made is kept while they are the
    same objects (the engine hands on an unchanged hypothesis as last tick's object: ~15 of them a
    refresh, each line formatted and looked up again before)."""
    if _FOLDED_KEPT:
        kept, width, node = _FOLDED_KEPT[0]
        if width == leaf_width and len(kept) == len(folded) and all(map(operator.is_, kept, folded)):
            return node
    leaves: list[TextType] = []
    for h in folded:
        why = f" — {h.against[0]}" if h.status == "ruled out" and h.against else ""
        leaves += _wrapped(f"{h.status}: {h.title}{why}", leaf_width, "dim")
    kinds = " / ".join(k for k, hit in (("unlikely", any(h.status == "unlikely" for h in folded)),
                                        ("ruled out", any(h.status == "ruled out" for h in folded))) if hit)
    node = NodeSpec(Text(f"{len(folded)} more ({kinds})", style="dim"), FOLDED, False, tuple(leaves))
    _FOLDED_KEPT[:] = [(folded, leaf_width, node)]
    return node


_NODES_KEPT: dict[str, tuple[int, Hypothesis, int, NodeSpec]] = {}  # the last node made, by hypothesis id


def _node_of(rank: int, h: Hypothesis, width: int) -> NodeSpec:
    """`_node`, with the node of the very hypothesis object shown last time at the same rank and width
    taken without a look-up: the engine hands on an unchanged hypothesis as last tick's object, and
    `_node`'s cache hashes its key, which for a hypothesis is every field of it, each evidence row's
    text included (a dozen of them each refresh, for nothing)."""
    kept = _NODES_KEPT.get(h.id)
    if kept is not None and kept[1] is h and kept[0] == rank and kept[2] == width:
        return kept[3]
    node = _node(rank, h, width)
    if len(_NODES_KEPT) > 256:  # ids seen over a long watch: dropped at once, made again by _node's cache
        _NODES_KEPT.clear()
    _NODES_KEPT[h.id] = (rank, h, width, node)
    return node


@functools.lru_cache(maxsize=64)
def _node(rank: int, h: Hypothesis, width: int) -> NodeSpec:
    """The node of hypothesis `h` at `rank`. Kept: most hypotheses are equal from one refresh to the
    next (the engine shares equal ones), and making their labels and leaves again to find them equal
    was a fifth of what a quiet refresh cost the UI thread. A hypothesis is a frozen dataclass: its
    hash and equality are its whole content, so a changed figure is a new key."""
    label, more = _label(rank, h, width - NODE_INDENT)
    leaves = [Text("  " + line, style="bold") for line in more] + _leaves(h, width - LEAF_INDENT)
    return NodeSpec(label, h.id, False, tuple(leaves))


def _label(rank: int, h: Hypothesis, width: int = 10_000) -> tuple[Text, list[str]]:
    """The node's line, and the rest of a title too long for it (shown first when it is expanded)."""
    kind = "finding " if getattr(h, "kind", "cause") == "finding" else ""
    text, rest = _title_lines(rank, h.status, kind, f"{h.title} ({h.score:.2f})", width)
    return text.copy(), list(rest)


@functools.lru_cache(maxsize=256)
def _title_lines(rank: int, status: str, kind: str, title: str, width: int) -> tuple[Text, tuple[str, ...]]:
    head = f"{rank}. {status:<9} {kind}"
    lines = textwrap.wrap(visible(title), max(12, width - len(head) - 2)) or [""]
    text = Text(f"{rank}. ")
    text.append(f"{status:<9}", style=STATUS_STYLE.get(status, ""))
    text.append(f" {kind}{lines[0]}" + (" …" if len(lines) > 1 else ""))
    return text, tuple(lines[1:])

"""The Processes pane's rows as plain data: tree order, collapse, filter-with-ancestors.

Kept apart from the widget so the rules (which rows a filter keeps, in which order) are pure and
testable, and so a tree of thousands of processes is flattened without touching textual. What
counts as idle is not decided here: it is the engine's rule, read from the Moment shown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Optional

from ..model.snapshot import ProcessInfo
from ..model.unavailable import is_known


@dataclass(frozen=True)
class Row:
    process: ProcessInfo
    depth: int
    has_children: bool
    collapsed: bool


SORT_KEYS: dict[str, Callable[[ProcessInfo], float | str]] = {
    "pid": lambda p: p.pid,
    "cpu": lambda p: -float(p.cpu_percent) if is_known(p.cpu_percent) else 0.0,
    "rss": lambda p: -int(p.rss_bytes) if is_known(p.rss_bytes) else 0,
    "pss": lambda p: -int(p.pss_bytes) if is_known(p.pss_bytes) else 0,
    "time": lambda p: -float(p.cpu_time_s) if is_known(p.cpu_time_s) else 0.0,
    "name": lambda p: p.name.lower(),
}


def matches(p: ProcessInfo, text: str) -> bool:
    text = text.lower()
    return text in str(p.pid) or text in p.name.lower() or text in " ".join(p.cmdline).lower()


def tree_rows(
    processes: Sequence[ProcessInfo],
    collapsed: frozenset[int] = frozenset(),
    filter_text: str = "",
    sort: str = "pid",
    reverse: bool = False,
    flat: bool = False,
) -> list[Row]:
    """Depth-first rows of the process tree; siblings sorted; collapsed subtrees hidden.

    With a filter, a row shows when it matches or one of its descendants does (ancestors are
    kept so the tree still reads as a tree); collapsing is ignored while filtering. `reverse`
    turns the sort around (htop's I); `flat` lists every process by the sort alone, no tree.
    """
    key = SORT_KEYS.get(sort, SORT_KEYS["pid"])
    if flat:
        ordered = sorted(processes, key=key, reverse=reverse)
        return [Row(p, 0, False, False) for p in ordered if not filter_text or matches(p, filter_text)]
    by_pid = {p.pid: p for p in processes}
    children: dict[int, list[ProcessInfo]] = {}
    roots: list[ProcessInfo] = []
    for p in processes:
        if p.ppid in by_pid and p.ppid != p.pid:
            children.setdefault(p.ppid, []).append(p)
        else:
            roots.append(p)
    keep: Optional[set[int]] = None
    if filter_text:
        keep = set()
        for p in processes:
            if matches(p, filter_text):
                pid: Optional[int] = p.pid
                while pid is not None and pid not in keep:
                    keep.add(pid)
                    parent = by_pid.get(pid)
                    pid = parent.ppid if parent is not None and parent.ppid in by_pid and parent.ppid != pid else None
    rows: list[Row] = []
    # a stack pops the last pushed first: push in the opposite order of the one shown
    stack: list[tuple[ProcessInfo, int]] = [(p, 0) for p in sorted(roots, key=key, reverse=not reverse)]
    visited: set[int] = set()
    while stack:
        p, depth = stack.pop()
        if p.pid in visited:
            continue
        visited.add(p.pid)
        if keep is not None and p.pid not in keep:
            continue
        kids = children.get(p.pid, [])
        is_collapsed = keep is None and p.pid in collapsed and bool(kids)
        rows.append(Row(p, depth, bool(kids), is_collapsed))
        if not is_collapsed:
            for kid in sorted(kids, key=key, reverse=not reverse):
                stack.append((kid, depth + 1))
    return rows

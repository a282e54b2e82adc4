"""The Processes pane's rows as plain data: tree order, collapse, filter-with-ancestors, idle time.

Kept apart from the widget so the rules (what counts as idle, which rows a filter keeps) are
pure and testable, and so a tree of thousands of processes is flattened without touching textual.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Optional

from ..model.snapshot import ProcessInfo, Snapshot
from ..model.unavailable import is_known

IDLE_AFTER_S = 30.0  # 0 % CPU and no CPU-time growth for this long: the row is marked idle


class IdleTracker:
    """Remembers, per PID, since when its CPU time has not grown (from successive snapshots)."""

    def __init__(self) -> None:
        self._last: dict[int, tuple[float, float]] = {}  # pid -> (cpu_time_s, unchanged since)

    def update(self, snapshot: Snapshot) -> None:
        seen = {}
        for p in snapshot.processes:
            if not is_known(p.cpu_time_s):
                continue
            cpu = float(p.cpu_time_s)
            prev = self._last.get(p.pid)
            if prev is None or abs(prev[0] - cpu) > 0.005:
                seen[p.pid] = (cpu, snapshot.taken_at)
            else:
                seen[p.pid] = prev
        self._last = seen

    def idle_for(self, pid: int, now: float) -> Optional[float]:
        """Seconds since the CPU time last grew, or None before two samples exist."""
        entry = self._last.get(pid)
        return None if entry is None else max(0.0, now - entry[1])

    @classmethod
    def over(cls, snapshots: Iterable[Snapshot]) -> IdleTracker:
        tracker = cls()
        for s in snapshots:
            tracker.update(s)
        return tracker


def is_idle(p: ProcessInfo, idle_for: Optional[float], threshold: float = IDLE_AFTER_S) -> bool:
    cpu = p.cpu_percent
    return is_known(cpu) and float(cpu) < 0.5 and idle_for is not None and idle_for >= threshold


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

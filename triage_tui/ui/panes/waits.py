"""The Waits section of the Stacks pane: who waits on whom, read from /proc before any stack capture.

A contained widget (the Stacks pane only places it): one line per process from render/waits_text,
a cycle in red, the process everyone waits on and network waits in yellow.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Optional

from rich.text import Text

from ...model.snapshot import ProcessInfo, Snapshot
from ...render.plain_text import visible
from ...render.waits_text import WaitLine, wait_lines
from . import RowsStatic, update_static

MAX_LINES = 12  # the pane also holds the stack capture: the rest is in `report`
_STYLES = {"cycle": "bold red", "hub": "yellow", "network": "yellow"}


def render_waits(snapshot: Snapshot, lines: Optional[list[WaitLine]] = None) -> Text:
    """The section's text; empty when there is nothing to say (waits not collected by this host).
    `lines`: wait_lines(snapshot), when the caller has them."""
    out = Text()
    lines = wait_lines(snapshot) if lines is None else lines
    source = snapshot.waits_source
    if not lines:
        if source.error is not None and source.error.reason != "waits were not read":
            out.append(f"waits: {visible(source.error)}\n", style="dim")
        return out
    out.append(f"waits ({source.blocked_threads} blocked threads, read from /proc in {source.duration_ms:.0f} ms)\n",
               style="bold")
    for line in lines[:MAX_LINES]:
        out.append(visible(line.text) + "\n", style=_STYLES.get(line.mark, ""))  # names, paths: the target's text
    if len(lines) > MAX_LINES:
        out.append(f"… {len(lines) - MAX_LINES} more processes (triage report lists all)\n", style="dim")
    out.append("\n")
    return out


def same_items(a: Sequence[object], b: Sequence[object]) -> bool:
    """The same objects in the same order: what the collectors hand on unchanged (an idle process's
    row and its carried waits are last refresh's objects), so a pane can skip what did not change."""
    return a is b or (len(a) == len(b) and all(map(operator.is_, a, b)))  # map: no Python frame per item


def _what_lines_read(rows: Sequence[ProcessInfo]) -> list[tuple[int, str, bool]]:
    """What `wait_lines` reads of the rows (the tree's order, each one's PID, name and whether it exited;
    the wait graph reads the live PIDs): a row made again for a new PSS figure or CPU time changes none."""
    return [(p.pid, p.name, p.exited) for p in rows]


class WaitsSection(RowsStatic):
    """The section widget; `show` repaints it only when its text changed, and works the lines out
    again only when the waits changed or the rows changed in what the lines read (1,000 waits: ~4 ms;
    in a watch's first minute the PSS figures arriving make hundreds of rows new a refresh, each the
    same process under the same name)."""

    _lines: Optional[list[WaitLine]] = None
    _inputs: tuple[Sequence[object], Sequence[object]] = ((), ())
    _read: Optional[list[tuple[int, str, bool]]] = None  # _what_lines_read of the rows the lines were made from

    def show(self, snapshot: Snapshot) -> None:
        waits, rows = self._inputs
        if self._lines is None or not same_items(waits, snapshot.waits) or not same_items(rows, snapshot.processes):
            read = _what_lines_read(snapshot.processes)
            if self._lines is None or not same_items(waits, snapshot.waits) or read != self._read:
                self._lines = wait_lines(snapshot)
            self._inputs, self._read = (snapshot.waits, snapshot.processes), read
        text = render_waits(snapshot, self._lines)
        self.display = bool(text.plain)
        update_static(self, text)

"""The Waits section of the Stacks pane: who waits on whom, read from /proc before any stack capture.

A contained widget (the Stacks pane only places it): one line per process from render/waits_text,
a cycle in red, the process everyone waits on and network waits in yellow.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...model.snapshot import Snapshot
from ...render.plain_text import visible
from ...render.waits_text import wait_lines
from . import update_static

MAX_LINES = 12  # the pane also holds the stack capture: the rest is in `report`
_STYLES = {"cycle": "bold red", "hub": "yellow", "network": "yellow"}


def render_waits(snapshot: Snapshot) -> Text:
    """The section's text; empty when there is nothing to say (waits not collected by this host)."""
    out = Text()
    lines = wait_lines(snapshot)
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


class WaitsSection(Static):
    """The section widget; `show` repaints it only when its text changed."""

    def show(self, snapshot: Snapshot) -> None:
        text = render_waits(snapshot)
        self.display = bool(text.plain)
        update_static(self, text)

"""The panes' figures: model/text_format.py's "cell" register (sizes, durations, clock, the reason of an
Unavailable), and what only a pane draws (MiB like nvidia-smi, percentages, bars, sparklines, idle-for).

Pure functions (no textual import) so they can be tested without an app. An Unavailable
figure renders as "n/a" in a cell; panes show its reason where there is room.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from ..model import text_format
from ..model.text_format import CELL, Figure, clock, reason
from ..model.unavailable import is_known

__all__ = ["bar", "clock", "duration", "idle_for", "mib", "percent", "ratio", "reason", "size", "sparkline"]

SPARK = "▁▂▃▄▅▆▇█"


def size(value: Figure) -> str:
    """Bytes as a short figure: 425G, 18M, 512B (powers of 1024, like `free -h`)."""
    return text_format.size(value, CELL)


def mib(value: Figure) -> str:
    """Bytes as MiB, the unit nvidia-smi prints (76017MiB)."""
    if not is_known(value):
        return "n/a"
    return f"{int(value) // (1024 * 1024)}MiB"


def duration(seconds: Figure) -> str:
    """Seconds as 45s, 5m02s, 3h04m, 2d03h."""
    return text_format.duration(seconds, CELL)


def idle_for(seconds: float) -> str:
    """Idle time as coarse as it is read: 7s, then 10s steps (40s), whole minutes (12m), 3h04m, 2d03h.

    Shown on every row of the process table: at one-second precision every idle row's cell changes
    on every refresh, and repainting them is most of what the app costs while it watches a quiet
    tree. A figure reads as "at least": 40s is 40 to 49 s."""
    s = int(seconds)
    if s < 10:
        return f"{s}s"
    if s < 60:
        return f"{s // 10 * 10}s"
    if s < 3600:
        return f"{s // 60}m"
    return duration(s)


def percent(value: Figure, digits: int = 0) -> str:
    if not is_known(value):
        return "n/a"
    return f"{float(value):.{digits}f}%"


def bar(fraction: Optional[float], width: int = 10) -> str:
    """A fill bar: ██████░░░░. None (unknown) gives a bar of '?'."""
    if fraction is None:
        return "?" * width
    fraction = max(0.0, min(1.0, fraction))
    full = round(fraction * width)
    return "█" * full + "░" * (width - full)


def ratio(part: Figure, whole: Figure) -> Optional[float]:
    if is_known(part) and is_known(whole) and float(whole) > 0:
        return float(part) / float(whole)
    return None


def sparkline(values: Sequence[Optional[float]], width: int = 12, top: Optional[float] = None) -> str:
    """Last `width` values as ▁▂▃▄▅▆▇█; an unknown sample shows as a space."""
    values = list(values)[-width:]
    known = [v for v in values if v is not None]
    peak = top if top is not None else (max(known) if known else 0.0)
    out = []
    for v in values:
        if v is None:
            out.append(" ")
        elif peak <= 0:
            out.append(SPARK[0])
        else:
            out.append(SPARK[min(len(SPARK) - 1, int(v / peak * (len(SPARK) - 1) + 0.5))])
    return "".join(out)

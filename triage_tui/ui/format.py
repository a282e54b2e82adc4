"""Plain-text formatting of figures for the panes: sizes, durations, bars, sparklines.

Pure functions (no textual import) so they can be tested without an app. An Unavailable
figure renders as "n/a" in a cell; panes show its reason where there is room.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Optional

from ..model.unavailable import Unavailable, is_known

SPARK = "▁▂▃▄▅▆▇█"


def size(value: object) -> str:
    """Bytes as a short human figure: 425G, 18M, 512K (powers of 1024, like `free -h`)."""
    if not is_known(value):
        return "n/a"
    n = float(value)  # type: ignore[arg-type]
    for unit in ("B", "K", "M", "G", "T", "P"):
        if abs(n) < 1024 or unit == "P":
            if unit == "B":
                return f"{int(n)}B"
            return f"{n:.1f}{unit}" if abs(n) < 10 else f"{n:.0f}{unit}"
        n /= 1024
    return f"{n:.0f}P"


def mib(value: object) -> str:
    """Bytes as MiB, the unit nvidia-smi prints (76017MiB)."""
    if not is_known(value):
        return "n/a"
    return f"{int(value) // (1024 * 1024)}MiB"  # type: ignore[arg-type]


def duration(seconds: object) -> str:
    """Seconds as 45s, 5m02s, 3h04m, 2d03h."""
    if not is_known(seconds):
        return "n/a"
    s = int(float(seconds))  # type: ignore[arg-type]
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d{(s % 86400) // 3600:02d}h"


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


def percent(value: object, digits: int = 0) -> str:
    if not is_known(value):
        return "n/a"
    return f"{float(value):.{digits}f}%"  # type: ignore[arg-type]


def clock(epoch: float) -> str:
    """Wall-clock time of day in the local zone, as a person reads it in a terminal."""
    return time.strftime("%H:%M:%S", time.localtime(epoch))


def bar(fraction: Optional[float], width: int = 10) -> str:
    """A fill bar: ██████░░░░. None (unknown) gives a bar of '?'."""
    if fraction is None:
        return "?" * width
    fraction = max(0.0, min(1.0, fraction))
    full = round(fraction * width)
    return "█" * full + "░" * (width - full)


def ratio(part: object, whole: object) -> Optional[float]:
    if is_known(part) and is_known(whole) and float(whole) > 0:  # type: ignore[arg-type]
        return float(part) / float(whole)  # type: ignore[arg-type]
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


def reason(value: object) -> str:
    """The why of an Unavailable, or '' for a known value."""
    if isinstance(value, Unavailable):
        return value.reason + (f" ({value.hint})" if value.hint else "")
    return ""

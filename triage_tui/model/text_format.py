"""How every face writes a figure: times of day, sizes, durations and the unavailable text.

One module so the app, the Markdown/JSON report, `triage stacks`, `triage diagnose`, the engine's
sentences and the collectors' notes agree: the same byte count never reads "33 GiB" in one place and
"33.0 GiB" or "33G" in another. It sits in the model because collectors (a stale-GPU note) and the engine
(hypothesis texts, the changelog) write figures too, and they may not import render/ or ui/.

Two registers:
- "sentence" (the default): inside prose a person reads: "415 GiB", "3.1 TiB", "512 B"; "850 ms",
  "2.5 s", "45 s", "12 min 5 s", "3 h 4 min", "2 d 3 h"; "unavailable: reason (hint: …)".
- "cell": a table cell or a short pane line, where width counts: "415G", "3.1T", "512B"; "45s",
  "12m05s", "3h04m", "2d03h"; "n/a" (the pane says the reason where it has room, with `reason()`).

Both registers round alike: one decimal below 10 units, whole units from 10 (`free -h`), powers of 1024.
Times of day are the same in both registers: `clock()` is HH:MM:SS in the local zone; `stamp()` adds
the date and zone (a report's header); `file_stamp()` is for file names.

Standard library only; pure functions.
"""

from __future__ import annotations

import time
from typing import Literal, Optional, Union

from .unavailable import Unavailable

Register = Literal["sentence", "cell"]
SENTENCE: Register = "sentence"
CELL: Register = "cell"

_SIZE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
NOT_READ = "—"  # None: a figure that has no value here (not an error: e.g. no limit set)


def unavailable(value: Unavailable, register: Register = SENTENCE) -> str:
    """"unavailable: permission denied (hint: run as root)"; in a cell "n/a"."""
    return "n/a" if register == CELL else str(value)


def reason(value: object) -> str:
    """The why of an Unavailable without the "unavailable:" prefix ("permission denied (hint: …)"),
    or "" for a known value: what a pane writes next to its "n/a" cells."""
    return value.explained if isinstance(value, Unavailable) else ""


Figure = Optional[Union[float, Unavailable]]  # int passes as float; None: no value here (not an error)


def _missing(value: Optional[Unavailable], register: Register) -> str:
    if value is None:
        return "n/a" if register == CELL else NOT_READ
    return unavailable(value, register)


def size(value: Figure, register: Register = SENTENCE) -> str:
    """A byte count: "415 GiB", "1.5 GiB", "330 MiB", "512 B"; in a cell "415G", "1.5G", "512B"."""
    if value is None or isinstance(value, Unavailable):
        return _missing(value, register)
    n = float(value)
    for unit in _SIZE_UNITS:
        if abs(n) < 1024 or unit == _SIZE_UNITS[-1]:
            break
        n /= 1024
    short = unit[0] if register == CELL else unit
    sep = "" if register == CELL else " "
    if unit == "B":
        return f"{int(n)}{sep}{short}"
    return f"{n:.1f}{sep}{short}" if abs(n) < 10 else f"{n:.0f}{sep}{short}"


def duration(seconds: Figure, register: Register = SENTENCE) -> str:
    """A span of time: "850 ms", "2.5 s", "45 s", "12 min 5 s", "3 h 4 min", "2 d 3 h";
    in a cell whole seconds: "45s", "12m05s", "3h04m", "2d03h"."""
    if seconds is None or isinstance(seconds, Unavailable):
        return _missing(seconds, register)
    s = float(seconds)
    if register == CELL:
        whole = int(s)
        if whole < 60:
            return f"{whole}s"
        if whole < 3600:
            return f"{whole // 60}m{whole % 60:02d}s"
        if whole < 86400:
            return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
        return f"{whole // 86400}d{whole % 86400 // 3600:02d}h"
    if s < 1:
        return f"{s * 1000:.0f} ms"
    if s < 10:
        return f"{s:.1f} s"
    whole = int(round(s))
    if whole < 120:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s" if whole % 60 else f"{whole // 60} min"
    if whole < 86400:
        return f"{whole // 3600} h {whole % 3600 // 60} min" if whole % 3600 // 60 else f"{whole // 3600} h"
    return f"{whole // 86400} d {whole % 86400 // 3600} h" if whole % 86400 // 3600 else f"{whole // 86400} d"


def clock(epoch: float) -> str:
    """Time of day in the local zone, "14:06:51": what a person on the node compares with its logs."""
    return time.strftime("%H:%M:%S", time.localtime(epoch))


def stamp(epoch: float) -> str:
    """Date, time and zone, "2026-12-01 14:06:51 UTC": a report's first line, read days later elsewhere."""
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(epoch))


def file_stamp(epoch: float) -> str:
    """"20261201-140651": sorts by time in a directory listing and needs no quoting in a shell."""
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(epoch))

"""How figures read in plain text: sizes in GiB/MiB, durations, and explicit unavailable values."""

from __future__ import annotations

from typing import Optional

from ..model.unavailable import Unavailable

KIB = 1024
MIB = 1024**2
GIB = 1024**3
TIB = 1024**4


def unavailable_text(value: Unavailable) -> str:
    """"unavailable: reason (hint)": the one way a missing figure is printed."""
    return f"unavailable: {value.reason} ({value.hint})" if value.hint else f"unavailable: {value.reason}"


def size(value: object) -> str:
    """1.5 GiB, 330 MiB, 12 KiB, 512 B; an Unavailable prints its reason."""
    if isinstance(value, Unavailable):
        return unavailable_text(value)
    if value is None:
        return "—"
    n = float(value)  # type: ignore[arg-type]
    for unit, scale in (("TiB", TIB), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(n) >= scale:
            q = n / scale
            return f"{q:.1f} {unit}" if q < 100 else f"{q:.0f} {unit}"
    return f"{n:.0f} B"


def duration(value: object) -> str:
    """0.4 s, 28.0 s, 12 m 05 s, 3 h 04 m."""
    if isinstance(value, Unavailable):
        return unavailable_text(value)
    if value is None:
        return "—"
    s = float(value)  # type: ignore[arg-type]
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{int(s // 60)} m {int(s % 60):02d} s"
    return f"{int(s // 3600)} h {int(s % 3600 // 60):02d} m"


def number(value: object, fmt: str = "{}", suffix: str = "") -> str:
    if isinstance(value, Unavailable):
        return unavailable_text(value)
    if value is None:
        return "—"
    return fmt.format(value) + suffix


def ratio(a: object, b: object) -> Optional[float]:
    """a / b when both are known and b is positive."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0:
        return float(a) / float(b)
    return None

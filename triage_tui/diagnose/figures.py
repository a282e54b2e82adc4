"""How the engine writes figures in the sentences a person reads (sizes, durations, percentages)."""

from __future__ import annotations

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def fmt_bytes(n: float) -> str:
    """Binary units like `free -h`: 415 GiB, 3.1 TiB, 130 MiB."""
    value = float(n)
    for unit in _UNITS:
        if abs(value) < 1024 or unit == _UNITS[-1]:
            if unit == "B":
                return f"{int(value)} B"
            return f"{value:.1f} {unit}" if abs(value) < 10 else f"{value:.0f} {unit}"
        value /= 1024
    return f"{value:.0f} PiB"  # pragma: no cover - loop always returns


def fmt_s(seconds: float) -> str:
    """120 s, 5 min 3 s, 2 h 4 min: short enough for a changelog line."""
    s = int(round(seconds))
    if s < 120:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    return f"{s // 3600} h {(s % 3600) // 60} min"


def quote(text: str, limit: int = 80) -> str:
    """A log line or frame cut to fit one line, in quotes."""
    text = " ".join(text.split())
    return "'" + (text if len(text) <= limit else text[: limit - 1] + "…") + "'"

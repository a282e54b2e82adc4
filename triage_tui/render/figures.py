"""How figures read in the plain-text faces: model/text_format.py's sentence register, plus `number` and `ratio`."""

from __future__ import annotations

from typing import Optional

from ..model.text_format import NOT_READ, duration, size
from ..model.text_format import unavailable as unavailable_text
from ..model.unavailable import Unavailable

__all__ = ["duration", "number", "ratio", "size", "unavailable_text"]


def number(value: object, fmt: str = "{}", suffix: str = "") -> str:
    if isinstance(value, Unavailable):
        return unavailable_text(value)
    if value is None:
        return NOT_READ
    return fmt.format(value) + suffix


def ratio(a: object, b: object) -> Optional[float]:
    """a / b when both are known and b is positive."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0:
        return float(a) / float(b)
    return None

"""How the engine writes figures in the sentences a person reads: model/text_format.py's sentence
register (fmt_bytes, fmt_s are its size and duration), and quoted log lines or frames."""

from __future__ import annotations

from ..model.text_format import duration as fmt_s
from ..model.text_format import size as fmt_bytes

__all__ = ["fmt_bytes", "fmt_s", "quote"]


def quote(text: str, limit: int = 80) -> str:
    """A log line or frame cut to fit one line, in quotes."""
    text = " ".join(text.split())
    return "'" + (text if len(text) <= limit else text[: limit - 1] + "…") + "'"

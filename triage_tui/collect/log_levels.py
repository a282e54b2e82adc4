"""Log line levels: info, warning, error or traceback, from a table of patterns (what `grep -E
'ERROR|Traceback|NCCL WARN'` over a log would pick out), with Python tracebacks followed across lines."""

from __future__ import annotations

import re

# (pattern, level), first match wins. Tracebacks are also tracked across lines (see LineClassifier).
LEVEL_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), level)
    for p, level in (
        (r"Traceback \(most recent call last\)", "traceback"),
        (r"Watchdog caught collective operation timeout", "error"),
        (r"CUDA error|NCCL error|cudaError", "error"),
        (r"NCCL WARN", "warning"),  # NCCL's own warnings, whatever words follow
        (r"\bSegmentation fault\b|\bcore dumped\b|\bKilled\b|\bAborted\b", "error"),
        (r"\b(out of memory|OutOfMemory|OOM)\b", "error"),
        (r"\btimed out\b|\bTimeout\b|\btimeout\b.*\b(exceed|expired|reached)", "error"),
        (r"\b(ERROR|FATAL|CRITICAL|Fatal)\b|\berror:", "error"),
        (r"\w*(Error|Exception)\b", "error"),
        (r"\b(WARNING|WARN|Warning)\b|\w+Warning\b|\bwarning:", "warning"),
    )
)


def classify_line(text: str) -> str:
    """info | warning | error | traceback, from the pattern table."""
    for pattern, level in LEVEL_PATTERNS:
        if pattern.search(text):
            return level
    return "info"


class LineClassifier:
    """Marks lines, remembering whether we are inside a Python traceback.

    Inside a traceback the indented lines ("  File ...", code) are `traceback`; the first line that
    is not indented ends it (the exception line, "ValueError: ..."), marked `error`.
    """

    def __init__(self) -> None:
        self.in_traceback = False

    def level(self, text: str) -> str:
        level = classify_line(text)
        if level == "traceback":
            self.in_traceback = True
            return level
        if self.in_traceback:
            if text[:1] in (" ", "\t") or not text.strip():
                return "traceback"
            self.in_traceback = False
            return "error"
        return level


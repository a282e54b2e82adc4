"""A pasted log tail → LogTail (levels from the line text; no timing: a paste says nothing about silence)."""

from __future__ import annotations

import re

from ..model.snapshot import LogLine, LogTail
from ..model.unavailable import Unavailable

_LEVEL = (("traceback", re.compile(r"^Traceback \(most recent call last\)|^\s+File \".*\", line \d+")),
          ("error", re.compile(r"\b(ERROR|CRITICAL|FATAL)\b|(?:Error|Exception)\b:|\bError\b")),
          ("warning", re.compile(r"\b(WARNING|WARN|Warning)\b")))
LOG_LINE = re.compile(
    r"^\s*+(\[?\d{4}-\d\d-\d\d|\[?\d\d:\d\d:\d\d|\[\d{4}|\[rank\d+\]|\(\w+ pid=\d+\)|(INFO|WARNING|ERROR|DEBUG|CRITICAL)\b"
    r"|\[[WEIFD]\s?[\w.]+:\d+\]|\[[WEIFD]\d{4}|[WEIF]\d{4} \d\d:|Traceback \(most|\w*(Error|Exception): |Loading |[^|]{0,200}?\d{1,3}%\|)"
)


def level_of(line: str) -> str:
    for level, pattern in _LEVEL:
        if pattern.search(line):
            return level
    return "info"


def parse_log_text(text: str, source: str = "pasted log") -> LogTail:
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    return LogTail(path=source, source=source, lines=tuple(LogLine(ln, 0.0, level_of(ln)) for ln in lines),
                   size_bytes=len(text.encode()), seconds_since_last_byte=Unavailable("pasted text: no timing"),
                   last_byte_at=Unavailable("pasted text: no timing"))

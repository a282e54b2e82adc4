"""What a log line says: a finished progress bar, a traceback, a timeout, an NCCL watchdog.

A table of (observation id, description, pattern) scanned over the tail; the first table row
that matches a line wins, so the specific patterns come before the generic ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# (observation id, what it means, pattern)
LINE_SIGNALS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("log-nccl-timeout", "NCCL watchdog timeout",
     re.compile(r"watchdog caught collective operation timeout|ProcessGroupNCCL.*time(d)? ?out|NCCL.*timeout", re.I)),
    ("log-barrier-timeout", "barrier / store timeout",
     re.compile(r"barrier.*time(d)? ?out|timed out.*barrier|monitoredBarrier|Socket Timeout|DistStoreError", re.I)),
    ("log-shm-broadcast", "\"no shared memory broadcast block\" warning (a hang OR a long compile)",
     re.compile(r"No available shared memory broadcast block found", re.I)),
    ("log-rendezvous", "rendezvous wait",
     re.compile(r"TCPStore|rendezvous|init_process_group|Waiting for .*(master|peers|rank)|connect.*refused.*(master|store)", re.I)),
    ("log-cuda-oom", "CUDA out of memory", re.compile(r"CUDA out of memory|OutOfMemoryError", re.I)),
    ("log-killed", "a process was killed", re.compile(r"\bKilled\b|SIGKILL|exitcode\s*:?\s*-9|signal 9", re.I)),
    ("log-traceback", "a traceback", re.compile(r"^Traceback \(most recent call last\)|^\w*(Error|Exception): ")),
    ("log-timeout", "a timeout", re.compile(r"time(d)? ?out", re.I)),
)

_PROGRESS = re.compile(r"(\d{1,3}(?:\.\d+)?)\s?%|(\d+)\s*/\s*(\d+)\s*\[")


def scan_log_lines(lines: Iterable[str]) -> list[tuple[str, str, str]]:
    """(id, description, last matching line) for each signal found, one per id."""
    found: dict[str, tuple[str, str, str]] = {}
    for line in lines:
        for oid, text, pattern in LINE_SIGNALS:
            if pattern.search(line.strip()):
                found[oid] = (oid, text, line.strip())
                break
    return list(found.values())


def progress_percent(line: str) -> float | None:
    """The percentage of a progress bar line (tqdm `100%|…| 64/64 [...]` or `Loading 12/64 [`), else None."""
    m = _PROGRESS.search(line)
    if not m:
        return None
    if m.group(1) is not None:
        return float(m.group(1))
    done, total = int(m.group(2)), int(m.group(3))
    return 100.0 * done / total if total else None


def classify_last_line(line: str, level: str = "info") -> str:
    """progress-done | progress | traceback | timeout | error | text | empty."""
    text = line.strip()
    if not text:
        return "empty"
    # a tqdm bar redrawn with \r leaves several frames on one line: the last frame counts
    text = text.split("\r")[-1].strip() or text
    pct = progress_percent(text)
    if pct is not None:
        return "progress-done" if pct >= 100 else "progress"
    if level == "traceback" or text.startswith(("Traceback", "File \"")) or re.match(r"^\w*(Error|Exception)\b", text):
        return "traceback"
    if re.search(r"time(d)? ?out", text, re.I):
        return "timeout"
    return "error" if level == "error" else "text"

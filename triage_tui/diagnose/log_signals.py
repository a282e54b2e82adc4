"""What a log line says: a finished progress bar, a traceback, a timeout, an NCCL watchdog.

The lexicon's rows (parse/signal_lexicon.py) scanned over the tail: every specific row that matches a line counts, a
generic one only when no specific row did.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..parse.signal_lexicon import LEXICON, scan_line

# (observation id, what it means, pattern): the lexicon's rows (parse/signal_lexicon.py holds them with their sources)
LINE_SIGNALS: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple((s.id, s.means, s.pattern) for s in LEXICON)

_PROGRESS = re.compile(r"(\d{1,3}(?:\.\d{1,3})?)\s?%|(\d{1,9})\s{0,4}/\s{0,4}(\d{1,9})\s{0,4}\[")


# a training or serving loop's own counter ("step 80", "iter 12", "epoch 3", "batch=40"): when it rises during the
# watch the loop is moving; a heartbeat or a watchdog repeats a line or counts seconds, never steps
_STEP_COUNTER = re.compile(r"(?<![A-Za-z])(step|iter|iteration|epoch|batch)s?\b[\s:=#\[]{0,3}(\d{1,12})", re.I)

GENERIC = frozenset(s.id for s in LEXICON if s.generic)  # only when nothing more specific matched the line


def scan_log_lines(lines: Iterable[str]) -> list[tuple[str, str, str]]:
    """(id, description, last matching line) for each signal found, one per id; a line may carry several."""
    found: dict[str, tuple[str, str, str]] = {}
    for line in lines:
        for sig in scan_line(line):  # the paste and the live tail read a line the same way
            found[sig.id] = (sig.id, sig.means, line.strip())
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


def step_counter(lines: Iterable[str]) -> tuple[str, int] | None:
    """The last loop counter in the lines ("step", 80) — the newest line that names one — else None."""
    found = None
    for line in lines:
        m = _STEP_COUNTER.search(line)
        if m:
            found = (m.group(1).lower(), int(m.group(2)))
    return found

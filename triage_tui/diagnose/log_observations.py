"""Observations from the logs: silent (and after what), active, progress advancing, a step counter rising, and
the signal lines in a tail (log_signals.py classifies the lines).

Pure functions over `Snapshot`s (oldest first); nothing here reads the machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from ..model.diagnosis import Observation
from ..model.snapshot import Snapshot
from ..model.unavailable import is_known
from .figures import fmt_s, quote
from .log_signals import classify_last_line, progress_percent, scan_log_lines, step_counter
from .make_observation import obs as _obs
from .thresholds import Thresholds

def log_observations(history: Sequence[Snapshot], th: Thresholds) -> list[Observation]:
    now = history[-1]
    out: list[Observation] = []
    start = history[0].taken_at
    watched = now.taken_at - start
    for tail in now.logs:
        if tail.error is not None or (not tail.lines and not tail.partial.strip()):
            continue  # an empty file says nothing: neither activity nor silence
        last = tail.partial.strip() or (tail.lines[-1].text if tail.lines else "")
        kind = classify_last_line(last, tail.lines[-1].level if tail.lines and not tail.partial.strip() else "info")
        silent = tail.seconds_since_last_byte
        # written during the watch (an old line, or an empty file, is no activity); silent for the whole of
        # a watch long enough to judge counts as silent even before the silence threshold
        written_at = tail.last_byte_at
        grew = bool(last) and is_known(written_at) and written_at > start
        quiet_watch = watched >= th.idle_after_s and is_known(silent) and silent >= watched
        if is_known(silent) and kind == "progress-done" and (
                silent >= min(th.silent_after_s, th.idle_after_s) or quiet_watch):
            # a finished bar followed by silence says "the next phase never reported" sooner than plain silence
            out.append(_obs("log-silent-after-load", f"log silent {fmt_s(silent)} since {quote(last, 60)}: "
                            "loading finished, the next phase never reported", "logs", now.taken_at))
        if is_known(silent) and (silent >= th.silent_after_s or quiet_watch):
            after = {"progress-done": "a progress bar at 100 %", "traceback": "a traceback",
                     "timeout": "a timeout message", "progress": "an unfinished progress bar"}.get(kind, "")
            text = f"log {tail.source} silent for {fmt_s(silent)}; last line {quote(last)}"
            out.append(_obs("log-silent", text + (f" ({after})" if after else ""), "logs", now.taken_at,
                            silent_s=round(silent, 1), last_line=last[:200], last_kind=kind))
        elif not is_known(silent) and kind == "progress-done":  # a paste: no timing, but where it ends says much
            out.append(_obs("log-ends-after-load", f"the log ends at {quote(last, 60)}: loading finished, nothing after",
                            "logs", now.taken_at))
        elif not is_known(silent) and _progress_in_lines(tail.lines):  # a paste: no timing, but the bar moved
            out.append(_obs("log-progress", f"progress advancing in {tail.source}: {quote(last)}", "logs", now.taken_at))
        elif is_known(silent) and (grew or th.one_look):
            out.append(_obs("log-active", f"log {tail.source} wrote {fmt_s(silent)} ago, during the watch: "
                            f"{quote(last)}", "logs", now.taken_at, silent_s=round(silent, 1)))
            steps = _steps_advanced(history, tail.path)
            if kind == "progress" and _progress_moving(history, tail.path):
                out.append(_obs("log-progress", f"progress advancing in {tail.source}: {quote(last)}", "logs", now.taken_at))
            elif steps is not None:
                word, first, latest = steps
                out.append(_obs("log-steps-advancing", f"{word} counter advancing in {tail.source} during the watch: "
                                f"{word} {first} → {latest}; last line {quote(last)}", "logs", now.taken_at,
                                counter=word, counter_from=first, counter_to=latest))
        out.extend(_line_signals(tail.lines, tail.source, now.taken_at))
    return out


def _line_signals(lines: Sequence, source: str, at: float) -> list[Observation]:
    out: list[Observation] = []
    for oid, text, line in scan_log_lines([ln.text for ln in lines]):
        out.append(_obs(oid, f"{text} in {source}: {quote(line)}", "logs", at, line=line[:200]))
    return out


def _progress_in_lines(lines: Sequence) -> bool:
    """The tail's progress bars rise and the last is short of 100 %."""
    values = [v for v in (progress_percent(ln.text.split("\r")[-1]) for ln in lines[-20:]) if v is not None]
    return len(values) >= 2 and values[-1] < 100 and values[-1] > values[0]


def _progress_moving(history: Sequence[Snapshot], path: str) -> bool:
    seen: set[str] = set()
    for snap in history[-4:]:
        for tail in snap.logs:
            if tail.path == path:
                seen.add(tail.partial.strip() or (tail.lines[-1].text if tail.lines else ""))
    return len(seen) > 1 or len(history) == 1


def _steps_advanced(history: Sequence[Snapshot], path: str) -> Optional[tuple[str, int, int]]:
    """(word, first, last) when the log's loop counter rose between the first and the last look of the watch."""
    counters = []
    for snap in history:
        for tail in snap.logs:
            if tail.path == path and tail.lines:
                found = step_counter(ln.text for ln in tail.lines[-20:])
                if found is not None:
                    counters.append(found)
    if len(counters) < 2 or counters[0][0] != counters[-1][0] or counters[-1][1] <= counters[0][1]:
        return None
    return counters[-1][0], counters[0][1], counters[-1][1]



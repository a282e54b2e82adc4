"""`py-spy top --pid N` as copied from its screen → ProcessStacks: a flat profile, not stacks.

    Collecting samples from '/usr/bin/python3 waiter.py' (python v3.11.7)
    Total Samples 150
    GIL: 100.00%, Active: 100.00%, Threads: 3

      %Own   %Total  OwnTime  TotalTime  Function (filename)
    100.00% 100.00%    3.00s     3.00s   spin (waiter.py)
      0.00%   0.00%   0.020s    0.020s   worker (waiter.py)

py-spy top counts each sample against the function at the top of a stack (%Own) and every function below it
(%Total), so a row's own share is where threads were found, and nothing tells which rows are one stack. Each row
with an own share of at least MIN_OWN percent becomes one "thread" whose only frame is that function: what the
process was doing, never a call chain. py-spy top hides idle threads unless run with --idle, so a row is "active"
when the header's Active share is at least half and "idle" when it is under a tenth.
"""

from __future__ import annotations

import re
from typing import Optional

from ..model.stacks import Frame, ProcessStacks, ThreadStack
from .text_errors import ParseError

HEADER = re.compile(r"^%Own\s+%Total\s+OwnTime\s+TotalTime\s+Function")
ROW = re.compile(r"^(\d{1,3}\.\d{1,2})%\s+(\d{1,3}\.\d{1,2})%\s+([\d.]{1,12})(?:s|ms|us)?\s+([\d.]{1,12})(?:s|ms|us)?\s+(\S.{0,400})$")
COLLECTING = re.compile(r"^Collecting samples from '(.{0,1000})' \(python v[\d.]+\)")
_SHARES = re.compile(r"GIL:\s*([\d.]{1,6})\s*%,\s*Active:\s*([\d.]{1,6})\s*%(?:,\s*Threads:\s*(\d{1,6}))?")
MIN_OWN = 5.0


def is_start(line: str) -> bool:
    s = line.strip()
    return bool(HEADER.match(s) or COLLECTING.match(s) or (s.startswith("GIL:") and _SHARES.match(s)))


def is_line(line: str) -> bool:
    s = line.strip()
    return bool(is_start(s) or ROW.match(s) or s.startswith(("Total Samples", "Press Control-C")))


def _frame(text: str) -> Frame:
    """`spin (waiter.py)`, `wait (threading.py:320)`, `<module> (train.py:12)` split by hand."""
    cut = text.rfind(" (")
    if cut <= 0 or not text.endswith(")"):
        return Frame(function=text.strip())
    where = text[cut + 2:-1]
    path, _, num = where.rpartition(":")
    return Frame(function=text[:cut].strip(), file=path if num.isdecimal() else where, line=int(num) if num.isdecimal() else 0)


def parse_pyspy_top(text: str) -> tuple[ProcessStacks, ...]:
    active: Optional[float] = None
    name = ""
    rows: list[tuple[float, Frame]] = []
    for line in text.splitlines():
        s = line.strip()
        m = COLLECTING.match(s)
        if m:
            name = m.group(1)
            continue
        shares = _SHARES.search(s)
        if shares and s.startswith("GIL:"):
            active = float(shares.group(2))
            continue
        r = ROW.match(s)
        if r and float(r.group(1)) >= MIN_OWN:
            rows.append((float(r.group(1)), _frame(r.group(5))))
    if not rows:
        raise ParseError(f"no py-spy top row with at least {MIN_OWN:g} % own time")
    status = "unknown" if active is None else "active" if active >= 50 else "idle" if active < 10 else "unknown"
    rows.sort(key=lambda r: -r[0])
    threads = tuple(ThreadStack(pid=0, tid=i + 1, name=f"{own:g} % of samples", status=status, frames=(frame,))
                    for i, (own, frame) in enumerate(rows))
    return (ProcessStacks(pid=0, name=name, source="py-spy top", threads=threads),)

"""Python faulthandler tracebacks (`faulthandler.dump_traceback(all_threads=True)`, SIGABRT dumps) → ProcessStacks.

    Thread 0x00007f3a8c1ff640 (most recent call first):
      File "/usr/lib/python3.10/threading.py", line 324 in wait
    Current thread 0x00007f3a9d4b5740 (most recent call first):
      File "train.py", line 12 in main

`dump_traceback_later` starts with `Timeout (0:02:00)!`, `all_threads=False` names the thread `Stack (most recent
call first):`; a paste often loses the indentation (and the thread line) of either, so a frame line is read at
any indentation, and frames after a `Timeout` line with no thread line are one unnamed thread.

A block of consecutive thread sections is one process; its PID comes from a nearby `PID 123` /
`pid=123` / `Process 123` line when the paste has one, else blocks are numbered 1, 2, ...
"""

from __future__ import annotations

import re

from ..model.stacks import Frame, ProcessStacks, ThreadStack
from .text_errors import ParseError

THREAD = re.compile(r"^(Current thread|Thread) (0x[0-9a-fA-F]+) \(most recent call first\):\s*$")
STACK = re.compile(r"^Stack \(most recent call first\):\s*$")
TIMEOUT = re.compile(r"^Timeout \(\d{1,4}:\d\d:\d\d(?:\.\d{1,9})?\)!\s*$")
# faulthandler writes `line N in f` (a traceback writes `line N, in f`): no comma, so never a traceback's line
FRAME = re.compile(r'^\s*File "(.{0,2000})", line (\d{1,9}) in (\S{1,300})\s*$')
_PID = re.compile(r"(?:\bpid\b|\bProcess\b)\s*[:=#]?\s*(\d+)", re.I)


def parse_faulthandler(text: str) -> tuple[ProcessStacks, ...]:
    """Raises ParseError when no `Thread 0x... (most recent call first):` line is found."""
    blocks: list[tuple[int, list[ThreadStack]]] = []
    thread: dict | None = None
    frames: list[Frame] = []
    gap = True  # a line that is not part of a dump was seen since the last thread
    hint: int | None = None

    def close() -> None:
        nonlocal thread, frames
        if thread is not None and (frames or thread["tid"]):
            blocks[-1][1].append(ThreadStack(frames=tuple(frames), pid=blocks[-1][0], **thread))
        thread, frames = None, []

    for line in text.splitlines():
        if TIMEOUT.match(line.strip()) or STACK.match(line.strip()):
            close()
            if gap:
                blocks.append((hint if hint is not None else len(blocks) + 1, []))
                gap, hint = False, None
            thread = {"tid": 0, "name": "MainThread" if STACK.match(line.strip()) else "", "status": "unknown"}
            continue
        m = THREAD.match(line)
        if m:
            if thread is None or thread["tid"] or frames:  # a thread line right after `Timeout (…)!` names that thread
                close()
            if gap:
                blocks.append((hint if hint is not None else len(blocks) + 1, []))
                gap, hint = False, None
            thread = {"tid": int(m.group(2), 16), "name": "MainThread" if m.group(1) == "Current thread" else "",
                      "status": "active" if m.group(1) == "Current thread" else "unknown"}
            continue
        fm = FRAME.match(line)
        if fm and thread is not None:
            frames.append(Frame(function=fm.group(3), file=fm.group(1), line=int(fm.group(2))))
            continue
        if line.strip():
            close()
            gap = True
            pm = _PID.search(line)
            if pm:
                hint = int(pm.group(1))
    close()
    found = [(pid, threads) for pid, threads in blocks if threads]
    if not found:
        raise ParseError("no faulthandler `Thread 0x... (most recent call first):` line found")
    return tuple(ProcessStacks(pid=pid, name="faulthandler dump", source="faulthandler", threads=tuple(threads))
                 for pid, threads in found)

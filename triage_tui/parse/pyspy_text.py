"""`py-spy dump --pid N` TEXT output (one or several processes) → ProcessStacks.

    Process 46433: python3 -m sglang.launch_server ...
    Python v3.10.12 (/usr/bin/python3.10)

    Thread 46433 (idle): "MainThread"
        barrier (torch/distributed/distributed_c10d.py:4000)
            Locals:
                group: None
        main (scheduler.py:50)

Frames are innermost first. Arguments/Locals blocks under a frame become `Frame.locals`.
"""

from __future__ import annotations

import re

from ..model.stacks import Frame, ProcessStacks, ThreadStack
from .text_errors import ParseError

PROCESS = re.compile(r"^Process (\d+): ?(.*)$")
# the thread id is sometimes left out of a paste ("Thread (idle): "MainThread""): such threads get 1, 2, ...
THREAD = re.compile(r'^Thread(?: (0x[0-9a-fA-F]{1,16}|\d{1,10}))? \(([\w+ ]{1,40})\)(?::\s{0,4}"([^"]{0,200})")?\s*$')
_WHERE = re.compile(r"^([^()]*?)(?::(\d{1,9}))?$")


def _frame_parts(line: str) -> tuple[str, str, str | None] | None:
    """`    name (file.py:12)` → (name, file, "12"); split by hand, not by one regex, because a lazy name
    before an optional `(where)` is quadratic on a long line (lines here can be 4 KiB of anything)."""
    if not line.startswith(("  ", "\t")):
        return None
    body = line.strip()
    if not body:
        return None
    if body.endswith(")"):
        cut = body.rfind(" (")
        if cut > 0:
            m = _WHERE.match(body[cut + 2:-1])
            if m:
                return body[:cut], m.group(1), m.group(2)
    return body, "", None

_LOCAL = re.compile(r"^\s{6,}(\w+): (.*)$")
# what a poster writes where frames were cut out (py-spy itself never prints these)
_ELISIONS = ("...", "\u2026", "[...]", "[…]", "[ ... ]")


def _status(text: str) -> str:
    if "gil" in text:
        return "gil"
    if "active" in text:
        return "active"
    return "idle" if "idle" in text else "unknown"


def parse_pyspy_text(text: str) -> tuple[ProcessStacks, ...]:
    """Every process of a dump. Without a `Process N:` header the threads go to PID 0. Raises ParseError
    when no `Thread ...` line is found."""
    procs: list[tuple[int, str, list[ThreadStack]]] = []
    thread: dict | None = None
    frames: list[Frame] = []
    in_locals = False
    anonymous = 0

    def close_thread() -> None:
        nonlocal thread, frames
        if thread is not None:
            if not procs:
                procs.append((0, "", []))
            procs[-1][2].append(ThreadStack(frames=tuple(frames), **thread))
        thread, frames = None, []

    indent = 0  # of the last header line: a dump pasted as an indented block (Markdown) is read relative to it
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.strip() in _ELISIONS:  # `...` where the poster cut frames out: the frames around it are still read
            continue
        body = line.lstrip()
        if PROCESS.match(body) or THREAD.match(body):
            indent = len(line) - len(body)
        if indent and line[:indent].strip() == "":
            line = line[indent:]
        m = PROCESS.match(line)
        if m:
            close_thread()
            procs.append((int(m.group(1)), m.group(2).strip(), []))
            continue
        m = THREAD.match(line)
        if m:
            close_thread()
            tid_text = m.group(1) or ""
            anonymous += 1
            tid = int(tid_text, 16) if tid_text.lower().startswith("0x") else int(tid_text) if tid_text else anonymous
            pid = procs[-1][0] if procs else 0
            thread = {"pid": pid, "tid": tid, "name": m.group(3) or "", "status": _status(m.group(2))}
            in_locals = False
            continue
        if thread is None:
            continue
        stripped = line.strip()
        if stripped in ("Arguments:", "Locals:"):
            in_locals = True
            continue
        lm = _LOCAL.match(line)
        if in_locals and lm and frames:
            last = frames[-1]
            frames[-1] = Frame(last.function, last.file, last.line, last.module, last.native,
                               {**last.locals, lm.group(1): lm.group(2)})
            continue
        fm = _frame_parts(line)
        if fm and len(line) - len(line.lstrip()) <= 4:
            in_locals = False
            function, where, number = fm
            native = function.startswith("0x") or (bool(where) and number is None)
            frames.append(Frame(function=function, file=where, line=int(number) if number else 0, native=native))
    close_thread()
    if not any(threads for _, _, threads in procs):
        raise ParseError("no py-spy `Thread N (status): \"name\"` line found")
    return tuple(ProcessStacks(pid=pid, name=name, source="py-spy", threads=tuple(threads))
                 for pid, name, threads in procs if threads)

"""A Python traceback that ends in KeyboardInterrupt → the stack of the thread that Ctrl-C interrupted.

Someone presses Ctrl-C on a program that hangs and pastes what Python printed:

    Traceback (most recent call last):
      File "train.py", line 13, in <module>
        flush()
      File "train.py", line 11, in flush
        with lock:
    KeyboardInterrupt

That is no crash: the frames are where the main thread was waiting when the signal came (with its source lines, so
a wait is read from them as from a py-spy dump). Each such traceback is one process, numbered 1, 2, ... unless a
line before it names a PID (`Process 123`, `pid=123`), as faulthandler's blocks are (a DataLoader's workers and
torchrun's ranks each print one; the `[rank0]:` prefixes are removed before).
"""

from __future__ import annotations

import re

from ..model.stacks import Frame, ProcessStacks, ThreadStack

_FRAME = re.compile(r'^\s*File "(.{0,2000})", line (\d{1,9}), in (\S{1,300})\s*$')
# a terminal echoes Ctrl-C as `^C` right where the traceback starts: interrupted even when the paste cuts its end
_START = re.compile(r"^\s*(\^C)?Traceback \(most recent call last\):\s*$")
_INTERRUPT = re.compile(r"^\s*KeyboardInterrupt\b")
_CARETS = re.compile(r"^\s*[\^~]{1,400}\s*$")  # 3.11+ marks the failing expression under its source line
# an exception line of a traceback (`RuntimeError: ...`, `torch.distributed.DistBackendError`)
_EXCEPTION = re.compile(r"^\s*[\w.]{1,120}(?:Error|Exception|Exit)\b")
# IPython / Jupyter print another shape: a header naming the exception, frames as `File ~/x.py:118, in f(a, b)` (or
# `Cell In[3], line 1` for the cell), each with numbered source lines around it and an arrow on the current one
IPYTHON_CUT = "an IPython traceback shown without its exception"
IPY_HEADER = re.compile(r"^\s*([A-Za-z_][\w.]{0,120})\s{2,200}Traceback \(most recent call last\)\s*$")
IPY_FRAME = re.compile(r"^\s*(?:File (.{1,2000}?):(\d{1,9}), in ([^\s(]{1,300})|(Cell In\[\d{1,9}\]), line (\d{1,9}))")
IPY_SOURCE = re.compile(r"^\s*(-*>)?\s{0,4}(\d{1,9}) (.{0,2000})$")
_PID = re.compile(r"(?:\bpid\b|\bProcess\b)\s*[:=#]?\s*(\d{1,10})\b", re.I)


def interrupted_stacks(text: str, first: int = 1) -> tuple[ProcessStacks, ...]:
    """One process per traceback whose exception is KeyboardInterrupt, or that starts with the terminal's `^C` (numbered
    from `first` without a PID line); every other traceback is a failure, not a stack, and is left to the log reader."""
    found: list[ProcessStacks] = []
    frames: list[Frame] = []
    hint: int | None = None
    echoed = False  # this traceback began with `^C`
    indent = 0  # of the last `File` line

    def emit() -> None:
        pid = hint if hint is not None else first + len(found)
        thread = ThreadStack(pid=pid, tid=0, name="MainThread", frames=tuple(reversed(frames)))
        name = "interrupted by Ctrl-C" if echoed or interrupted else IPYTHON_CUT
        found.append(ProcessStacks(pid=pid, name=name, source="traceback", threads=(thread,)))

    ipython = False  # the frames are IPython's: source lines are numbered, the current one has an arrow
    failed = False
    interrupted = False  # the line being read is the KeyboardInterrupt that ends the traceback
    for line in text.split("\n"):
        start = _START.match(line)
        header = IPY_HEADER.match(line)
        if start or header:
            if (echoed or (ipython and not failed)) and frames:  # the previous one (interrupted) was cut before its end
                emit()
            frames, echoed = [], bool(start.group(1) is not None if start else header and header.group(1) == "KeyboardInterrupt")
            ipython = header is not None
            failed = header is not None and header.group(1) != "KeyboardInterrupt"  # IPython named a failure
            continue
        ipy = IPY_FRAME.match(line)
        if ipy:
            ipython = True
            if ipy.group(4):
                frames.append(Frame(function="<module>", file=ipy.group(4), line=int(ipy.group(5))))
            else:
                frames.append(Frame(function=ipy.group(3), file=ipy.group(1), line=int(ipy.group(2))))
            continue
        if ipython and frames and not (_INTERRUPT.match(line) or _EXCEPTION.match(line)):
            src = IPY_SOURCE.match(line)
            if src and src.group(1):  # `--> 118 code`: the line the frame is at; the numbered others are context
                last = frames[-1]
                frames[-1] = Frame(function=last.function, file=last.file, line=last.line, code=src.group(3).strip()[:300])
            continue
        m = _FRAME.match(line)
        if m:
            frames.append(Frame(function=m.group(3), file=m.group(1), line=int(m.group(2))))
            indent = len(line) - len(line.lstrip())
            continue
        # a frame's source line is indented deeper than its `File` line; the exception line is not
        if frames and len(line) - len(line.lstrip()) > indent and line.strip() and not frames[-1].code:
            if not _CARETS.match(line):
                frames[-1] = Frame(function=frames[-1].function, file=frames[-1].file, line=frames[-1].line,
                                   code=line.strip()[:300])
            continue
        if _INTERRUPT.match(line) or (_EXCEPTION.match(line) and frames):
            if frames and (echoed or _INTERRUPT.match(line)):
                interrupted = True
                emit()
                interrupted = False
            frames, hint, echoed = [], None, False
            continue
        if not frames:
            pm = _PID.search(line)
            if pm:
                hint = int(pm.group(1))
    # an IPython traceback whose paste shows frames and no exception (cut at both ends): the stack it shows, since
    # nothing in it failed; a Python traceback without its exception line stays a failure's, as before
    interrupted = False
    if (echoed or (ipython and not failed)) and frames:
        emit()
    return tuple(found)


def failed_too(text: str) -> bool:
    """The traceback text also ends in an exception that is no interrupt (a worker that died while the main process
    was interrupted, an error raised by the clean-up): that one is a failure and is read as one."""
    return any(_EXCEPTION.match(line) for line in text.split("\n"))

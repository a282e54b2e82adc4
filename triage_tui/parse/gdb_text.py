"""Debugger stack dumps as pasted → ProcessStacks: gdb / cuda-gdb `thread apply all bt`, gdb `py-bt`, pystack.

    Thread 2 (Thread 0x7f3a1bfff700 (LWP 4113) "python3"):
    #0  0x00007f3a3c8c3ad3 in futex_wait_cancelable (...) at ../sysdeps/nptl/futex-internal.h:183
    #1  __pthread_cond_wait_common (...) at pthread_cond_wait.c:508
    #2  0x00007f3a1e2a in ncclProxyService(void*) () from /usr/lib/x86_64-linux-gnu/libnccl.so.2

    Traceback (most recent call first):            <- gdb py-bt
      File "/usr/lib/python3.10/threading.py", line 320, in wait
        waiter.acquire()

    Traceback for thread 4112 (python3) [Has the GIL] (most recent call last):     <- pystack
        (Python) File "/srv/train.py", line 17, in <module>
        (C) File "../sysdeps/nptl/futex-internal.h", line 57, in futex_wait (libc.so.6)

    libpthread.so.0!futex_abstimed_wait_cancelable(int private, ...) (/build/glibc/futex-internal.h:205)
                                                   <- a debugger front end's call stack (VS Code cppdbg
                                                      "Copy Call Stack": module!function(args) (file:line))

Frames come out innermost first, as py-spy's do. Lines are split by hand (find/rfind), never by a regex with two
unbounded parts, so a 4 KiB line costs linear time.
"""

from __future__ import annotations

import re
from typing import Optional

from ..model.stacks import Frame, ProcessStacks, ThreadStack
from .text_errors import ParseError

GDB_THREAD = re.compile(r"^Thread (\d{1,6}) \((?:Thread 0x[0-9a-fA-F]{1,16} )?\(?LWP (\d{1,10})\)")
GDB_FRAME = re.compile(r"^#\d{1,4}\s{1,4}(?:0x[0-9a-fA-F]{1,16} in )?[\w~:<>.@*&,\[\]$-]")
# a frame whose `#` was lost on the way (stripped by hand, or eaten as a Markdown heading outside a fence):
# `0  0x00007ff143a9881d in __lll_lock_wait () from /usr/lib64/libpthread.so.0`, then `5  berkdb_receive_rtn ()`
# for an inlined frame. A block starts only at frame 0 with its address and " in " (a numbered list does not); the
# frames after it need the call's `(` (twelfth pass; comdb2-4035, cases-11: two replication threads in
# __lll_lock_wait pasted so)
BARE_FRAME_0 = re.compile(r"^0\s{1,4}0x[0-9a-fA-F]{4,16} in [\w~:<>.@*&$-]{1,300} \(")
BARE_FRAME = re.compile(r"^\d{1,4}\s{1,4}(?:0x[0-9a-fA-F]{4,16} in )?[\w~:<>.@*&$-]{1,300} \(")
PYSTACK_THREAD = re.compile(r"^Traceback for thread (\d{1,10}) \(([^()]{0,64})\)")
PY_BT = "Traceback (most recent call first):"
# `module!function(` where the module is a file name (libc.so.6, python3.10, _C.cpython-310-x86_64-linux-gnu.so)
MODULE_FRAME = re.compile(r"^(?:lib[\w.+-]{0,118}|python[\w.]{0,20}|[\w.+-]{1,120}\.(?:so(?:\.[\d.]{1,12})?|dll|exe|dylib))"
                          r"![\w~:<>$@.]{1,300}\(")
_PY_FILE = re.compile(r'^\s{0,12}(?:\((?:Python|C)\) )?File "([^"]{0,500})", line (\d{1,9}), in (\S{1,300})')


def _module_frame(line: str) -> Optional[Frame]:
    """`libc.so.6!__futex_wait(int x) (/build/futex.c:57)`; the argument list may hold parentheses."""
    body = line.strip()
    if not MODULE_FRAME.match(body):
        return None
    bang = body.find("!")
    paren = body.find("(", bang)
    module, function = body[:bang], body[bang + 1:paren]
    where, number = module, 0
    if body.endswith(")"):
        cut = body.rfind(" (")
        if cut > paren:
            path, _, num = body[cut + 2:-1].rpartition(":")
            where, number = (path, int(num)) if num.isdecimal() else (body[cut + 2:-1], 0)
    return Frame(function=function or "??", file=where, line=number, module=module, native=True)


def _gdb_frame(line: str) -> Optional[Frame]:
    body = line.strip()
    if MODULE_FRAME.match(body):
        return _module_frame(line)
    if BARE_FRAME.match(body):
        body = "#" + body
    if not body.startswith("#"):
        return None
    space = body.find(" ")
    if space < 0:
        return None
    body = body[space:].strip()
    if body.startswith("0x"):
        cut = body.find(" in ")
        body = body[cut + 4:] if cut >= 0 else body
    cut = body.find(" (")
    function = body[:cut] if cut >= 0 else body.split(" ", 1)[0]
    where, number, module = "", 0, ""
    at = body.rfind(" at ")
    frm = body.rfind(" from ")
    if at > cut and at > frm:
        loc = body[at + 4:].strip()
        path, _, num = loc.rpartition(":")
        where, number = (path, int(num)) if num.isdecimal() else (loc, 0)
    elif frm >= 0:
        module = body[frm + 6:].strip()
        where = module
    return Frame(function=function.strip() or "??", file=where, line=number, module=module, native=True)


def _py_frame(line: str) -> Optional[Frame]:
    m = _PY_FILE.match(line)
    if not m:
        return None
    native = line.lstrip().startswith("(C)")  # pystack `(C) File "..", line 57, in futex_wait (libc.so.6)`
    return Frame(function=m.group(3), file=m.group(1), line=int(m.group(2)), native=native)


def parse_gdb(text: str) -> tuple[ProcessStacks, ...]:
    """`thread apply all bt` (gdb, cuda-gdb) and `py-bt` blocks. A new process starts when thread numbers stop
    descending (gdb prints the highest first) on threads not seen before — several ranks' dumps pasted one after
    the other; `thread apply all py-bt` after `bt` revisits the same LWPs and adds their Python frames. The main
    thread's LWP is the PID."""
    procs: list[list[int]] = []  # LWPs of each process, in order
    threads: dict[int, dict] = {}  # LWP -> {"name", "frames"}
    current: Optional[int] = None
    last_number: Optional[int] = None
    pybt = False
    anonymous = 0
    next_bt = False  # frame 0 again after a headerless `bt`: another thread's `bt` of the same process

    def start(lwp: int, name: str, number: Optional[int]) -> None:
        nonlocal current, last_number, pybt, next_bt
        if lwp not in threads:
            if number is None:
                fresh = not next_bt
            else:
                fresh = last_number is None or number >= last_number
            if fresh or not procs:
                procs.append([])
            next_bt = False
            procs[-1].append(lwp)
            threads[lwp] = {"name": name, "frames": []}
        current, pybt = lwp, False
        if number is not None:
            last_number = number

    for line in text.splitlines():
        stripped = line.strip()
        m = GDB_THREAD.match(stripped)
        if m:
            q = line.find('"')
            end = line.find('"', q + 1) if q >= 0 else -1
            start(int(m.group(2)), line[q + 1:end] if end > q >= 0 else f"Thread {m.group(1)}", int(m.group(1)))
            continue
        if stripped == PY_BT:
            if current is None:
                anonymous -= 1
                start(anonymous, "py-bt", None)
            pybt = True
            continue
        bare_0 = stripped.startswith("#0 ") or bool(BARE_FRAME_0.match(stripped))
        if current is not None and current < 0 and not pybt and bare_0 and threads[current]["frames"]:
            current, next_bt = None, True  # the next thread's `bt`, pasted after it
        if current is None:
            if GDB_FRAME.match(stripped) or MODULE_FRAME.match(stripped) or BARE_FRAME_0.match(stripped):
                anonymous -= 1  # a bare `bt` of one thread
                start(anonymous, "bt", None)
            else:
                continue
        frame = _py_frame(line) if pybt else _gdb_frame(line)
        if frame is not None:
            threads[current]["frames"].append(frame)  # type: ignore[index]
    out = []
    for lwps in procs:
        members = [lwp for lwp in lwps if threads[lwp]["frames"]]
        if not members:
            continue
        real = [lwp for lwp in members if lwp > 0]
        pid = min(real) if real else 0
        out.append(ProcessStacks(pid=pid, name="", source="gdb", threads=tuple(
            ThreadStack(pid=pid, tid=lwp if lwp > 0 else pid, status="unknown", frames=tuple(threads[lwp]["frames"]),
                        # the thread whose LWP is the PID is the main thread
                        name="MainThread" if lwp == pid and real else threads[lwp]["name"])
            for lwp in members)))
    if not out:
        raise ParseError("no gdb `Thread N (... LWP N)` block, `#0 ...` or `module!function(...)` frame found")
    return tuple(out)


def parse_pystack(text: str) -> tuple[ProcessStacks, ...]:
    """pystack `Traceback for thread N (name) [...] (most recent call last):` blocks, one process."""
    threads: list[ThreadStack] = []
    tid: Optional[int] = None
    name = ""
    status = "unknown"
    frames: list[Frame] = []

    def close() -> None:
        if tid is not None:
            threads.append(ThreadStack(pid=0, tid=tid, name=name, status=status, frames=tuple(reversed(frames))))

    for line in text.splitlines():
        m = PYSTACK_THREAD.match(line.strip())
        if m:
            close()
            tid, name, frames = int(m.group(1)), m.group(2), []
            status = "gil" if "Has the GIL" in line else "idle" if "Waiting for the GIL" not in line else "unknown"
            continue
        frame = _py_frame(line) if tid is not None else None
        if frame is not None:
            frames.append(frame)
        elif frames and not frames[-1].native and not frames[-1].code and line.startswith("        ") and line.strip():
            # the source line pystack prints under a Python frame: what the frame is doing
            last = frames[-1]
            frames[-1] = Frame(last.function, last.file, last.line, last.module, last.native, last.locals,
                               line.strip())
    close()
    if not threads:
        raise ParseError("no pystack `Traceback for thread N` line found")
    pid = min(t.tid for t in threads)
    return (ProcessStacks(pid=pid, source="pystack",
                          threads=tuple(ThreadStack(pid=pid, tid=t.tid, status=t.status, frames=t.frames,
                                                    name="MainThread" if t.tid == pid else t.name)
                                        for t in threads)),)

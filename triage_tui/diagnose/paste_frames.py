"""Frames of a pasted dump that name a cause on their own (one look, no second capture to compare).

A lock-file wait (torch's FileBaton, filelock), glibc's atexit lock, a GPU kernel's own frame (cuda-gdb), and a
lock wait that a fork left without a holder: a thread of a forked child (its frames show the fork: multiprocessing's
`Popen._launch` in popen_fork.py, gunicorn's `spawn_worker`, a native `fork`) waiting to acquire a lock, or a
thread waiting on one of the locks a fork most often copies held — the import machinery's per-module lock
(`_ModuleLock.acquire`) or logging's lock — while no thread of that process is inside that machinery to release it.
The live engine reads the same fact from the process itself (its only thread waits on a lock: stacks-orphan-lock);
a paste may show a subset of the threads, so here the frames must say it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Optional

from ..model.diagnosis import Observation
from ..model.stacks import Frame, StackCapture, ThreadStack
from .vocabulary import register

_ATEXIT = re.compile(r"cxa_atexit|__new_exitfn|__internal_atexit|exit_funcs_lock")
# frames of the child side of a fork, below the child's own work
_FORK_CHILD = (
    (re.compile(r"(^|\.)_launch$"), re.compile(r"(multiprocessing|billiard)/popen_fork\.py$")),
    (re.compile(r"(^|\.)spawn_worker$"), re.compile(r"gunicorn/arbiter\.py$")),
    (re.compile(r"^(os\.)?fork$|^os_fork(_impl)?$|^_Py_fork|^__libc_fork$|^_Fork$"), None),
)
# (machinery, the frames of its lock wait, the frames of a thread inside it that could hold the lock)
_INHERITED = (
    ("the import lock", re.compile(r"^(_ModuleLock\.acquire|_lock_unlock_module|_get_module_lock)$"),
     re.compile(r"importlib\._bootstrap|importlib/_bootstrap"),
     re.compile(r"^(_load_unlocked|_find_and_load_unlocked|_LoaderBasics\.exec_module|exec_module)$")),
    ("logging's lock", re.compile(r"^(Handler\.acquire|_acquireLock|acquire)$"), re.compile(r"logging/__init__\.py$"),
     re.compile(r"^(\w+\.)?(emit|handle|flush|callHandlers)$")),
)


# logging's own I/O under its handler lock (emit writes the stream, flush flushes it), innermost in a forked child
_LOGGING_IO = re.compile(r"^(\w+\.)?(emit|flush|handle)$")
_LOGGING_FILE = re.compile(r"logging/__init__\.py$")


def _obs(oid: str, text: str, source: str, at: float, pids: Sequence[int] = (), **figures: object) -> Observation:
    clean = {k: v for k, v in figures.items() if isinstance(v, (int, float, str))}
    return Observation(id=register(oid), text=text, source=source, at=at, figures=clean, pids=tuple(pids))


def _where(f: Frame) -> str:
    return f"{f.function} ({(f.file or f.module).rsplit('/', 1)[-1]}{':' + str(f.line) if f.line else ''})"


def _fork_frame(t: ThreadStack) -> Optional[Frame]:
    for f in t.frames:
        for function, file in _FORK_CHILD:
            if function.search(f.function) and (file is None or file.search(f.file)):
                return f
    return None


def _inherited_lock(t: ThreadStack) -> Optional[tuple[int, Frame]]:
    """(which machinery, its frame) when the thread's innermost Python frame waits on a lock a fork copies held."""
    inner = next((f for f in t.frames if not f.native), None)
    if inner is None:
        return None
    for k, (_, wait, file, _holder) in enumerate(_INHERITED):
        if wait.search(inner.function) and file.search(inner.file):
            return k, inner
    return None


def _holder_in(threads: Sequence[ThreadStack], waiter: ThreadStack, k: int) -> bool:
    """Some other thread of the process is inside that machinery (it may hold the lock: a wait, not an orphan)."""
    _, _, file, holder = _INHERITED[k]
    return any(t is not waiter and any(file.search(f.file) and holder.search(f.function) for f in t.frames)
               for t in threads)


def _fork_locks(capture: StackCapture, at: float) -> list[Observation]:
    for proc in capture.processes:
        for t in proc.threads:
            forked = _fork_frame(t)
            inherited = _inherited_lock(t)
            if forked is not None and (t.wait_kind == "lock" or inherited is not None):
                return [_obs("stacks-fork-lock", f"PID {proc.pid} waits on a lock in a process started by fork "
                             f"({t.wait_frame or _where(forked)}, below it {_where(forked)}): a lock copied held across "
                             "fork has no holder in the child", "stacks", at, [proc.pid], frame=t.wait_frame)]
            inner = next((f for f in t.frames if not f.native), None)
            if forked is not None and inner is not None and _LOGGING_IO.search(inner.function) \
                    and _LOGGING_FILE.search(inner.file):
                # a forked child stuck writing a log record: the handler's or the stream's lock was copied held
                # (the parent's other thread was logging when it forked); py-spy shows it "active", a wait in C
                return [_obs("stacks-fork-lock", f"PID {proc.pid} is inside logging ({_where(inner)}) in a process "
                             f"started by fork (below it {_where(forked)}): a handler or stream lock copied held across "
                             "fork has no holder in the child", "stacks", at, [proc.pid], frame=_where(inner))]
            if inherited is not None and not _holder_in(proc.threads, t, inherited[0]):
                what = _INHERITED[inherited[0]][0]
                return [_obs("stacks-fork-lock", f"PID {proc.pid} waits on {what} ({_where(inherited[1])}) and no "
                             "thread of it is inside that machinery to release it: the lock a fork copies held",
                             "stacks", at, [proc.pid], frame=_where(inherited[1]))]
    return []


def frames_of_note(capture: Optional[StackCapture], at: float) -> list[Observation]:
    """Frames that name a cause on their own: a lock-file wait (FileBaton), glibc's atexit lock (held across fork), a
    GPU kernel's own frame (cuda-gdb), a lock wait that a fork left without a holder."""
    if capture is None:
        return []
    out: list[Observation] = []
    for proc in capture.processes:
        for t in proc.threads:
            for f in t.frames:
                where = f"{f.function} ({f.file or f.module})"
                if f.file.endswith("file_baton.py") or "FileBaton" in f.function or "filelock" in f.file:
                    if not any(o.id == "stacks-file-lock" for o in out):
                        out.append(_obs("stacks-file-lock", f"PID {proc.pid} waits on a lock file: {where}", "stacks", at,
                                        [proc.pid], frame=where))
                elif "<<<(" in f.function:  # cuda-gdb: a thread of a GPU kernel, `kernel<<<(grid),(block)>>>`
                    if not any(o.id == "log-gpu-kernel-stuck" for o in out):
                        out.append(_obs("log-gpu-kernel-stuck", f"cuda-gdb shows a thread inside a GPU kernel: {where} "
                                        "(the device is still running it)", "stacks", at, [proc.pid], frame=where))
                elif _ATEXIT.search(f.function):
                    if not any(o.id == "stacks-atexit-lock" for o in out):
                        out.append(_obs("stacks-atexit-lock", f"PID {proc.pid} is inside glibc's atexit lock: {where} "
                                        "(a lock a forked child can inherit held)", "stacks", at, [proc.pid], frame=where))
    return out + _fork_locks(capture, at)



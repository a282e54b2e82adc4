"""Stacks of many processes at once: py-spy for Python, the kernel's view for the rest.

Replaces: `pgrep ... | xargs -n1 py-spy dump --pid` (one after another, each pausing its target, a hung one
blocking the rest) and reading eight near-identical dumps by eye.

- py-spy `dump --json` runs for every Python process in parallel (options.concurrency at a time), each in its
  own process group under a hard timeout (options.timeout_s): a py-spy that hangs is killed with its group and
  reported in that process's row; the others still arrive.
- Each target's state is read before and after. One that was not stopped before and is stopped (`T`) after
  was stopped by the capture (py-spy can leave its target stopped when it dies attached): triage resumes it
  with SIGCONT and says so. That is the only signal triage ever sends. A process that was already stopped is
  not attached to and not resumed: that stop is somebody else's.
- A process that is not Python, or that py-spy cannot read, gets the kernel's view (thread_states), with the
  reason and the fix when it is a permission problem.

The capture is raw: classifying threads and grouping stacks is diagnose/stack_groups.py's, which the host
applies (a collector never reads the diagnosis layer above it).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

from ..model.options import StackOptions
from ..model.stacks import ProcessStacks, StackCapture, ThreadStack
from ..model.unavailable import Unavailable
from ..parse.pyspy_json import parse_pyspy_json
from .executables import trusted_which
from .thread_states import (
    kernel_process_stacks,
    kernel_thread,
    looks_like_python,
    parent_pid,
    process_name,
    process_start,
    process_state,
)

_STOPPED = ("T", "t")
_MAX_SOURCE_BYTES = 4 << 20
CAP_SYS_PTRACE = 19
KILLED_STOP_GRACE_S = 0.2
_KILLED = "py-spy did not finish in"


def find_pyspy() -> Optional[str]:
    """The py-spy on PATH, else the one installed next to this Python (a venv whose bin is not on PATH);
    only one we may run (#19: never a binary another user could have replaced, see collect.executables)."""
    found, _ = trusted_which("py-spy", (os.path.join(os.path.dirname(sys.executable), "py-spy"),))
    return found


class SourceLines:
    """Source lines for frames, read through /proc/PID/root so a container's files are the ones read."""

    def __init__(self) -> None:
        self._files: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def _lines(self, path: str) -> list[str]:
        with self._lock:
            cached = self._files.get(path)
        if cached is not None:
            return cached
        lines: list[str] = []
        try:
            info = os.stat(path)
            # Regular files only: a frame's file name could be a FIFO or a device, and opening one would block.
            if stat.S_ISREG(info.st_mode) and info.st_size <= _MAX_SOURCE_BYTES:
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.read().splitlines()
        except OSError:
            lines = []
        with self._lock:
            self._files[path] = lines
        return lines

    def reader(self, pid: int):
        def read(file: str, line: int) -> str:
            if not file.startswith("/"):
                return ""
            for path in (f"/proc/{pid}/root{file}", file):
                lines = self._lines(path)
                if lines:
                    return lines[line - 1].strip() if 0 < line <= len(lines) else ""
            return ""

        return read


def _has_cap_sys_ptrace() -> bool:
    try:
        for line in open("/proc/self/status", encoding="utf-8"):
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> CAP_SYS_PTRACE & 1)
    except (OSError, ValueError):
        pass
    return False


def _target_uid(pid: int) -> Optional[int]:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def _ptrace_scope() -> int:
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope", encoding="utf-8") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return -1  # no Yama: no scope restriction


def permission_problem(
    pid: int, euid: Optional[int] = None, owner: Optional[int] = None, scope: Optional[int] = None,
    has_cap: Optional[bool] = None,
) -> Unavailable:
    """Why ptrace was refused, with the fix: another user, Yama's ptrace_scope, or a container without
    SYS_PTRACE. The keyword arguments stand in for what is read from /proc (for tests)."""
    me = os.geteuid() if euid is None else euid
    owner = _target_uid(pid) if owner is None else owner
    scope = _ptrace_scope() if scope is None else scope
    if me != 0 and owner is not None and owner != me:
        return Unavailable(
            f"permission denied: PID {pid} runs as uid {owner}, triage as uid {me}",
            "run triage as that user, or as root: sudo -E env PATH=$PATH triage stacks ...",
        )
    if scope >= 3:
        return Unavailable(
            "permission denied: kernel.yama.ptrace_scope=3 forbids every ptrace attach",
            "only a reboot lowers ptrace_scope 3; the kernel view is shown instead",
        )
    if me != 0 and scope >= 1:
        return Unavailable(
            f"permission denied: kernel.yama.ptrace_scope={scope} allows attaching only to your own children",
            "run as root, or: sudo sysctl kernel.yama.ptrace_scope=0",
        )
    if me == 0 and not (_has_cap_sys_ptrace() if has_cap is None else has_cap):
        return Unavailable(
            "permission denied: no CAP_SYS_PTRACE (a container started without it?)",
            "start the container with --cap-add SYS_PTRACE (Kubernetes: securityContext.capabilities.add: "
            "[SYS_PTRACE]), or run triage on the host",
        )
    return Unavailable(
        "permission denied by ptrace (a non-dumpable target, a seccomp profile or an LSM such as AppArmor?)",
        "run triage as root on the host, or with a container profile that allows ptrace",
    )


def explain_pyspy_failure(pid: int, returncode: int, stderr: str, alive: bool) -> Unavailable:
    """py-spy's error text (anyhow: "Error: ...", "Caused by:", a backtrace) as one reason and one fix."""
    text = stderr.split("Stack backtrace:", 1)[0].strip()
    lowered = text.lower()
    if not alive or "check that the process is running" in lowered or "no such process" in lowered:
        return Unavailable("process exited during the capture", "")
    if "permission denied" in lowered or "operation not permitted" in lowered:
        return permission_problem(pid)
    if "failed to suspend" in lowered:
        return Unavailable(
            "py-spy could not pause the process",
            f"another tracer may hold it: see TracerPid in /proc/{pid}/status",
        )
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and ln.strip() != "Caused by:"]
    summary = "; ".join((ln[len("Error: "):] if ln.startswith("Error: ") else ln) for ln in lines[:3]) or f"py-spy exited with {returncode}"
    return Unavailable(f"py-spy failed: {summary}", "the kernel's view of the threads is shown instead")


def _not_python(stderr: str) -> bool:
    lowered = stderr.lower()
    return "failed to find python version" in lowered or "failed to find a python interpreter" in lowered


def _run_pyspy(pyspy: str, pid: int, options: StackOptions) -> tuple[Optional[int], str, str]:
    """(returncode or None on timeout, stdout, stderr). The py-spy runs in its own process group so that a
    hung one is killed with whatever it started (a wrapper script's children), and never the caller."""
    argv = [pyspy, "dump", "--pid", str(pid), "--json"]
    if options.native:
        argv.append("--native")
    if options.locals:
        argv.append("--locals")
    env = dict(os.environ, RUST_BACKTRACE="0")
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True, env=env, text=True, errors="replace",
    )
    try:
        out, err = proc.communicate(timeout=options.timeout_s)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # our own py-spy's group, never a target
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        return None, out, err


def _capture_one(
    pid: int, before: str, options: StackOptions, pyspy: Optional[str], sources: SourceLines,
    attached: Optional[set[int]] = None,
) -> ProcessStacks:
    started = time.monotonic()
    name = process_name(pid)
    ppid = parent_pid(pid)

    def done(result: ProcessStacks) -> ProcessStacks:
        return dataclasses.replace(result, ppid=ppid, duration_ms=round((time.monotonic() - started) * 1000, 1))

    if not before:
        return done(ProcessStacks(pid=pid, source="kernel", error=Unavailable("no such process", "it has exited")))
    if before == "Z":
        return done(ProcessStacks(pid=pid, name=name, source="kernel", error=Unavailable(
            "zombie: the process has exited and its parent has not reaped it", "look at its parent")))
    if before in _STOPPED:
        return done(kernel_process_stacks(pid, name=name, error=Unavailable(
            f"stopped (state {before}) before the capture: not attached to, and not resumed (not triage's doing)",
            f"if nothing (a debugger, a job control stop) should hold it: kill -CONT {pid}",
        )))
    if before == "D":  # ptrace-attaching waits for the uninterruptible sleep to end: it could hang with it
        return done(kernel_process_stacks(pid, name=name, error=Unavailable(
            "in uninterruptible I/O (state D): not attached to (py-spy would wait as long as the I/O does)",
            f"cat /proc/{pid}/stack; where does it read from?")))
    if not looks_like_python(pid):
        return done(kernel_process_stacks(pid, name=name))
    if pyspy is None:
        return done(kernel_process_stacks(pid, name=name, error=Unavailable(
            "py-spy not found on PATH or next to this Python", "pip install py-spy")))
    # the kernel's view of each thread is read before py-spy attaches: the attach interrupts every thread's wait,
    # and a thread read just after the detach, on its way back into its futex, shows R (seen under load in CI)
    undisturbed = _kernel_threads(pid)
    if attached is not None:
        attached.add(pid)  # from here a stop may be py-spy's doing, and so ours to undo
    try:
        code, out, err = _run_pyspy(pyspy, pid, options)
    except OSError as exc:
        return done(kernel_process_stacks(pid, name=name, error=Unavailable(f"cannot run py-spy: {exc}", "")))
    if code is None:
        return done(kernel_process_stacks(pid, name=name, error=Unavailable(
            f"{_KILLED} {options.timeout_s:g} s and was killed",
            "the process may be in uninterruptible I/O (D) or under another tracer; the kernel view is shown; "
            "a larger --timeout may help",
        )))
    if code != 0:
        if _not_python(err):
            return done(kernel_process_stacks(pid, name=name))
        alive = process_state(pid) not in ("", "Z")
        return done(kernel_process_stacks(pid, name=name, error=explain_pyspy_failure(pid, code, err, alive)))
    try:
        parsed = parse_pyspy_json(out, sources.reader(pid), pid=pid, name=name)
    except ValueError as exc:
        return done(kernel_process_stacks(pid, name=name, error=Unavailable(str(exc), "")))
    own = next((p for p in parsed if p.pid == pid), None)
    if own is None or not own.threads:  # exit 0 and no stack: never a capture with neither threads nor error
        return done(kernel_process_stacks(pid, name=name, error=Unavailable(
            f"py-spy exited 0 but printed no stack for PID {pid}",
            f"the kernel view is shown; check the py-spy that ran ({pyspy} --version)")))
    return done(_with_kernel_fields(own, undisturbed))


def _kernel_threads(pid: int) -> dict[int, ThreadStack]:
    """Every thread of PID as the kernel sees it now (empty when the task list cannot be read)."""
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task") if t.isdecimal()]
    except OSError:
        return {}
    seen = {tid: kernel_thread(pid, tid) for tid in tids}
    return {tid: t for tid, t in seen.items() if t is not None}


def _with_kernel_fields(process: ProcessStacks, before: Mapping[int, ThreadStack]) -> ProcessStacks:
    """py-spy's threads with the kernel's state and wait channel beside them (a `D` thread says a lot), as read
    before the attach (`before`); a thread started meanwhile is read now."""
    threads = []
    for thread in process.threads:
        seen = before.get(thread.tid) or kernel_thread(process.pid, thread.tid)
        if seen is not None:
            thread = dataclasses.replace(
                thread, kernel_state=seen.kernel_state, kernel_wchan=seen.kernel_wchan,
                kernel_syscall=seen.kernel_syscall, kernel_stack=seen.kernel_stack,
            )
        threads.append(thread)
    return dataclasses.replace(process, threads=tuple(threads))


def _undo_stop(pid: int, before: str, start: str, grace_s: float = 0.0) -> bool:
    """SIGCONT a process the capture left stopped. True when it did. `start` is the process's start time
    before the capture: a PID that exited and was reused meanwhile is another process, never signalled.

    `grace_s`: after a py-spy was killed while attached, the SIGSTOP of its attach can still be pending
    when the tracer is gone and land a moment later; watch the state that long before concluding.
    """
    if before in _STOPPED or not before:
        return False
    end = time.monotonic() + grace_s
    while process_state(pid) != "T":
        if time.monotonic() >= end:
            return False
        time.sleep(0.01)
    if process_start(pid) != start:
        return False
    try:
        os.kill(pid, signal.SIGCONT)
    except OSError:
        return False
    return True


def capture_stacks(
    pids: Sequence[int], options: StackOptions, pyspy: Optional[str] = None
) -> StackCapture:
    """Capture every PID at once; never raises for a process that fails. `pyspy` overrides find_pyspy()."""
    taken_at = time.time()
    started = time.monotonic()
    unique = tuple(dict.fromkeys(int(p) for p in pids))
    before = {pid: process_state(pid) for pid in unique}
    starts = {pid: process_start(pid) for pid in unique}
    tool = pyspy or find_pyspy()
    sources = SourceLines()
    resumed: set[int] = set()
    # Only a process a py-spy was started on can have been stopped by the capture; a stop of any other
    # (job control, a debugger, a test) is not triage's to undo.
    attached: set[int] = set()
    lock = threading.Lock()

    def work(pid: int) -> ProcessStacks:
        try:
            result = _capture_one(pid, before[pid], options, tool, sources, attached)
        except Exception as exc:  # a bug here must cost one row, not the capture (and never a traceback)
            result = ProcessStacks(pid=pid, error=Unavailable(f"internal error: {type(exc).__name__}: {exc}", ""))
        killed = result.error is not None and result.error.reason.startswith(_KILLED)
        if pid in attached and _undo_stop(pid, before[pid], starts[pid],
                                         grace_s=KILLED_STOP_GRACE_S if killed else 0.0):
            with lock:
                resumed.add(pid)
        return result

    with ThreadPoolExecutor(max_workers=max(1, options.concurrency), thread_name_prefix="triage-stacks") as pool:
        results = list(pool.map(work, unique))

    # Second look once every py-spy is gone: a stop that landed after a worker's own check.
    for pid in unique:
        if pid in attached and pid not in resumed and _undo_stop(pid, before[pid], starts[pid]):
            resumed.add(pid)
    notes = []
    final = []
    for result in results:
        if result.pid in resumed:
            result = dataclasses.replace(result, resumed=True)
            notes.append(f"resumed PID {result.pid} with SIGCONT: the capture had left it stopped (T)")
        final.append(result)
    return StackCapture(
        taken_at=taken_at,
        pids=unique,
        processes=tuple(final),
        duration_ms=round((time.monotonic() - started) * 1000, 1),
        notes=tuple(notes),
    )

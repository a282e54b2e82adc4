"""The kernel's view of a process's threads, for processes py-spy cannot read (or that are not Python).

Replaces: `cat /proc/PID/task/*/stat /proc/PID/task/*/wchan /proc/PID/task/*/syscall /proc/PID/task/*/stack`
and `ps -L -o tid,stat,wchan:32 -p PID`. Every read is a small /proc file; none pauses the target.
"""

from __future__ import annotations

import os
import platform
import re
from typing import Optional

from ..model.stacks import ProcessStacks, ThreadStack
from ..model.unavailable import Unavailable, unavailable_from_error

# Common blocking syscalls by number, so `/proc/.../syscall` ("202 0x7f.. ...") reads as "futex".
_SYSCALLS = {
    "x86_64": {
        0: "read", 1: "write", 7: "poll", 17: "pread64", 23: "select", 34: "pause", 35: "nanosleep",
        42: "connect", 43: "accept", 45: "recvfrom", 47: "recvmsg", 61: "wait4", 202: "futex",
        230: "clock_nanosleep", 232: "epoll_wait", 247: "waitid", 270: "pselect6", 271: "ppoll",
        281: "epoll_pwait", 288: "accept4", 441: "epoll_pwait2",
    },
    "aarch64": {
        22: "epoll_pwait", 63: "read", 64: "write", 67: "pread64", 72: "pselect6", 73: "ppoll", 95: "waitid",
        98: "futex", 101: "nanosleep", 115: "clock_nanosleep", 202: "accept", 203: "connect", 207: "recvfrom",
        212: "recvmsg", 242: "accept4", 260: "wait4", 441: "epoll_pwait2",
    },
}

_PYTHON_EXE = re.compile(r"^(python|pypy)(\d+(\.\d+)?)?[dmu]?$")


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def process_state(pid: int, proc: str = "/proc") -> str:
    """The state letter of /proc/PID/stat (R, S, D, T, t, Z, ...), or "" when the process is gone."""
    try:
        stat = _read(f"{proc}/{pid}/stat")
    except OSError:
        return ""
    rest = stat.rpartition(")")[2].split()
    return rest[0] if rest else ""


def process_start(pid: int, proc: str = "/proc") -> str:
    """The start time (field 22 of /proc/PID/stat, clock ticks since boot), "" when gone: with the PID it
    names one process, so a PID reused between two looks is not mistaken for the one seen first."""
    try:
        rest = _read(f"{proc}/{pid}/stat").rpartition(")")[2].split()
    except OSError:
        return ""
    return rest[19] if len(rest) > 19 else ""


def parent_pid(pid: int, proc: str = "/proc") -> int:
    """The PPid field of /proc/PID/stat, 0 when unreadable."""
    try:
        rest = _read(f"{proc}/{pid}/stat").rpartition(")")[2].split()
        return int(rest[1])
    except (OSError, IndexError, ValueError):
        return 0


def process_name(pid: int, proc: str = "/proc") -> str:
    try:
        return _read(f"{proc}/{pid}/comm").strip()
    except OSError:
        return ""


def looks_like_python(pid: int, proc: str = "/proc") -> bool:
    """Cheap guess, before paying for py-spy: the executable is a python, or libpython is mapped.

    A renamed worker (setproctitle) keeps its executable and its maps, so this sees through the rename.
    """
    try:
        exe = os.path.basename(os.readlink(f"{proc}/{pid}/exe"))
    except OSError:
        exe = ""
    if _PYTHON_EXE.match(exe.replace(" (deleted)", "")):
        return True
    try:
        with open(f"{proc}/{pid}/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                if "libpython" in line:
                    return True
    except PermissionError:
        pass  # another user's process: exe and maps are closed to us, its cmdline is not; py-spy then says why
    except OSError:
        return False
    # A statically linked python reports another exe name rarely; its cmdline's argv[0] still says so.
    try:
        argv0 = _read(f"{proc}/{pid}/cmdline").split("\0", 1)[0]
    except OSError:
        return False
    return bool(_PYTHON_EXE.match(os.path.basename(argv0)))


def syscall_name(text: str, machine: Optional[str] = None) -> str:
    """`/proc/PID/task/TID/syscall` as words: "futex", "running", "syscall 999", or "" when empty."""
    text = text.strip()
    if not text:
        return ""
    fields = text.split()
    first = fields[0]
    if first == "running":
        return "running"
    try:
        number = int(first)
    except ValueError:
        return first
    # A kernel thread has no user context: the kernel prints "0 0x0 ... 0x0" with stack pointer and
    # program counter 0, and syscall 0 would otherwise read as `read` (a socket wait, on x86_64).
    if number < 0 or (len(fields) == 9 and fields[-2:] == ["0x0", "0x0"]):
        return "not in a syscall"
    table = _SYSCALLS.get(machine or platform.machine(), {})
    return table.get(number, f"syscall {number}")


def kernel_stack_lines(text: str) -> tuple[str, ...]:
    """`[<0>] futex_wait_queue+0x60/0xa0` → `futex_wait_queue`."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"^\[<[0-9a-fx]+>\]\s*", "", line.strip())
        line = re.sub(r"\+0x[0-9a-f]+/0x[0-9a-f]+$", "", line)
        if line:
            out.append(line)
    return tuple(out)


def kernel_thread(pid: int, tid: int, proc: str = "/proc") -> Optional[ThreadStack]:
    """One thread as the kernel sees it; None when it vanished meanwhile. Unreadable parts stay empty."""
    base = f"{proc}/{pid}/task/{tid}"
    try:
        stat = _read(f"{base}/stat")
    except OSError:
        return None
    rest = stat.rpartition(")")[2].split()
    state = rest[0] if rest else ""

    def optional(name: str) -> str:
        try:
            return _read(f"{base}/{name}")
        except OSError:  # /stack needs root; /syscall needs ptrace read access
            return ""

    # syscall before wchan: the kernel answers a syscall read only once the task is off its CPU and off its run
    # queue (it dequeues one the scheduler kept queued after it went to sleep: the delayed dequeue of Linux 6.12
    # on), and prints wchan "0" for a task still queued; read first, a thread that has just gone to sleep would
    # show no wait channel and group apart from its siblings asleep in the same place
    syscall = syscall_name(optional("syscall"))
    wchan = optional("wchan").strip()
    return ThreadStack(
        pid=pid,
        tid=tid,
        name=optional("comm").strip(),
        status="active" if state == "R" else "idle",
        kernel_state=state,
        kernel_wchan="" if wchan == "0" else wchan,
        kernel_syscall=syscall,
        kernel_stack=kernel_stack_lines(optional("stack")),
    )


def kernel_process_stacks(
    pid: int, error: Optional[Unavailable] = None, proc: str = "/proc", name: str = ""
) -> ProcessStacks:
    """Every thread of PID from /proc, source="kernel". `error` says why py-spy's view is missing, if it is."""
    try:
        tids = sorted(int(t) for t in os.listdir(f"{proc}/{pid}/task") if t.isdecimal())
    except OSError as exc:
        return ProcessStacks(pid=pid, name=name, source="kernel", error=error or unavailable_from_error(exc))
    threads = tuple(t for t in (kernel_thread(pid, tid, proc) for tid in tids) if t is not None)
    return ProcessStacks(pid=pid, name=name or process_name(pid, proc), source="kernel", threads=threads, error=error)

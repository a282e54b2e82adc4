"""Stack captures: what py-spy (or the kernel) says each thread of each process is doing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .unavailable import Unavailable


@dataclass(frozen=True)
class Frame:
    """One frame, innermost first in `ThreadStack.frames` (py-spy's order)."""

    function: str
    file: str = ""
    line: int = 0
    module: str = ""
    native: bool = False
    locals: dict[str, str] = field(default_factory=dict)
    code: str = ""  # the source line, read where the capture ran (what the frame is doing, as in a traceback)


@dataclass(frozen=True)
class ThreadStack:
    pid: int
    tid: int
    name: str = ""
    status: str = "unknown"  # active | idle | gil (holds the GIL) | unknown
    frames: tuple[Frame, ...] = ()  # innermost first
    wait_kind: str = "unknown"  # lock, condition, queue, socket, sleep, subprocess, collective, ...
    wait_frame: str = ""  # the innermost meaningful frame the classification came from
    kernel_state: str = ""  # per-thread state letter from /proc
    kernel_wchan: str = ""
    kernel_syscall: str = ""
    kernel_stack: tuple[str, ...] = ()  # /proc/PID/task/TID/stack lines, where readable


@dataclass(frozen=True)
class ProcessStacks:
    """One process's capture: its threads, or why it has none."""

    pid: int
    name: str = ""
    source: str = "py-spy"  # py-spy | kernel
    threads: tuple[ThreadStack, ...] = ()
    duration_ms: float = 0.0
    error: Optional[Unavailable] = None
    resumed: bool = False  # triage sent SIGCONT: the capture had left it stopped
    ppid: int = 0  # its parent: the launcher of a set of ranks is not one of the ranks


@dataclass(frozen=True)
class StackGroup:
    """Threads across processes whose stacks are identical: the stack once, who shares it."""

    key: str
    frames: tuple[Frame, ...]
    members: tuple[tuple[int, int], ...]  # (pid, tid)
    pids: tuple[int, ...]
    wait_kind: str = "unknown"
    wait_frame: str = ""
    odd_one_out: bool = False
    departs_at: str = ""  # for an odd group: the first frame where it leaves the majority's stack
    unchanged_for_s: Optional[float] = None  # same stacks in an earlier capture this long ago


@dataclass(frozen=True)
class StackCapture:
    taken_at: float
    pids: tuple[int, ...]
    processes: tuple[ProcessStacks, ...] = ()
    groups: tuple[StackGroup, ...] = ()
    duration_ms: float = 0.0
    notes: tuple[str, ...] = ()  # e.g. "resumed PID 123 with SIGCONT: left stopped by py-spy"

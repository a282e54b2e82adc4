"""`/proc/PID/task/TID/syscall` read as a name and arguments, per architecture.

The file holds "NR ARG0 … ARG5 SP PC" while a thread is in a system call, "-1 SP PC" when it is
blocked outside one, and "running" while it runs. Numbers differ between architectures (x86_64 has
poll/select/epoll_wait; aarch64 only their p-variants), so the table is chosen by `uname -m`.
"""

from __future__ import annotations

import platform
from typing import NamedTuple, Optional

X86_64 = {
    0: "read", 1: "write", 7: "poll", 17: "pread64", 18: "pwrite64", 19: "readv", 20: "writev", 23: "select",
    34: "pause", 35: "nanosleep", 40: "sendfile", 42: "connect", 43: "accept", 44: "sendto", 45: "recvfrom",
    46: "sendmsg", 47: "recvmsg", 61: "wait4", 65: "semop", 69: "msgsnd", 70: "msgrcv", 72: "fcntl", 73: "flock",
    128: "rt_sigtimedwait", 130: "rt_sigsuspend", 202: "futex", 208: "io_getevents", 220: "semtimedop",
    230: "clock_nanosleep", 232: "epoll_wait", 247: "waitid", 270: "pselect6", 271: "ppoll", 275: "splice",
    281: "epoll_pwait", 288: "accept4", 295: "preadv", 299: "recvmmsg", 327: "preadv2", 426: "io_uring_enter",
    441: "epoll_pwait2", 449: "futex_waitv",
}
AARCH64 = {  # the generic table (also riscv64, loongarch64)
    4: "io_getevents", 22: "epoll_pwait", 25: "fcntl", 32: "flock", 63: "read", 64: "write", 65: "readv",
    66: "writev", 67: "pread64", 68: "pwrite64", 69: "preadv", 71: "sendfile", 72: "pselect6", 73: "ppoll",
    76: "splice", 95: "waitid", 98: "futex", 101: "nanosleep", 115: "clock_nanosleep", 133: "rt_sigsuspend",
    137: "rt_sigtimedwait", 188: "msgrcv", 189: "msgsnd", 192: "semtimedop", 193: "semop", 202: "accept",
    203: "connect", 206: "sendto", 207: "recvfrom", 211: "sendmsg", 212: "recvmsg", 242: "accept4",
    243: "recvmmsg", 260: "wait4", 286: "preadv2", 426: "io_uring_enter", 441: "epoll_pwait2", 449: "futex_waitv",
}
TABLES = {"x86_64": X86_64, "amd64": X86_64, "aarch64": AARCH64, "arm64": AARCH64, "riscv64": AARCH64,
          "loongarch64": AARCH64}


class Syscall(NamedTuple):
    """A thread in a system call: its name ("syscall 999" when not in the table) and six arguments."""

    number: int
    name: str
    args: tuple[int, ...]


def signed(value: int, bits: int = 64) -> int:
    """An argument as the C signed type it is (the file prints them as unsigned hex)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def parse_syscall(text: str, machine: Optional[str] = None) -> Optional[Syscall]:
    """The system call a thread is blocked in; None when it runs, is outside one, or the text is empty.

    A kernel thread prints "0 0x0 … 0x0" (no user context: SP and PC 0), which is not a `read`.
    """
    fields = text.split()
    if len(fields) < 7 or fields[0] == "running":
        return None
    try:
        number = int(fields[0])
        args = tuple(int(a, 16) for a in fields[1:7])
    except ValueError:
        return None
    if number < 0 or (len(fields) == 9 and fields[-2:] == ["0x0", "0x0"]):
        return None
    table = TABLES.get(machine or platform.machine(), {})
    return Syscall(number, table.get(number, f"syscall {number}"), args)

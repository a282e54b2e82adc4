"""Single reads of one process's /proc files, each replacing one shell command, each failing on its own.

`cat /proc/PID/schedstat` (the run count), `getent passwd UID`, `ls /proc/PID/fd | wc -l`,
`cat /proc/PID/task/*/stat`, and whether /proc/PID/stat shows a zombie's real exit status.
"""

from __future__ import annotations

import os
import pwd
from typing import Optional

from ..parse.procfs import parse_stat
from .proc_table import read_bytes, read_text


def read_run_count(pid: int) -> Optional[int]:
    """Times PID's main thread was put on a CPU (/proc/PID/schedstat, third field); None when
    the kernel has no schedstat (CONFIG_SCHED_INFO) or it cannot be read."""
    try:
        return int(read_bytes(f"/proc/{pid}/schedstat").split()[2])
    except (OSError, ValueError, IndexError):
        return None


_USERS: dict[int, str] = {}


def user_name(uid: int) -> str:
    if uid not in _USERS:
        try:
            _USERS[uid] = pwd.getpwuid(uid).pw_name
        except KeyError:
            _USERS[uid] = str(uid)  # no passwd entry (common in containers): show the number
    return _USERS[uid]


def exit_code_of_wait_status(status: int) -> int:
    """A zombie's wait status as a shell shows it: the exit code, or minus the killing signal."""
    return -(status & 0x7F) if status & 0x7F else (status >> 8) & 0xFF


def exit_status_readable(pid: int) -> bool:
    """Whether the kernel shows us PID's real exit code in /proc/PID/stat field 52.

    Without ptrace read access (another user's process, and we are not root) the kernel prints 0
    there: a silent zero that read as "exit code 0" for a child that exited 7. /proc/PID/exe is
    guarded by the same check (PTRACE_MODE_READ_FSCREDS), so its readlink tells: EACCES means the
    field was hidden; ENOENT (a zombie has no executable mapped any more) or success means it is real."""
    try:
        os.readlink(f"/proc/{pid}/exe")
    except PermissionError:
        return False
    except OSError:
        return True
    return True


def open_fd_count(pid: int) -> int:
    """Number of open fds. Linux >= 6.2 reports it as the size of /proc/PID/fd (one stat call);
    older kernels say 0 there, so count the directory instead."""
    size = os.stat(f"/proc/{pid}/fd").st_size
    return size if size > 0 else len(os.listdir(f"/proc/{pid}/fd"))


def thread_states(pid: int) -> dict[str, int]:
    """{"R": 1, "S": 40}: the state letter of every thread (/proc/PID/task/*/stat)."""
    counts: dict[str, int] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = parse_stat(read_text(f"/proc/{pid}/task/{tid}/stat"))
        except OSError:
            continue  # thread ended between listdir and read
        if stat is not None:
            counts[stat.state] = counts.get(stat.state, 0) + 1
    return counts


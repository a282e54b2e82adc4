"""Whether a --log file can be read, and why not: the command line's check before the app opens.

Its own module so that the check costs the command line nothing it does not use: the app's first frame
(#18) comes after it, and the follower (collect/log_follower.py) imports the model's snapshot dataclasses,
~25 ms of CPU to make, which the first frame does not draw. Replaces `test -r FILE && test -f FILE`.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Optional

from ..model.unavailable import Unavailable


def unreadable_reason(exc: OSError, path: str) -> Unavailable:
    """A reason and a hint a person can act on, for a log that cannot be read."""
    if isinstance(exc, FileNotFoundError):
        return Unavailable("no such file", "check the path; `ls -l /proc/PID/fd/1` shows where stdout goes")
    if isinstance(exc, IsADirectoryError):
        return Unavailable("is a directory", "give the log file inside it")
    if isinstance(exc, PermissionError):
        return Unavailable("permission denied", "run triage as root or as the log's owner")
    return Unavailable(f"cannot read: {exc.strerror or exc}", "")


def check_log_readable(path: str) -> Optional[Unavailable]:
    """None when `path` is a readable regular file, else why not (for the command line's early check)."""
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory")
            if not stat.S_ISREG(mode):
                return Unavailable("not a regular file", "give a log file, not a pipe or device")
            os.read(fd, 1)
        finally:
            os.close(fd)
    except OSError as exc:
        return unreadable_reason(exc, path)
    return None

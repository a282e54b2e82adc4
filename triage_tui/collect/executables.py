"""Which executables this process may run: the local half of the privilege rule (#19).

Replaces checking `ls -ld` up a path by hand before running a helper as root. Nothing writable by a less
privileged user than us is executed: the file and every directory above it must be owned by root or by
our effective uid, and writable by neither group nor others, except a root-owned sticky directory such as
/tmp (there nobody can rename or replace an entry they do not own, and the entry below is checked too).
Applied to py-spy here and on the node.
"""

from __future__ import annotations

import os
import shutil
import stat
from typing import Optional


def untrusted_reason(path: str) -> Optional[str]:
    """Why we must not execute `path` (None: we may)."""
    me = os.geteuid()
    try:
        probe = os.path.realpath(path)
        while True:
            st = os.stat(probe)
            if st.st_uid not in (0, me):
                return f"{probe} belongs to uid {st.st_uid}, not to root or to us"
            sticky_root_dir = stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX and st.st_uid == 0
            if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not (sticky_root_dir and probe != os.path.realpath(path)):
                return f"{probe} is writable by group or others"
            if probe == os.sep:
                return None
            probe = os.path.dirname(probe)
    except OSError as exc:
        return f"cannot check {path}: {exc.strerror}"


def trusted_which(name: str, also: tuple[str, ...] = ()) -> tuple[Optional[str], str]:
    """(the first `name` on PATH, or in `also`, that we may run; why the others were refused)."""
    refused = []
    for candidate in (shutil.which(name), *also):
        if not candidate or not os.access(candidate, os.X_OK) or os.path.isdir(candidate):
            continue
        reason = untrusted_reason(candidate)
        if reason is None:
            return candidate, ""
        refused.append(f"{candidate} not run: {reason}")
    return None, "; ".join(dict.fromkeys(refused))

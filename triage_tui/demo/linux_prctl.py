"""The two prctl(2) calls the demo needs, through ctypes (the standard library has no prctl)."""

from __future__ import annotations

import ctypes
import ctypes.util
import signal

PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send `sig` when the thread that started us exits. False where unsupported."""
    try:
        return _libc().prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def set_comm(name: str) -> bool:
    """Set /proc/self/comm (what `ps -o comm` and `top` show; 15 bytes at most), as setproctitle does."""
    try:
        return _libc().prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False

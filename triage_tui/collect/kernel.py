"""OOM-killer and segfault lines from the kernel log that name PIDs of the tree.

Replaces `dmesg | grep -E 'Killed process|oom-kill|segfault'`. Reads /dev/kmsg without blocking
(keeping the descriptor open so each tick reads only new records); falls back to `dmesg` with a
timeout; where neither is readable (kernel.dmesg_restrict for non-root, containers) the report
says so instead of claiming there were no kills.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterable
from typing import Optional

from ..model.snapshot import KernelEvent, KernelReport
from ..model.unavailable import Unavailable
from ..parse.dmesg import parse_kernel_line, parse_kernel_lines
from .proc_table import boot_time

DMESG_TIMEOUT_S = 3.0
MAX_EVENTS = 1000
MAX_RECORDS_PER_TICK = 100_000


class KernelLogCollector:
    """Keeps every OOM/segfault event seen since it started (and what the buffer still held)."""

    def __init__(self, kmsg_path: str = "/dev/kmsg") -> None:
        self._kmsg_path = kmsg_path
        self._fd: Optional[int] = None
        self._events: list[KernelEvent] = []
        self._error: Optional[Unavailable] = None
        self._boot_time = boot_time()
        self._opened = False

    def _open(self) -> None:
        self._opened = True
        try:
            self._fd = os.open(self._kmsg_path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            self._fd = None
            self._error = self._from_dmesg(exc)

    def _from_dmesg(self, kmsg_error: OSError) -> Optional[Unavailable]:
        """One-shot fallback: `dmesg` (it may be allowed where /dev/kmsg is not, e.g. via syslog)."""
        try:
            out = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=DMESG_TIMEOUT_S,
                                 errors="replace")
        except (OSError, subprocess.TimeoutExpired) as exc:
            return self._unreadable(kmsg_error, f"dmesg: {type(exc).__name__}")
        if out.returncode != 0:
            return self._unreadable(kmsg_error, f"dmesg: {out.stderr.strip()[:120]}")
        self._events.extend(parse_kernel_lines(out.stdout, self._boot_time))
        return None

    @staticmethod
    def _unreadable(kmsg_error: OSError, dmesg_detail: str) -> Unavailable:
        return Unavailable(f"kernel log not readable ({kmsg_error.strerror or kmsg_error}; {dmesg_detail})",
                           "run triage as root, or sysctl kernel.dmesg_restrict=0")

    def _read_new(self) -> None:
        assert self._fd is not None
        for _ in range(MAX_RECORDS_PER_TICK):
            try:
                record = os.read(self._fd, 8192)
            except BlockingIOError:
                return  # no new records
            except OSError as exc:
                if exc.errno == errno.EPIPE:
                    continue  # records were overwritten before we read them; go on with the rest
                self._error = Unavailable(f"reading /dev/kmsg: {exc.strerror}")
                return
            if not record:
                return
            first_line = record.decode("utf-8", "replace").split("\n", 1)[0]
            event = parse_kernel_line(first_line, self._boot_time)
            if event is not None:
                self._events.append(event)
        del self._events[:-MAX_EVENTS]

    def collect(self, pids: Iterable[int]) -> KernelReport:
        """Events naming any of `pids` (pass the tree's PIDs and the ones that exited)."""
        if not self._opened:
            self._open()
        if self._fd is not None:
            self._read_new()
        wanted = set(pids)
        events = tuple(e for e in self._events if e.pid in wanted)
        return KernelReport(events=events, error=self._error)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

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
from collections.abc import Iterable, Mapping
from typing import Optional, Union

from ..model.snapshot import KernelEvent, KernelReport
from ..model.unavailable import Unavailable
from ..parse.dmesg import parse_kernel_line, parse_kernel_lines
from .proc_table import boot_time

DMESG_TIMEOUT_S = 3.0
MAX_EVENTS = 1000
MAX_RECORDS_PER_TICK = 100_000
MAX_UNSEEN = 20
START_SLACK_S = 1.0  # a process's start (clock ticks) and a kernel stamp (microseconds) round differently


def logged_while_alive(event: KernelEvent, started: Optional[float]) -> bool:
    """False for a line logged before the process now holding its PID started: it was about an earlier process
    that had the same PID (PIDs wrap at pid_max, 32768 on many nodes). True when either time is unknown."""
    if started is None or not isinstance(event.at, (int, float)):
        return True
    return event.at >= started - START_SLACK_S


def unseen_events(events: Iterable[KernelEvent], seen: Iterable[int], names: Iterable[str],
                  since: Optional[float]) -> tuple[KernelEvent, ...]:
    """Events about a PID never seen in the tree that may still be the tree's: the kernel's name for it is
    one of the tree's names and it was logged after the tree's oldest process started. Matched by name and
    time, never by PID (that process is gone); the newest MAX_UNSEEN."""
    if since is None:
        return ()
    known, wanted = set(seen), {n for n in names if n}
    out = [e for e in events if e.pid is not None and e.pid not in known and e.comm and e.comm in wanted
           and isinstance(e.at, (int, float)) and e.at >= since]
    return tuple(out[-MAX_UNSEEN:])


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

    def collect(self, pids: Union[Mapping[int, Optional[float]], Iterable[int]], names: Iterable[str] = (),
                since: Optional[float] = None) -> KernelReport:
        """Events naming any of `pids` (pass the tree's PIDs and the ones that exited; a mapping gives each one's
        start, and a line logged before it is left out: another process's with a reused PID); and, as `unseen`,
        those naming another PID whose name is one of `names` (the tree's), logged at or after `since` (when the
        tree's oldest process started): a member that died before triage saw it."""
        if not self._opened:
            self._open()
        if self._fd is not None:
            self._read_new()
        started: Mapping[int, Optional[float]] = pids if isinstance(pids, Mapping) else dict.fromkeys(pids)
        events = tuple(e for e in self._events
                       if e.pid is not None and e.pid in started and logged_while_alive(e, started[e.pid]))
        wanted = set(started)
        return KernelReport(events=events, unseen=unseen_events(self._events, wanted, names, since),
                            error=self._error)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

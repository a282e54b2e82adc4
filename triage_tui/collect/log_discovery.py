"""Which files a process tree writes its log to: fd 1 and 2, and every other regular file it holds open
for writing (`ls -l /proc/PID/fd` with the open flags of /proc/PID/fdinfo)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from typing import Optional, Tuple, Union

from ..model.snapshot import ProcessInfo

MAX_DISCOVERED = 16  # stdout/stderr files discovered per tick


def _pids(processes: Iterable[Union[ProcessInfo, int]]) -> list[int]:
    return [p if isinstance(p, int) else p.pid for p in processes]


_STREAMS = ((1, "stdout"), (2, "stderr"))
RECHECK_TICKS = 8  # a known process's stdout/stderr links are read again every this many ticks
MAX_FDS_SCANNED = 512  # fds of one process looked at for files open for writing
# files a process writes that are not logs: data, weights, locks, databases, sockets' temp files
_NOT_LOGS = (".lock", ".pid", ".db", ".sqlite", ".sqlite3", ".safetensors", ".pt", ".pth", ".bin", ".ckpt",
             ".npy", ".npz", ".h5", ".parquet", ".arrow", ".so", ".o", ".tmp", ".idx", ".jsonl.gz")
Stream = Tuple[int, str, Optional[str]]  # (fd, "stdout" | "stderr" | "fd N", where it points)


def _written_fd(pid: int, fd: int, proc_root: str) -> bool:
    """fdinfo's flags: opened O_WRONLY or O_RDWR (the low two bits of the octal flags)."""
    try:
        with open(f"{proc_root}/{pid}/fdinfo/{fd}") as fh:
            for line in fh:
                if line.startswith("flags:"):
                    return int(line.split()[1], 8) & 3 in (1, 2)
    except (OSError, ValueError, IndexError):
        return False
    return False


def stream_targets(pid: int, proc_root: str = "/proc") -> tuple[Optional[str], Optional[str]]:
    """Where fd 1 and fd 2 of PID point (`ls -l /proc/PID/fd/1 /proc/PID/fd/2`); None when unreadable."""
    out: list[Optional[str]] = []
    for fd, _ in _STREAMS:
        try:
            out.append(os.readlink(f"{proc_root}/{pid}/fd/{fd}"))
        except OSError:
            out.append(None)  # exited, no such fd, or not ours to read: discovery is best effort
    return out[0], out[1]


def written_targets(pid: int, proc_root: str = "/proc") -> tuple[Stream, ...]:
    """fd 1, fd 2, and every other file PID holds open for writing (`ls -l /proc/PID/fd` with the open flags
    of /proc/PID/fdinfo): a server's own log file is as much its log as its stderr."""
    out: list[Stream] = [(fd, name, target)  # noqa: B905 - no strict=: the node agent runs on 3.8
                         for (fd, name), target in zip(_STREAMS, stream_targets(pid, proc_root))]
    try:
        fds = sorted(int(n) for n in os.listdir(f"{proc_root}/{pid}/fd") if n.isdecimal())
    except OSError:
        return tuple(out)
    for fd in fds[:MAX_FDS_SCANNED]:
        if fd < 3:
            continue
        try:
            target = os.readlink(f"{proc_root}/{pid}/fd/{fd}")
        except OSError:
            continue
        if not target.startswith("/") or target.startswith(("/dev/", "/proc/", "/sys/")) \
                or target.lower().endswith(_NOT_LOGS):
            continue
        if _written_fd(pid, fd, proc_root):
            out.append((fd, f"a file PID {pid} writes (fd {fd})", target))
    return tuple(out)


def _pick_files(targets: Iterable[tuple[int, tuple[Stream, ...]]], proc_root: str) -> list[tuple[str, str]]:
    """Regular files, deduplicated by path, the most recently written first."""
    found: dict[str, tuple[str, float]] = {}
    for pid, streams in targets:
        for fd, stream, target in streams:
            # pipes, terminals and sockets are not paths; a deleted file's name leads nowhere
            if target is None or not target.startswith("/") or target.endswith(" (deleted)") or target in found:
                continue
            try:
                st = os.stat(f"{proc_root}/{pid}/fd/{fd}")
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and len(found) < MAX_DISCOVERED:
                found[target] = (stream if stream.startswith("a file") else f"{stream} of PID {pid}", st.st_mtime)
    ordered = sorted(found.items(), key=lambda item: -item[1][1])
    return [(path, source) for path, (source, _mtime) in ordered]


def discover_log_paths(
    processes: Sequence[Union[ProcessInfo, int]], proc_root: str = "/proc"
) -> list[tuple[str, str]]:
    """Regular files the tree's stdout and stderr point to, as (path, source), deduplicated by path.

    Replaces `ls -l /proc/PID/fd/1 /proc/PID/fd/2` for every process. Pipes, terminals, sockets and
    /dev/null are skipped; so are deleted files (the name would lead nowhere). The source names the
    first process (in tree order) seen writing there: "stdout of PID 123".
    """
    return _pick_files(((pid, written_targets(pid, proc_root)) for pid in _pids(processes)), proc_root)


class StreamLinks:
    """discover_log_paths across ticks: a process's fd 1 and 2 links are read when it is first seen
    and then every RECHECK_TICKS ticks (staggered by PID), not every tick: reading two links of each
    of 1,000 processes was a fifth of a refresh, and a process rarely points its stdout elsewhere
    once running (when it does, the new file is found within RECHECK_TICKS ticks). A row that is
    last tick's very object belongs to a process that has not run since (collect/processes.py):
    it opened nothing, so its links are not re-read on its turn either."""

    def __init__(self, proc_root: str) -> None:
        self.proc_root = proc_root
        self._tick = 0
        self._links: dict[tuple[int, object], tuple[Stream, ...]] = {}
        self._rows: dict[tuple[int, object], object] = {}
        self.rechecks = 0  # written_targets calls, for the tests
        self._last: tuple[Sequence[Union[ProcessInfo, int]], list[tuple[int, tuple[Stream, ...]]]] = ((), [])

    def paths(self, processes: Sequence[Union[ProcessInfo, int]]) -> list[tuple[str, str]]:
        self._tick += 1
        if processes is self._last[0] and isinstance(processes, tuple) and \
                not any(isinstance(p, int) for p in processes[:1]):
            # last tick's very tuple of rows: every row is last tick's object, so none is re-checked on its turn
            # (see above) and the links are last tick's; only the files' mtimes are looked at again
            return _pick_files(self._last[1], self.proc_root)
        links: dict[tuple[int, object], tuple[Stream, ...]] = {}
        rows: dict[tuple[int, object], object] = {}
        ordered = []
        for p in processes:
            pid, started = (p, None) if isinstance(p, int) else (p.pid, p.start_time)
            key = (pid, started if isinstance(started, float) else None)  # a reused PID is a new process
            streams = self._links.get(key)
            if streams is None or ((pid + self._tick) % RECHECK_TICKS == 0
                                   and (isinstance(p, int) or self._rows.get(key) is not p)):
                streams = written_targets(pid, self.proc_root)
                self.rechecks += 1
            links[key] = streams
            rows[key] = p
            ordered.append((pid, streams))
        self._links, self._rows = links, rows  # processes gone from the tree are forgotten
        self._last = (processes, ordered)
        return _pick_files(ordered, self.proc_root)


"""Log files: follow them by offset, and find the ones the target tree writes to.

Replaces `tail -F server.log` (and `ls -l /proc/PID/fd/1` to find where stdout went). A follower
reads only the bytes appended since the last poll (by offset, as toolong does), so a tick costs
what the server wrote, not the size of the file. It survives rotation (rename and re-create: the
old file is finished, the new one read from its start) and copytruncate (read again from 0), keeps
a partial line until its newline arrives, collapses carriage-return progress bars to their latest
state, caps very long lines and replaces undecodable bytes.

Rotation is told by inode and size together, and by the bytes already read: a copytruncate whose
file refills past our old offset within one poll has the same inode and a larger size, and reading
on from the old offset would drop the new file's first lines and show a fragment never written as a
line. So the follower keeps the first bytes of the file and the bytes just before its offset, and
reads them again each poll (two small preads): when either changed, the file was rewritten and is
read again from its start.
"""

from __future__ import annotations

import collections
import errno
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Optional, Tuple, Union

from ..model.options import CollectOptions
from ..model.snapshot import LogLine, LogTail, ProcessInfo
from ..model.unavailable import Unavailable

START_BYTES = 64 * 1024  # on first open, read at most this much from the end
MAX_LINES = 200  # ring of recent lines kept per file
MAX_LINE_BYTES = 4096  # longer lines are cut, with a marker saying how much
MAX_READ_BYTES = 4 * 1024 * 1024  # per poll: a log that floods is skipped ahead, with a marker
MAX_DISCOVERED = 16  # stdout/stderr files discovered per tick
MAX_FOLLOWED = 32  # files followed for the life of an incident (a tree that churns logs stays bounded)
SIGNATURE_BYTES = 64  # bytes of the file's head and of what precedes our offset, checked each poll

# (pattern, level), first match wins. Tracebacks are also tracked across lines (see _Classifier).
LEVEL_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), level)
    for p, level in (
        (r"Traceback \(most recent call last\)", "traceback"),
        (r"Watchdog caught collective operation timeout", "error"),
        (r"CUDA error|NCCL error|cudaError", "error"),
        (r"NCCL WARN", "warning"),  # NCCL's own warnings, whatever words follow
        (r"\bSegmentation fault\b|\bcore dumped\b|\bKilled\b|\bAborted\b", "error"),
        (r"\b(out of memory|OutOfMemory|OOM)\b", "error"),
        (r"\btimed out\b|\bTimeout\b|\btimeout\b.*\b(exceed|expired|reached)", "error"),
        (r"\b(ERROR|FATAL|CRITICAL|Fatal)\b|\berror:", "error"),
        (r"\w*(Error|Exception)\b", "error"),
        (r"\b(WARNING|WARN|Warning)\b|\w+Warning\b|\bwarning:", "warning"),
    )
)


def classify_line(text: str) -> str:
    """info | warning | error | traceback, from the pattern table."""
    for pattern, level in LEVEL_PATTERNS:
        if pattern.search(text):
            return level
    return "info"


class _Classifier:
    """Marks lines, remembering whether we are inside a Python traceback.

    Inside a traceback the indented lines ("  File ...", code) are `traceback`; the first line that
    is not indented ends it (the exception line, "ValueError: ..."), marked `error`.
    """

    def __init__(self) -> None:
        self.in_traceback = False

    def level(self, text: str) -> str:
        level = classify_line(text)
        if level == "traceback":
            self.in_traceback = True
            return level
        if self.in_traceback:
            if text[:1] in (" ", "\t") or not text.strip():
                return "traceback"
            self.in_traceback = False
            return "error"
        return level


def _latest_cr_state(raw: bytes) -> bytes:
    """"Loading: 10%\\rLoading: 20%\\r" → "Loading: 20%": what a terminal would show."""
    if b"\r" not in raw:
        return raw
    for segment in reversed(raw.split(b"\r")):
        if segment:
            return segment
    return b""


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").expandtabs(4)


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


class LogFollower:
    """Follows one log file across polls. Not thread-safe: one collector thread polls it."""

    def __init__(
        self,
        path: str,
        source: str = "--log",
        start_bytes: int = START_BYTES,
        max_lines: int = MAX_LINES,
        max_line_bytes: int = MAX_LINE_BYTES,
        max_read_bytes: int = MAX_READ_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self.source = source
        self.start_bytes = start_bytes
        self.max_line_bytes = max_line_bytes
        self.max_read_bytes = max_read_bytes
        self.clock = clock
        self.lines: collections.deque[LogLine] = collections.deque(maxlen=max_lines)
        self._fd: Optional[int] = None
        self._ident: tuple[int, int] = (0, 0)  # (st_dev, st_ino) of the open file
        self._offset = 0
        self._partial = b""  # bytes after the last newline, CR-collapsed and capped
        self._partial_cut = 0  # bytes of the partial line dropped by the cap
        self._classifier = _Classifier()
        self._last_byte_at: Optional[float] = None
        self._size: Optional[int] = None
        self._head = b""  # the file's first bytes as last read (up to SIGNATURE_BYTES)
        self._before = b""  # the bytes just before self._offset as last read

    # ------------------------------------------------------------ public
    def poll(self) -> LogTail:
        """Read what was appended since the last poll; return the tail as it stands."""
        now = self.clock()
        error: Optional[Unavailable] = None
        try:
            self._follow(now)
        except OSError as exc:
            error = unreadable_reason(exc, self.path)
        return self._tail(now, error)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # ------------------------------------------------------------ reading
    def _follow(self, now: float) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            # Mid-rotation (renamed, not yet re-created): finish what the old file holds, then report.
            if self._fd is not None:
                self._read_to_end(self._fd, os.fstat(self._fd).st_size, now)
            raise
        if not stat.S_ISREG(st.st_mode):
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory")
            raise OSError(errno.EINVAL, "not a regular file")
        if self._fd is not None and (st.st_dev, st.st_ino) != self._ident:
            # Rotated: the name now points at a new file. Finish the old one, then start the new at 0.
            self._read_to_end(self._fd, os.fstat(self._fd).st_size, now)
            self._flush_partial(now)
            self.close()
            self._open(from_start=True)
        elif self._fd is None:
            self._open(from_start=False)
            self._last_byte_at = st.st_mtime  # a hung server's log has been silent since before we came
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size < self._offset or self._rewritten(self._fd):
            # copytruncate: the file was emptied in place (and may have refilled past where we were).
            # What is there now is new.
            self._flush_partial(now)
            self._offset = 0
            self._last_byte_at = now
        self._read_to_end(self._fd, size, now)
        self._size = size
        self._remember(self._fd)

    def _rewritten(self, fd: int) -> bool:
        """Whether the bytes we already read are no longer where they were (same inode, new content)."""
        if self._offset <= 0:
            return False
        if self._head and os.pread(fd, len(self._head), 0) != self._head:
            return True
        return bool(self._before) and os.pread(fd, len(self._before), self._offset - len(self._before)) != self._before

    def _remember(self, fd: int) -> None:
        head_len = min(SIGNATURE_BYTES, self._offset)
        self._head = os.pread(fd, head_len, 0) if head_len else b""
        before = min(SIGNATURE_BYTES, self._offset)
        self._before = os.pread(fd, before, self._offset - before) if before else b""

    def _open(self, from_start: bool) -> None:
        # O_NONBLOCK: if a FIFO replaced the file since the stat, opening it must not wait for a writer
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        st = os.fstat(fd)
        self._fd = fd
        self._ident = (st.st_dev, st.st_ino)
        self._offset = 0
        self._head = self._before = b""  # a new file: nothing of it read yet
        if not from_start and st.st_size > self.start_bytes:
            # Start with the last lines: skip to the first line break after the cut.
            start = st.st_size - self.start_bytes
            head = os.pread(fd, self.start_bytes, start)
            newline = head.find(b"\n")
            self._offset = start + newline + 1 if newline >= 0 else st.st_size

    def _read_to_end(self, fd: int, size: int, now: float) -> None:
        if size <= self._offset:
            return
        if size - self._offset > self.max_read_bytes:
            skipped = size - self.max_read_bytes - self._offset
            self._flush_partial(now)
            self._add_line(f"[triage: skipped {skipped} bytes written faster than one refresh reads]", now)
            self._offset = size - self.max_read_bytes
        first_read = self._size is None
        while self._offset < size:
            chunk = os.pread(fd, min(1024 * 1024, size - self._offset), self._offset)
            if not chunk:
                break
            self._offset += len(chunk)
            self._consume(chunk, now)
        if not first_read:
            self._last_byte_at = now

    def _consume(self, chunk: bytes, now: float) -> None:
        pieces = chunk.split(b"\n")
        for i, piece in enumerate(pieces):
            self._append_partial(piece)
            if i < len(pieces) - 1:  # a newline followed this piece: the line is complete
                self._flush_partial(now, complete=True)

    def _append_partial(self, piece: bytes) -> None:
        data = self._partial + piece
        if b"\r" in piece:
            # A carriage return overwrites the line on a terminal: keep only the latest state, and the
            # trailing \r (if any) so that the next bytes start a new state instead of extending this one.
            data = _latest_cr_state(data) + (b"\r" if data.endswith(b"\r") else b"")
            self._partial_cut = 0
        if len(data) > self.max_line_bytes:
            self._partial_cut += len(data) - self.max_line_bytes
            data = data[: self.max_line_bytes]
        self._partial = data

    def _flush_partial(self, now: float, complete: bool = False) -> None:
        if not complete and not self._partial and not self._partial_cut:
            return
        raw = _latest_cr_state(self._partial)
        text = _decode(raw)
        if self._partial_cut:
            text += f" … [line cut: {self._partial_cut} more bytes]"
        self._partial, self._partial_cut = b"", 0
        self._add_line(text, now)

    def _add_line(self, text: str, now: float) -> None:
        self.lines.append(LogLine(text=text, seen_at=now, level=self._classifier.level(text)))

    # ------------------------------------------------------------ result
    def _tail(self, now: float, error: Optional[Unavailable]) -> LogTail:
        last = self._last_byte_at
        partial = _decode(_latest_cr_state(self._partial))
        return LogTail(
            path=self.path,
            source=self.source,
            lines=tuple(self.lines),
            partial=partial,
            size_bytes=self._size if self._size is not None else Unavailable("not read", ""),
            seconds_since_last_byte=max(0.0, now - last) if last is not None else Unavailable("nothing read yet"),
            last_byte_at=last if last is not None else Unavailable("nothing read yet"),
            error=error,
        )


# ---------------------------------------------------------------- discovery
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


class _StreamLinks:
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

    def paths(self, processes: Sequence[Union[ProcessInfo, int]]) -> list[tuple[str, str]]:
        self._tick += 1
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
        return _pick_files(ordered, self.proc_root)


class LogsCollector:
    """The logs source of a snapshot: `--log` files plus discovered stdout/stderr files.

    Called once per tick by the snapshot collector as `collector(processes, options)`. Keeps one
    follower per path for the life of the incident, so a discovered log stays followed after the
    process that wrote it exits.
    """

    def __init__(self, proc_root: str = "/proc", clock: Callable[[], float] = time.time) -> None:
        self.proc_root = proc_root
        self.clock = clock
        self._followers: dict[str, LogFollower] = {}
        self._links = _StreamLinks(proc_root)

    def __call__(self, processes: Sequence[Union[ProcessInfo, int]], options: CollectOptions) -> tuple[LogTail, ...]:
        wanted: list[tuple[str, str]] = [(path, "--log") for path in options.logs]
        if options.discover_logs:
            wanted += self._links.paths(processes)
        for path, source in wanted:
            key = os.path.abspath(path)
            if key not in self._followers and (source == "--log" or len(self._followers) < MAX_FOLLOWED):
                self._followers[key] = LogFollower(path, source=source, clock=self.clock)
        return tuple(follower.poll() for follower in self._followers.values())

    def close(self) -> None:
        for follower in self._followers.values():
            follower.close()
        self._followers.clear()

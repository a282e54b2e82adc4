"""One log file followed by offset.

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
import stat
import time
from collections.abc import Callable
from typing import Optional

from ..model.snapshot import LogLine, LogTail
from ..model.unavailable import Unavailable
from .log_levels import LineClassifier
from .log_readable import unreadable_reason  # the command line's check lives there (#18: before the app)

START_BYTES = 64 * 1024  # on first open, read at most this much from the end
MAX_LINES = 200  # ring of recent lines kept per file
MAX_LINE_BYTES = 4096  # longer lines are cut, with a marker saying how much
MAX_READ_BYTES = 4 * 1024 * 1024  # per poll: a log that floods is skipped ahead, with a marker
SIGNATURE_BYTES = 64  # bytes of the file's head and of what precedes our offset, checked each poll


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
        self._classifier = LineClassifier()
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


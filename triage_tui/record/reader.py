"""Reading a record back: full Moments rebuilt from the deltas, in order, and what was skipped.

A record is read as far as it can be. A last line cut mid-write (the refresh in flight when
triage was killed), a line that is not JSON, a kind or a field this version does not know (a
newer triage wrote it): each is skipped and said so in `Recording.skipped`, never a crash. A
file that is not a triage record at all is one RecordError. A gzip record (the default) is read the
same way: decompressed as far as the bytes go, member after member (a file appended to by several
runs), so one cut mid-write loses only its last line, as with plain text.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import zlib
from dataclasses import dataclass, field
from typing import Any, Optional

from ..model.codec import LATEST_TIME, damage_listener, from_data
from ..model.moment import Moment
from ..model.snapshot import LogLine, Snapshot
from ..model.stacks import StackCapture
from .recorder import RECORD_SCHEMA_VERSION, RecordError
from .snapshot_codec import MomentDecoder

KNOWN_KINDS = ("header", "snapshot", "stacks", "changes", "note")
_NOT_SNAPSHOT = (b'"kind":"stacks"', b'"kind":"changes"', b'"kind":"note"')


@dataclass
class Recording:
    path: str
    header: dict[str, Any]
    moments: list[Moment] = field(default_factory=list)
    stacks: list[StackCapture] = field(default_factory=list)  # each with its taken_at
    changes: list[tuple[float, str]] = field(default_factory=list)  # (at, changelog line), every moment's
    notes: list[tuple[float, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    capped: bool = False  # the recorder stopped at its size cap
    elided: int = 0  # moments read for their changelog only (read_record(ends=True)), not in `moments`

    @property
    def snapshots(self) -> list[Snapshot]:
        return [m.snapshot for m in self.moments]

    @property
    def host(self) -> str:
        return str(self.header.get("host", "")) or (self.moments[0].snapshot.host if self.moments else "")

    @property
    def changelog(self) -> list[str]:
        return [line for _, line in self.changes]

    def log_lines(self) -> list[tuple[str, LogLine]]:
        """Every log line seen, once each, in the order first seen: (log path, line)."""
        seen: set[tuple[str, str, float]] = set()
        out: list[tuple[str, LogLine]] = []
        for moment in self.moments:
            for tail in moment.snapshot.logs:
                for line in tail.lines:
                    key = (tail.path, line.text, line.seen_at)
                    if key not in seen:
                        seen.add(key)
                        out.append((tail.path, line))
        return out


class _Skips:
    """Collects what was skipped, one line per kind of problem with a count, in first-seen order."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.first_line: dict[str, int] = {}

    def add(self, what: str, line_no: int) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1
        self.first_line.setdefault(what, line_no)

    def lines(self) -> list[str]:
        out = []
        for what, n in self.counts.items():
            where = f"line {self.first_line[what]}" + (f" and {n - 1} more" if n > 1 else "")
            out.append(f"{what} ({where})")
        return out


# a keyframe's line as the encoder writes it: a hint only (a line that turns out not to be one just
# makes the deltas after it wait for the next keyframe, as a broken line does)
_KEYFRAME = re.compile(rb'^\{"kind":"snapshot","at":[-0-9.eE+]{1,32},"full":')


def read_record(path: os.PathLike[str] | str, ends: bool = False) -> Recording:
    """Read the record at `path`. Raises RecordError when it cannot be read or is not a triage record.

    `ends` (a report of the record): rebuild only the first moment and the moments from the last
    keyframe on; every moment between gives its changelog lines (its diagnosis) but its snapshot is not
    rebuilt — that was 95 % of the time, and a report shows the first and the last moments only."""
    try:
        # O_NONBLOCK for the open only: a FIFO would wait for a writer forever
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as f:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory")
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise RecordError(f"cannot read {path}: not a regular file")
            os.set_blocking(fd, True)
            data = f.read()
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror or exc}") from None
    data, gzip_problem = _gunzip(data) if data[:2] == _GZIP_MAGIC else (data, "")
    raw_lines = data.split(b"\n")
    cut_tail = raw_lines.pop() if raw_lines else b""  # bytes after the last newline: a line cut mid-write
    header, first = _find_header(raw_lines, path)
    recording = Recording(path=str(path), header=header)
    skips = _Skips()
    newer = header.get("schema_version")
    if isinstance(newer, int) and newer > RECORD_SCHEMA_VERSION:
        recording.skipped.append(
            f"written by a newer triage (record schema {newer}, this one reads {RECORD_SCHEMA_VERSION}): "
            "replaying what this version understands")
    last_key = -1
    if ends:
        last_key = next((i for i in range(len(raw_lines) - 1, first - 1, -1) if _KEYFRAME.match(raw_lines[i])), -1)
    line_no = first
    decoder = MomentDecoder(unknown=lambda what: skips.add(f"unknown field {what} ignored", line_no))
    broken_since: Optional[int] = None  # a snapshot could not be rebuilt: deltas wait for a keyframe
    def damaged(what: str) -> None:  # a field the codec left out (see model.codec): counted here
        skips.add(f"damaged value left out ({what.split(':')[0]})", line_no)

    with damage_listener(damaged):
        for index in range(first, len(raw_lines)):
            line_no = index + 1
            raw = raw_lines[index].strip()
            if not raw:
                continue
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
                skips.add("line that is not JSON skipped", line_no)
                if not any(marker in raw for marker in _NOT_SNAPSHOT):  # it may have been a snapshot: deltas
                    decoder.reset()  # after it would apply to the wrong base, so wait for a keyframe
                    broken_since = line_no
                continue
            if not isinstance(record, dict):
                skips.add("line that is not a record skipped", line_no)
                continue
            kind = record.get("kind")
            try:
                if kind == "snapshot":
                    if broken_since is not None and "full" not in record:
                        skips.add("snapshot delta skipped: an earlier snapshot could not be rebuilt", line_no)
                        continue
                    if recording.moments and index < last_key:
                        at = _time(record.get("at"))  # a moment the report does not show: its changelog only
                        recording.changes.extend((at, line) for line in decoder.decode_changes(record))
                        recording.elided += 1
                        continue
                    moment = decoder.decode(record)
                    recording.moments.append(moment)
                    recording.changes.extend((moment.snapshot.taken_at, line) for line in moment.diagnosis.changes)
                    broken_since = None
                elif kind == "stacks":
                    capture = from_data(StackCapture, record["capture"])
                    decoder.captures[capture.taken_at] = capture
                    recording.stacks.append(capture)
                elif kind == "changes":  # schema 1: a moment's changelog lines came after it
                    at = _time(record.get("at"))
                    lines = record.get("lines", [])
                    if not isinstance(lines, list):
                        raise TypeError("lines is not a list")
                    lines = [text for text in lines if isinstance(text, str)]
                    recording.changes.extend((at, line) for line in lines)
                    decoder.add_changes(at, lines)
                    if recording.moments and decoder.prev is not None and recording.moments[-1].snapshot.taken_at == at:
                        recording.moments[-1] = decoder.prev
                elif kind == "note":
                    recording.notes.append((_time(record.get("at")), str(record.get("text", ""))))
                    if record.get("capped"):
                        recording.capped = True
                elif kind == "header":  # the file was appended to by another run: carry on from a fresh start
                    decoder.reset()
                else:
                    skips.add(f"record of unknown kind {str(kind)[:40]!r} skipped (written by a newer triage?)", line_no)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError, OverflowError) as exc:
                if kind == "snapshot":
                    decoder.reset()
                    broken_since = line_no
                skips.add(f"{str(kind)[:40]} record that could not be read skipped ({type(exc).__name__}: {str(exc)[:200]})",
                          line_no)
    recording.skipped.extend(skips.lines())
    if cut_tail.strip():
        recording.skipped.append(
            f"the last line (line {len(raw_lines) + 1}, {len(cut_tail)} bytes) was cut mid-write: "
            "the refresh in flight when triage stopped is lost")
    if recording.capped:
        recording.skipped.append("the record reached its size cap: nothing after that was recorded")
    if gzip_problem:
        recording.skipped.append(gzip_problem)
    return recording


_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 64 * 1024


def _gunzip(data: bytes) -> tuple[bytes, str]:
    """Everything the gzip members in `data` decompress to, and what could not be read ("" when all).
    A stream cut mid-write (no trailer) is normal for a record whose writer was killed: what was
    flushed before the cut decompresses, so it is not counted as a problem."""
    out: list[bytes] = []
    rest = data
    while rest:
        if rest[:2] != _GZIP_MAGIC:
            return b"".join(out), f"{len(rest)} bytes after the gzip data are not gzip: ignored"
        inflater = zlib.decompressobj(31)
        offset = 0
        while offset < len(rest) and not inflater.eof:  # in chunks: damage loses only what follows it
            try:
                out.append(inflater.decompress(rest[offset:offset + _CHUNK]))
            except zlib.error as exc:
                return b"".join(out), f"the gzip data is damaged ({exc}): read up to the damage"
            offset += _CHUNK
        if not inflater.eof:
            break  # cut mid-write: what came out is all there is
        rest = inflater.unused_data + rest[offset:]
    return b"".join(out), ""


def _time(value: object) -> float:
    """A record's `at`: a finite time within range; 0.0 when absent (the line is kept, its time unknown)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < LATEST_TIME:
        return float(value)
    if value is not None:
        raise ValueError(f"time {str(value)[:40]} out of range")
    return 0.0


def _find_header(raw_lines: list[bytes], path: object) -> tuple[dict[str, Any], int]:
    """The header record (the first non-empty line) and the index of the line after it."""
    for index, raw in enumerate(raw_lines):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            record = None
        if isinstance(record, dict) and record.get("kind") == "header":
            return record, index + 1
        break
    raise RecordError(f"{path} is not a triage record (no header line: expected a JSON line with "
                      '"kind": "header" first)')

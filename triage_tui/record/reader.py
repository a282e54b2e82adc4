"""Reading a record back: full snapshots rebuilt from the deltas, in order, and what was skipped.

A record is read as far as it can be. A last line cut mid-write (the refresh in flight when
triage was killed), a line that is not JSON, a kind or a field this version does not know (a
newer triage wrote it): each is skipped and said so in `Recording.skipped`, never a crash. A
file that is not a triage record at all is one RecordError.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Optional

from ..model.codec import LATEST_TIME, damage_listener, from_data
from ..model.snapshot import LogLine, Snapshot
from ..model.stacks import StackCapture
from .recorder import RECORD_SCHEMA_VERSION, RecordError
from .snapshot_codec import SnapshotDecoder

KNOWN_KINDS = ("header", "snapshot", "stacks", "changes", "note")
_NOT_SNAPSHOT = (b'"kind":"stacks"', b'"kind":"changes"', b'"kind":"note"')


@dataclass
class Recording:
    path: str
    header: dict[str, Any]
    snapshots: list[Snapshot] = field(default_factory=list)
    stacks: list[StackCapture] = field(default_factory=list)  # each with its taken_at
    changes: list[tuple[float, str]] = field(default_factory=list)  # (at, changelog line)
    notes: list[tuple[float, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    capped: bool = False  # the recorder stopped at its size cap
    snapshot_count: int = 0  # snapshots read (with keep="ends" only the first and the last are kept)

    @property
    def host(self) -> str:
        return str(self.header.get("host", "")) or (self.snapshots[0].host if self.snapshots else "")

    @property
    def changelog(self) -> list[str]:
        return [line for _, line in self.changes]

    def log_lines(self) -> list[tuple[str, LogLine]]:
        """Every log line seen, once each, in the order first seen: (log path, line)."""
        seen: set[tuple[str, str, float]] = set()
        out: list[tuple[str, LogLine]] = []
        for snapshot in self.snapshots:
            for tail in snapshot.logs:
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
        self.seen: set[tuple[str, int]] = set()

    def add(self, what: str, line_no: int) -> None:
        if (what, line_no) in self.seen:  # a line read twice (keep="ends" decodes its last group again)
            return
        self.seen.add((what, line_no))
        self.counts[what] = self.counts.get(what, 0) + 1
        self.first_line.setdefault(what, line_no)

    def lines(self) -> list[str]:
        out = []
        for what, n in self.counts.items():
            where = f"line {self.first_line[what]}" + (f" and {n - 1} more" if n > 1 else "")
            out.append(f"{what} ({where})")
        return out


MAX_LINE_BYTES = 256 * 1024 * 1024  # a longer line is damage (the recorder's whole cap is 256 MiB)
_DAMAGE = (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError, OverflowError)


def _lines(f: BinaryIO) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, bytes, ended by a newline) for each line, reading in bounded pieces: a file of
    any size streams, and a line longer than MAX_LINE_BYTES is given as b"" (the reader counts it)."""
    line_no = 0
    while True:
        raw = f.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        line_no += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while True:  # skip the rest of the over-long line
                rest = f.readline(1024 * 1024)
                if not rest or rest.endswith(b"\n"):
                    break
            yield line_no, b"", True
            continue
        yield line_no, raw, raw.endswith(b"\n")


def read_record(path: os.PathLike[str] | str, keep: str = "all") -> Recording:
    """Read the record at `path`. Raises RecordError when it cannot be read or is not a triage record.

    Streams the file line by line. `keep="ends"` keeps only the first and the last snapshot (what a
    report needs: its time span and the state at the end), so a record of any size is reported in
    memory bounded by one snapshot and in the time the last keyframe's group takes: snapshot lines
    before it are counted, not parsed (their damage goes unseen; the report shows none of them).
    `Recording.snapshot_count` says how many snapshots the record holds."""
    try:
        # O_NONBLOCK for the open only: a FIFO would wait for a writer forever
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror or exc}") from None
    with open(fd, "rb") as f:
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                raise RecordError(f"cannot read {path}: Is a directory")
            if not stat.S_ISREG(mode):
                raise RecordError(f"cannot read {path}: not a regular file")
            os.set_blocking(fd, True)
            return _read(f, path, keep)
        except OSError as exc:
            raise RecordError(f"cannot read {path}: {exc.strerror or exc}") from None


_SNAPSHOT_MARK = b'"kind":"snapshot"'  # how the recorder starts a snapshot line (a cheap test, not a parse)
_KEYFRAME_MARK = b'"full":'


class _Reader:
    """One pass over a record's lines; see read_record."""

    def __init__(self, recording: Recording, ends: bool) -> None:
        self.recording = recording
        self.ends = ends
        self.skips = _Skips()
        self.line_no = 0
        self.decoder = SnapshotDecoder(unknown=lambda what: self.skips.add(f"unknown field {what} ignored", self.line_no))
        self.broken_since: Optional[int] = None  # a snapshot could not be rebuilt: deltas wait for a keyframe
        # keep="ends": the snapshot lines since the last keyframe (and the group before it), decoded at the end
        self.group: list[tuple[int, bytes]] = []
        self.previous_group: list[tuple[int, bytes]] = []

    def damaged(self, what: str) -> None:
        self.skips.add(f"damaged value left out ({what.split(':')[0]})", self.line_no)

    def feed(self, line_no: int, raw: bytes) -> None:
        if not (self.ends and _SNAPSHOT_MARK in raw[:64]):
            self.decode(line_no, raw)
            return
        # A report needs the first snapshot and the last: keep the snapshot lines from the last keyframe
        # on and decode them at the end (decoding every delta of a 250 MB record took minutes).
        if _KEYFRAME_MARK in raw:
            self.previous_group, self.group = self.group, [(line_no, raw)]
        else:
            self.group.append((line_no, raw))
        if self.recording.snapshot_count:
            self.recording.snapshot_count += 1
        else:
            self.decode(line_no, raw)  # until the first snapshot is read

    def finish(self) -> None:
        if not self.ends or not (self.group or self.previous_group):
            return
        counted = self.recording.snapshot_count
        if self.recording.snapshots:  # the group ends with the first snapshot, which is kept already
            self.recording.snapshots = self.recording.snapshots[:1]
        before = len(self.recording.snapshots)
        for group in (self.group, self.previous_group):
            self.decoder.reset()
            self.broken_since = None
            for line_no, raw in group:
                if raw:
                    self.decode(line_no, raw)
                else:  # a damaged line (counted when it was read) that broke the chain here
                    self.decoder.reset()
                    self.broken_since = line_no
            if len(self.recording.snapshots) > before:
                break
        self.recording.snapshot_count = counted
        snaps = self.recording.snapshots
        if len(snaps) == 2 and snaps[0] == snaps[1]:  # the only group began with the first snapshot
            del snaps[1]

    def decode(self, line_no: int, raw: bytes) -> None:
        self.line_no = line_no
        skips, decoder, recording = self.skips, self.decoder, self.recording
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
            skips.add("line that is not JSON skipped", line_no)
            if not any(marker in raw for marker in _NOT_SNAPSHOT):  # it may have been a snapshot: deltas
                decoder.reset()  # after it would apply to the wrong base, so wait for a keyframe
                self.broken_since = line_no
                if self.ends and self.recording.snapshot_count:
                    self.group.append((line_no, b""))  # the deltas after it in the group wait for a keyframe too
            return
        if not isinstance(record, dict):
            skips.add("line that is not a record skipped", line_no)
            return
        kind = record.get("kind")
        try:
            if kind == "snapshot":
                if self.broken_since is not None and "full" not in record:
                    skips.add("snapshot delta skipped: an earlier snapshot could not be rebuilt", line_no)
                    return
                snapshot = decoder.decode(record)
                recording.snapshot_count += 1
                if self.ends and len(recording.snapshots) == 2:
                    recording.snapshots[1] = snapshot  # the first and the latest: what a report shows
                else:
                    recording.snapshots.append(snapshot)
                self.broken_since = None
            elif kind == "stacks":
                capture = from_data(StackCapture, record["capture"])
                decoder.captures[capture.taken_at] = capture
                recording.stacks.append(capture)
            elif kind == "changes":
                at = _time(record.get("at"))
                lines = record.get("lines", [])
                if not isinstance(lines, list):
                    raise TypeError("lines is not a list")
                recording.changes.extend((at, text) for text in lines if isinstance(text, str))
            elif kind == "note":
                recording.notes.append((_time(record.get("at")), str(record.get("text", ""))))
                if record.get("capped"):
                    recording.capped = True
            elif kind == "header":  # the file was appended to by another run: carry on from a fresh start
                decoder.reset()
                if self.ends:
                    self.group, self.previous_group = [], []
            else:
                skips.add(f"record of unknown kind {str(kind)[:40]!r} skipped (written by a newer triage?)", line_no)
        except _DAMAGE as exc:
            if kind == "snapshot":
                decoder.reset()
                self.broken_since = line_no
            skips.add(f"{str(kind)[:40]} record that could not be read skipped ({type(exc).__name__}: {str(exc)[:200]})",
                      line_no)


def _read(f: BinaryIO, path: os.PathLike[str] | str, keep: str) -> Recording:
    lines = _lines(f)
    header, _ = _find_header(lines, path)
    recording = Recording(path=str(path), header=header)
    newer = header.get("schema_version")
    if isinstance(newer, int) and newer > RECORD_SCHEMA_VERSION:
        recording.skipped.append(
            f"written by a newer triage (record schema {newer}, this one reads {RECORD_SCHEMA_VERSION}): "
            "replaying what this version understands")
    reader = _Reader(recording, ends=keep == "ends")
    cut_tail: tuple[int, int] | None = None
    with damage_listener(reader.damaged):
        for line_no, raw_line, complete in lines:
            raw = raw_line.strip()
            if not raw:
                if not raw_line:
                    reader.skips.add(f"line longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB skipped", line_no)
                    reader.decoder.reset()
                    reader.broken_since = line_no
                continue
            if not complete:  # bytes after the last newline: a line cut mid-write
                cut_tail = (line_no, len(raw_line))
                break
            reader.feed(line_no, raw)
        reader.finish()
    recording.skipped.extend(reader.skips.lines())
    if cut_tail is not None:
        recording.skipped.append(
            f"the last line (line {cut_tail[0]}, {cut_tail[1]} bytes) was cut mid-write: "
            "the refresh in flight when triage stopped is lost")
    if recording.capped:
        recording.skipped.append("the record reached its size cap: nothing after that was recorded")
    return recording


def _time(value: object) -> float:
    """A record's `at`: a finite time within range, else 0.0 (the line is kept, its time unknown)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < LATEST_TIME:
        return float(value)
    if value is not None:
        raise ValueError(f"time {str(value)[:40]} out of range")
    return 0.0


def _find_header(lines: Iterator[tuple[int, bytes, bool]], path: object) -> tuple[dict[str, Any], int]:
    """The header record (the first non-empty line) and its line number."""
    for line_no, raw, _ in lines:
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            record = None
        if isinstance(record, dict) and record.get("kind") == "header":
            return record, line_no
        break
    raise RecordError(f"{path} is not a triage record (no header line: expected a JSON line with "
                      '"kind": "header" first)')

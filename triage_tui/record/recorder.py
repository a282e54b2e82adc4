"""The incident record: every refresh appended to a JSON-lines file and flushed at once.

One line per record, so a crash or a killed terminal loses at most the line being written. A file
whose name ends in .gz (the default) is gzip: each line is compressed and sync-flushed, so what is
on disk is always readable up to the last whole line (one 494 KB record is 34 KB gzipped). The
default directory keeps the newest records only (`RETENTION_TEXT`), pruned when a new one starts.
The first line is a header; then one "snapshot" record per Moment (the snapshot, the engine's
diagnosis of it and its changelog lines, the stacks then: keyframe or delta, see snapshot_codec),
"stacks" and "note" records, each with the time it is about ("at"). Records of schema 1 also had
"changes" records; the reader still reads them. A cap on the file's size
protects the disk: when the next record would pass it, a last "note" says so and recording stops.
Recording never takes the app down: a write that fails stops the recording and says why.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Optional

from .. import __version__
from ..model.codec import to_data
from ..model.moment import Moment
from ..model.snapshot import SCHEMA_VERSION as SNAPSHOT_SCHEMA_VERSION
from ..model.stacks import StackCapture
from ..model.text_format import file_stamp
from ..model.text_format import size as size_text  # `size` is a local name in write()
from .retention import KEEP_BYTES, KEEP_RECORDS, RETENTION_TEXT  # noqa: F401 - RETENTION_TEXT: named here too
from .snapshot_codec import MomentEncoder

RECORD_SCHEMA_VERSION = 2  # 2: the diagnosis apart from the snapshot (Moments)
DEFAULT_CAP_BYTES = 256 * 1024 * 1024
_NOTE_RESERVE = 1024  # room kept under the cap for the final note
# a keyframe at least every this many bytes of deltas (uncompressed), as well as every keyframe_every
# refreshes: `report --from` rebuilds the moments from the last keyframe on, so this bounds its work
# on a record of any size (a 250 MB record of a big tree had one keyframe, at its start)
KEYFRAME_BYTES = 4 * 1024 * 1024
_RECORD_NAME = re.compile(r"^triage-.+\.jsonl(\.gz)?$")


class RecordError(ValueError):
    """A record that cannot be written or read: one clear line for the user."""


def state_directory() -> Path:
    """$XDG_STATE_HOME/triage, else ~/.local/state/triage (the XDG base directory default)."""
    base = os.environ.get("XDG_STATE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "triage"


def default_record_path(host_name: str, started_at: float, directory: Optional[Path] = None) -> Path:
    """One file per incident, named for its host and start time: triage-HOST-YYYYmmdd-HHMMSS.jsonl.gz."""
    directory = directory if directory is not None else state_directory()
    safe_host = re.sub(r"[^A-Za-z0-9._-]+", "_", host_name) or "host"
    stamp = file_stamp(started_at)
    path = directory / f"triage-{safe_host}-{stamp}.jsonl.gz"
    n = 2
    while path.exists():
        path = directory / f"triage-{safe_host}-{stamp}-{n}.jsonl.gz"
        n += 1
    return path


def prune_records(directory: Path, keep: int = KEEP_RECORDS, keep_bytes: int = KEEP_BYTES) -> list[Path]:
    """Delete the oldest records in `directory` beyond the newest `keep` or `keep_bytes` in all; return
    what was deleted. Only files named as triage names its records (triage-*.jsonl[.gz]) are touched,
    and only in the default directory: a file the user named is theirs to keep."""
    try:
        entries = []
        for entry in os.scandir(directory):
            if _RECORD_NAME.match(entry.name) and entry.is_file(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                entries.append((st.st_mtime, st.st_size, Path(entry.path)))
    except OSError:
        return []
    entries.sort(reverse=True)  # newest first
    deleted: list[Path] = []
    total = 0
    for index, (_, size, path) in enumerate(entries):
        total += size
        if index >= keep or total > keep_bytes:
            try:
                path.unlink()
                deleted.append(path)
            except OSError:
                pass
    return deleted


class _GzipLines:
    """Appends gzip-compressed lines to a file, each sync-flushed: the file is a valid gzip stream up
    to the last whole line at every moment (the reader decompresses what is there), and the deflate
    window carries over between lines, so refreshes that repeat each other compress well."""

    def __init__(self, fd: int) -> None:
        self._raw = os.fdopen(fd, "ab")
        self._z = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31: a gzip header and trailer

    @property
    def closed(self) -> bool:
        return self._raw.closed

    def tell(self) -> int:
        return self._raw.tell()

    def write(self, line: str) -> None:
        self._raw.write(self._z.compress(line.encode("utf-8")) + self._z.flush(zlib.Z_SYNC_FLUSH))

    def flush(self) -> None:
        self._raw.flush()

    def close(self) -> None:
        try:
            self._raw.write(self._z.flush(zlib.Z_FINISH))
        finally:
            self._raw.close()


class Recorder:
    """Writes one incident's record. Implements triage_tui.incident.Recorder."""

    def __init__(
        self,
        path: os.PathLike[str] | str,
        host: str = "",
        target: Sequence[str] = (),
        cap_bytes: int = DEFAULT_CAP_BYTES,
        keyframe_every: int = 1000,
        started_at: Optional[float] = None,
    ) -> None:
        self.path = Path(path)
        self.cap_bytes = cap_bytes
        self.capped = False  # the cap was reached: nothing more is written
        self.failed: Optional[str] = None  # a write failed: why (nothing more is written)
        self.records = 0
        self._encoder = MomentEncoder(keyframe_every=keyframe_every)
        self._delta_bytes = 0  # snapshot deltas written since the last keyframe
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # 0600: a record holds command lines and log lines, which may hold secrets
            # O_NONBLOCK for the open only: a FIFO (or another non-file) would wait for a reader forever
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o600)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise RecordError(f"cannot record to {self.path}: not a regular file")
            os.set_blocking(fd, True)
            self.compressed = self.path.name.endswith(".gz")
            self._file: Any = _GzipLines(fd) if self.compressed else os.fdopen(fd, "a", encoding="utf-8")
            self.bytes_written = self._file.tell()  # on disk (compressed when gzip)
        except OSError as exc:
            raise RecordError(f"cannot record to {self.path}: {exc.strerror or exc}") from None
        self._write({
            "kind": "header",
            "schema_version": RECORD_SCHEMA_VERSION,
            "snapshot_schema_version": SNAPSHOT_SCHEMA_VERSION,
            "host": host,
            "target": list(target),
            "started_at": started_at if started_at is not None else time.time(),
            "triage_version": __version__,
            "cap_bytes": cap_bytes,
        })

    @property
    def active(self) -> bool:
        return not self.capped and self.failed is None and not self._file.closed

    @property
    def message(self) -> str:
        """One line for the app's status bar and the report."""
        if self.failed is not None:
            return f"not recording: {self.failed}"
        if self.capped:
            return f"recording stopped: the record reached its cap of {size_text(self.cap_bytes)} ({self.path})"
        if self._file.closed:
            return f"recorded to {self.path} (replay it: triage replay {self.path})"
        return f"recording to {self.path}"

    # ------------------------------------------------------------ the Recorder protocol
    def write_moment(self, moment: Moment) -> None:
        if self.active:
            self._write(self._encoder.encode(moment), at=moment.snapshot.taken_at)

    def write_stacks(self, capture: StackCapture) -> None:
        if self.active and self._write({"kind": "stacks", "at": capture.taken_at, "capture": to_data(capture)},
                                       at=capture.taken_at):
            self._encoder.captures_written[capture.taken_at] = capture

    def write_note(self, at: float, text: str) -> None:
        if self.active:
            self._write({"kind": "note", "at": at, "text": text}, at=at)

    def close(self) -> None:
        if not self._file.closed:
            try:
                self._file.close()
            except OSError:
                pass

    # ------------------------------------------------------------ writing
    def _write(self, record: dict[str, Any], at: Optional[float] = None) -> bool:
        """Append one line and flush; False when it was not written (cap reached, or a write failed)."""
        try:
            line = json.dumps(record, separators=(",", ":"), allow_nan=False) + "\n"
        except ValueError:  # a NaN or infinite figure: written as NaN/Infinity, which Python's json reads
            line = json.dumps(record, separators=(",", ":")) + "\n"
        except TypeError as exc:  # a value JSON cannot hold (a collector bug): say so, keep the chain sound
            if record.get("kind") == "snapshot":
                self._encoder.reset()  # the next moment is written whole: no delta against a lost one
            line = json.dumps({"kind": "note", "at": at, "text": f"a {record.get('kind')} record was not "
                               f"written: {exc}"}, separators=(",", ":")) + "\n"
        size = len(line.encode("utf-8"))  # compressed, it takes no more than this (an upper bound)
        if self.bytes_written + size + _NOTE_RESERVE > self.cap_bytes and record.get("kind") != "header":
            self.capped = True
            note = {"kind": "note", "at": at if at is not None else time.time(), "capped": True,
                    "text": f"record cap of {size_text(self.cap_bytes)} reached: recording stopped here"}
            self._append(json.dumps(note, separators=(",", ":")) + "\n")
            return False
        if not self._append(line):
            return False
        if record.get("kind") == "snapshot":
            self._delta_bytes = 0 if "full" in record else self._delta_bytes + size
            if self._delta_bytes >= KEYFRAME_BYTES:
                self._encoder.keyframe_due = True
        return True

    def _append(self, line: str) -> bool:
        try:
            self._file.write(line)
            self._file.flush()
        except (OSError, ValueError) as exc:
            self.failed = f"writing {self.path} failed: {getattr(exc, 'strerror', None) or exc}"
            return False
        self.bytes_written = self._file.tell() if self.compressed else self.bytes_written + len(line.encode("utf-8"))
        self.records += 1
        return True


def recorder_from_args(
    args: argparse.Namespace, host_name: str, cap_bytes: int = DEFAULT_CAP_BYTES,
    warn: Optional[Callable[[str], None]] = None,
) -> Optional[Recorder]:
    """The recorder a face asked for: `--no-record` → None; `--record FILE` → that file (RecordError when
    it cannot be opened: the user named it); `--record DIR/` (or an existing directory) → a new file
    inside it; else one new file under the XDG state directory, after pruning the oldest there
    (when that cannot be written, a warning and None: watching matters more than recording). The warning
    goes to `warn`, else to stderr (the app opens its incident while it runs, where stderr is not seen)."""
    if getattr(args, "no_record", False):
        return None
    targets = tuple(getattr(args, "targets", ()) or ())
    named = getattr(args, "record", None)
    started = time.time()
    if named and not (named.endswith(os.sep) or os.path.isdir(named)):
        return Recorder(named, host=host_name, target=targets, cap_bytes=cap_bytes)
    if named:  # a directory the user named: a new file inside it, nothing there pruned
        return Recorder(default_record_path(host_name, started, Path(named)), host=host_name, target=targets,
                        cap_bytes=cap_bytes, started_at=started)
    try:
        prune_records(state_directory(), KEEP_RECORDS - 1, max(0, KEEP_BYTES - cap_bytes))  # room for this one
        return Recorder(default_record_path(host_name, started), host=host_name, target=targets,
                        cap_bytes=cap_bytes, started_at=started)
    except (RecordError, OSError) as exc:
        line = f"not recording this incident: {exc} (use --record FILE)"
        if warn is not None:
            warn(line)
        else:
            print(f"triage: warning: {line}", file=sys.stderr)
        return None

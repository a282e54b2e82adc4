"""One snapshot record: a keyframe (the whole snapshot) or a delta against the previous one.

Record shapes (JSON, one line each, beside "kind": "snapshot" and "at"):
  keyframe: {"full": <to_data(snapshot) without processes, logs, stacks>, "processes": [...], "logs": [...], ...}
  delta:    {"set": <diff of the other top-level fields>, "processes": [...]?, "logs": [...]?, ...}
  processes (omitted in a delta when nothing changed), in snapshot order, one entry per row:
    123                         unchanged: the row of PID 123 in the previous snapshot
    {"pid": 123, "set": {...}}  that row with these fields changed
    {"row": {...}}              a new row, in full
  logs (omitted in a delta when nothing changed), one entry per followed log:
    {"path", "source"}                                             unchanged
    {"path", "source", "drop": n, "append": [lines], "set": {...}}  n oldest lines gone, these new ones
    {"tail": {...}}                                                 a new log, in full
  stacks: "stacks_at": <taken_at of a capture written as its own "stacks" record>, or "stacks": <full>,
    or "stacks_at": null (none); omitted when unchanged.
Log lines are thus written once each, when first seen, however long they stay in the tail.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Optional

from ..model.codec import from_data, to_data
from ..model.snapshot import LogLine, LogTail, ProcessInfo, Snapshot
from ..model.stacks import StackCapture
from .delta import apply, diff, unknown_keys, values_getter

_SPLIT = ("processes", "logs", "stacks")


def _log_key(tail: LogTail) -> tuple[str, str]:
    return (tail.path, tail.source)


def _overlap(old: tuple[LogLine, ...], new: tuple[LogLine, ...]) -> Optional[int]:
    """How many of the oldest lines of `old` were dropped for `new` to be old[drop:] + appended lines;
    None when `new` does not continue `old` (the log was truncated or rotated)."""
    for drop in range(len(old) + 1):
        kept = len(old) - drop
        if kept <= len(new) and new[:kept] == old[drop:]:
            return drop
    return None


class SnapshotEncoder:
    """Turns each refresh's snapshot into one record dict, remembering the previous one."""

    def __init__(self, keyframe_every: int = 1000) -> None:
        self.keyframe_every = keyframe_every
        self._prev: Optional[Snapshot] = None
        self._prev_rows: dict[int, ProcessInfo] = {}
        self._prev_positions: dict[int, int] = {}
        self._since_keyframe = 0
        self.captures_written: dict[float, StackCapture] = {}

    def encode(self, snapshot: Snapshot) -> dict[str, Any]:
        prev = self._prev
        record: dict[str, Any] = {"kind": "snapshot", "at": snapshot.taken_at}
        keyframe = prev is None or self._since_keyframe >= self.keyframe_every
        rows = {p.pid: p for p in snapshot.processes}
        if len(rows) != len(snapshot.processes):  # duplicate PIDs: rows cannot be keyed, write them whole
            keyframe = True
        if keyframe:
            record["full"] = {k: v for k, v in to_data(_without_split(snapshot)).items() if k not in _SPLIT}
            record["processes"] = [{"row": to_data(p)} for p in snapshot.processes]
            record["logs"] = [{"tail": to_data(t)} for t in snapshot.logs]
            self._encode_stacks(record, snapshot.stacks, None, force=True)
            self._since_keyframe = 0
        else:
            assert prev is not None
            record["set"] = diff(prev, snapshot, skip=_SPLIT)
            processes = self._encode_rows(prev, snapshot)
            if processes is not None:
                record["processes"] = processes
            if snapshot.logs != prev.logs:
                record["logs"] = self._encode_logs(prev.logs, snapshot.logs)
            self._encode_stacks(record, snapshot.stacks, prev.stacks, force=False)
            self._since_keyframe += 1
        self._prev = snapshot
        self._prev_rows = rows
        self._prev_positions = {p.pid: i for i, p in enumerate(snapshot.processes)}
        return record

    def _encode_rows(self, prev: Snapshot, snapshot: Snapshot) -> Optional[list[Any]]:
        old_rows = self._prev_rows
        old_positions = self._prev_positions
        row_values = values_getter(ProcessInfo)  # one C call per row; equal tuples short-cut on identity
        out: list[Any] = []
        changed = len(snapshot.processes) != len(prev.processes)
        for i, p in enumerate(snapshot.processes):
            old = old_rows.get(p.pid)
            if old is p or (old is not None and row_values(old) == row_values(p)):
                position = old_positions[p.pid]
                last = out[-1] if out else None
                if isinstance(last, list) and old_positions[last[0]] + last[1] == position:
                    last[1] += 1  # the run of unchanged rows goes on, in the previous order
                else:
                    out.append([p.pid, 1])
                if not changed and position != i:
                    changed = True  # same rows, new order
            elif old is None:
                out.append({"row": to_data(p)})
                changed = True
            else:
                out.append({"pid": p.pid, "set": diff(old, p)})
                changed = True
        if not changed:
            return None
        return [entry[0] if isinstance(entry, list) and entry[1] == 1 else entry for entry in out]

    def _encode_logs(self, old_tails: tuple[LogTail, ...], tails: tuple[LogTail, ...]) -> list[Any]:
        old_by_key = {_log_key(t): t for t in old_tails}
        out: list[Any] = []
        for tail in tails:
            old = old_by_key.get(_log_key(tail))
            drop = _overlap(old.lines, tail.lines) if old is not None else None
            if old is None or drop is None:
                out.append({"tail": to_data(tail)})
                continue
            entry: dict[str, Any] = {"path": tail.path, "source": tail.source}
            if old != tail:
                kept = len(old.lines) - drop
                entry["drop"] = drop
                entry["append"] = [to_data(line) for line in tail.lines[kept:]]
                entry["set"] = diff(old, tail, skip=("lines",))
            out.append(entry)
        return out

    def _encode_stacks(
        self, record: dict[str, Any], stacks: Optional[StackCapture], old: Optional[StackCapture], force: bool
    ) -> None:
        if not force and (stacks is old or stacks == old):
            return
        if stacks is None:
            record["stacks_at"] = None
            return
        written = self.captures_written.get(stacks.taken_at)
        if written is not None and (written is stacks or written == stacks):
            record["stacks_at"] = stacks.taken_at
        else:
            record["stacks"] = to_data(stacks)


def _without_split(snapshot: Snapshot) -> Snapshot:
    return dataclasses.replace(snapshot, processes=(), logs=(), stacks=None)


class SnapshotDecoder:
    """Rebuilds full snapshots from the records of SnapshotEncoder, in order."""

    def __init__(self, unknown: Callable[[str], None]) -> None:
        self.unknown = unknown
        self.prev: Optional[Snapshot] = None
        self._prev_rows: dict[int, ProcessInfo] = {}
        self._prev_positions: dict[int, int] = {}
        self.captures: dict[float, StackCapture] = {}

    def reset(self) -> None:
        """Forget the previous snapshot: deltas cannot be applied until the next keyframe."""
        self.prev = None
        self._prev_rows = {}
        self._prev_positions = {}

    def decode(self, record: dict[str, Any]) -> Snapshot:
        """The full snapshot of `record`. Raises ValueError (or KeyError/TypeError) when it cannot be rebuilt."""
        if "full" in record:
            full = record["full"]
            if not isinstance(full, dict):
                raise ValueError("keyframe is not an object")
            for key in unknown_keys(Snapshot, full):
                self.unknown(key)
            base: Snapshot = from_data(Snapshot, full)
        elif self.prev is None:
            raise ValueError("a delta with no full snapshot before it")
        else:
            base = apply(self.prev, record.get("set", {}), self.unknown)
        changes: dict[str, Any] = {}
        if "processes" in record:
            rows: list[ProcessInfo] = []
            for entry in record["processes"]:
                if isinstance(entry, list):  # [pid, n]: n unchanged rows, from that PID on in the previous order
                    start = self._prev_positions[entry[0]]
                    rows.extend(self.prev.processes[start:start + entry[1]])  # type: ignore[union-attr]
                else:
                    rows.append(self._decode_row(entry))
            changes["processes"] = tuple(rows)
        elif "full" in record:
            changes["processes"] = ()
        if "logs" in record:
            changes["logs"] = self._decode_logs(record["logs"], self.prev.logs if self.prev else ())
        elif "full" in record:
            changes["logs"] = ()
        if "stacks" in record:
            changes["stacks"] = from_data(StackCapture, record["stacks"]) if record["stacks"] is not None else None
        elif "stacks_at" in record:
            at = record["stacks_at"]
            if at is not None and at not in self.captures:
                raise ValueError(f"refers to a stack capture taken at {at} that is not in the record")
            changes["stacks"] = self.captures[at] if at is not None else None
        elif "full" in record:
            changes["stacks"] = None
        else:
            changes["stacks"] = self.prev.stacks if self.prev else None
        snapshot = dataclasses.replace(base, **changes)
        self.prev = snapshot
        self._prev_rows = {p.pid: p for p in snapshot.processes}
        self._prev_positions = {p.pid: i for i, p in enumerate(snapshot.processes)}
        return snapshot

    def _decode_row(self, entry: Any) -> ProcessInfo:
        if isinstance(entry, int):
            return self._prev_rows[entry]
        if "row" in entry:
            for key in unknown_keys(ProcessInfo, entry["row"]):
                self.unknown(key)
            return from_data(ProcessInfo, entry["row"])
        return apply(self._prev_rows[entry["pid"]], entry["set"], self.unknown)

    def _decode_logs(self, entries: list[Any], old_tails: tuple[LogTail, ...]) -> tuple[LogTail, ...]:
        old_by_key = {_log_key(t): t for t in old_tails}
        out: list[LogTail] = []
        for entry in entries:
            if "tail" in entry:
                out.append(from_data(LogTail, entry["tail"]))
                continue
            old = old_by_key[(entry["path"], entry["source"])]
            if "drop" in entry:
                lines = old.lines[entry["drop"]:] + tuple(from_data(LogLine, x) for x in entry["append"])
                old = apply(old, entry.get("set", {}), self.unknown)
                old = dataclasses.replace(old, lines=lines)
            out.append(old)
        return tuple(out)

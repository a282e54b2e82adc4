"""One moment record: a keyframe (the whole Moment) or a delta against the previous one.

Record shapes (JSON, one line each, beside "kind": "snapshot" and "at"), record schema 2:
  keyframe: {"full": <to_data(snapshot) without logs>, "logs": [...], "diagnosis": {"full": {...}}, "stacks..."}
  delta:    {"set": <diff of the plain top-level fields>, "seq": {...}?, "logs": [...]?,
             "diagnosis": {"set": {...}?, "seq": {...}?}?, "stacks..."?}
  seq: for each keyed list that changed (processes by pid; exited by pid; sources by name; waits by
    "PID:TID"; in "diagnosis": observations, hypotheses by id; the n-th repeat of a key K is keyed "K#n"), its
    entries in order, one per item or run of items:
      K                          unchanged: the item with key K in the previous snapshot
      [K, n]                     n unchanged items: the previous snapshot's, from K's on, in its order
      {"key": K, "set": {...}}   that item with these fields changed
      {"new": {...}}             a new item, in full
  logs (omitted in a delta when nothing changed), one entry per followed log:
    {"path", "source"}                                             unchanged
    {"path", "source", "drop": n, "append": [lines], "set": {...}}  n oldest lines gone, these new ones
    {"tail": {...}}                                                 a new log (or a rotated one), in full
  stacks (the Moment's latest capture): "stacks_at": <taken_at of a capture written as its own
    "stacks" record>, or "stacks": <full>, or "stacks_at": null (none); omitted when unchanged.
Log lines are thus written once each, when first seen, however long they stay in the tail; an
unchanged process row costs nothing (a run of them, a few bytes).

Waits were written whole in "set" until 2026-12-02 (1,000 changing sleepers: ~400 KB a refresh); such records
still read. A reader from before then reports a "seq" of waits as an unknown field (Snapshot.waits).

Record schema 1 (older records, still read): no "diagnosis"; the observations and hypotheses were
fields of the snapshot ("full" and "seq"), and its changelog lines only in "changes" records.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from operator import attrgetter, is_
from typing import Any, Optional

from ..model.codec import from_data, to_data
from ..model.diagnosis import Diagnosis, Hypothesis, Observation
from ..model.moment import Moment
from ..model.snapshot import ExitedProcess, LogLine, LogTail, ProcessInfo, Snapshot, SourceStatus
from ..model.stacks import StackCapture
from ..model.waits import Wait
from .delta import apply, diff, diff_values, unknown_keys, values_getter

Keyed = dict[str, tuple[type, Callable[[Any], Any]]]

# keyed lists: written item by item against the previous moment's
_KEYED: Keyed = {
    "processes": (ProcessInfo, attrgetter("pid")),
    "exited": (ExitedProcess, attrgetter("pid")),
    "sources": (SourceStatus, attrgetter("name")),
    "waits": (Wait, lambda w: f"{w.pid}:{w.tid}"),  # a thread's wait (one more per process for its other threads)
}
_DIAGNOSIS_KEYED: Keyed = {
    "observations": (Observation, attrgetter("id")),
    "hypotheses": (Hypothesis, attrgetter("id")),
}
_NOT_IN_SET = (*_KEYED, "logs")
# schema 1 kept these inside the snapshot: read into the Moment's diagnosis and stacks
_LEGACY = ("observations", "hypotheses", "stacks")


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


def sequence_keys(items: Sequence[Any], key: Callable[[Any], Any]) -> list[Any]:
    """The key of each item: `key(item)`, and for its n-th repeat (n >= 1) the string "K#n".

    Several observations may share an id (four OOM kills in the kernel log are four "oom-kill"
    observations): with plain ids every moment was written whole, 1.4 MB a refresh at 1,000
    processes. The n-th one of an id is matched with the previous moment's n-th one. Raises
    ValueError when a numbered key is itself a key of the list (then nothing tells them apart)."""
    keys = [key(item) for item in items]
    if len(set(keys)) == len(keys):
        return keys
    seen: dict[Any, int] = {}
    out: list[Any] = []
    for k in keys:
        n = seen.get(k, 0)
        seen[k] = n + 1
        out.append(k if n == 0 else f"{k}#{n}")
    if len(set(out)) != len(out):
        raise ValueError("repeated keys that numbering cannot tell apart")
    return out


def encode_sequence(old: Sequence[Any], new: Sequence[Any], cls: type, key: Callable[[Any], Any]) -> Optional[list[Any]]:
    """Entries for `new` against `old` (see the module docstring); None when nothing changed.

    Raises ValueError when keys cannot be told apart in `new` (the caller writes the list whole instead)."""
    if old is new or (len(old) == len(new) and all(map(is_, old, new))):
        # the same items in the same order (a quiet tree's rows are last tick's tuple, #18): nothing changed, and
        # keying 1,000 rows to find that out was most of a quiet refresh's record
        return None
    old_by_key = {k: (i, item) for i, (k, item) in enumerate(zip(sequence_keys(old, key), old))}
    values = values_getter(cls)  # one C call per item; equal tuples short-cut on identical members
    out: list[Any] = []
    changed = len(old) != len(new)
    for i, (k, item) in enumerate(zip(sequence_keys(new, key), new)):
        found = old_by_key.get(k)
        if found is None:
            out.append({"new": to_data(item)})
            changed = True
            continue
        position, before = found
        if before is not item:
            olds, news = values(before), values(item)
        if before is item or olds == news:
            last = out[-1] if out else None
            if isinstance(last, list) and old_by_key[last[0]][0] + last[1] == position:
                last[1] += 1  # the run of unchanged items goes on, in the previous order
            else:
                out.append([k, 1])
            changed = changed or position != i
        else:
            out.append({"key": k, "set": diff_values(cls, olds, news)})
            changed = True
    if not changed:
        return None
    return [entry[0] if isinstance(entry, list) and entry[1] == 1 else entry for entry in out]


def _sequences(old: Any, new: Any, keyed: Keyed) -> dict[str, list[Any]]:
    """The "seq" entries of every keyed list of `new` that changed against `old`.
    Raises ValueError when keys repeat (the caller writes the moment whole)."""
    out: dict[str, list[Any]] = {}
    for name, (cls, key) in keyed.items():
        entries = encode_sequence(getattr(old, name), getattr(new, name), cls, key)
        if entries is not None:
            out[name] = entries
    return out


class MomentEncoder:
    """Turns each refresh's Moment into one record dict, remembering the previous one."""

    def __init__(self, keyframe_every: int = 1000) -> None:
        self.keyframe_every = keyframe_every
        self._prev: Optional[Moment] = None
        self._since_keyframe = 0
        self.keyframe_due = False  # the recorder asks for a keyframe next (bytes of deltas since the last)
        self.captures_written: dict[float, StackCapture] = {}

    def reset(self) -> None:
        """Write the next moment whole (the previous one did not reach the file)."""
        self._prev = None

    def encode(self, moment: Moment) -> dict[str, Any]:
        prev = self._prev
        snapshot, diagnosis = moment.snapshot, moment.diagnosis
        record: dict[str, Any] = {"kind": "snapshot", "at": snapshot.taken_at}
        sequences: dict[str, list[Any]] = {}
        diagnosis_sequences: dict[str, list[Any]] = {}
        keyframe = prev is None or self._since_keyframe >= self.keyframe_every or self.keyframe_due
        if not keyframe:
            assert prev is not None
            try:
                sequences = _sequences(prev.snapshot, snapshot, _KEYED)
                diagnosis_sequences = _sequences(prev.diagnosis, diagnosis, _DIAGNOSIS_KEYED)
            except ValueError:  # repeated keys: items cannot be told apart, write the moment whole
                keyframe = True
        if keyframe:
            record["full"] = to_data(dataclasses.replace(snapshot, logs=()))
            del record["full"]["logs"]
            record["logs"] = [{"tail": to_data(t)} for t in snapshot.logs]
            record["diagnosis"] = {"full": to_data(diagnosis)}
            self._encode_stacks(record, moment.stacks, None, force=True)
            self._since_keyframe = 0
            self.keyframe_due = False
        else:
            assert prev is not None
            record["set"] = diff(prev.snapshot, snapshot, skip=_NOT_IN_SET)
            if sequences:
                record["seq"] = sequences
            if snapshot.logs != prev.snapshot.logs:
                record["logs"] = self._encode_logs(prev.snapshot.logs, snapshot.logs)
            part: dict[str, Any] = {}
            changed = diff(prev.diagnosis, diagnosis, skip=(*_DIAGNOSIS_KEYED, "changes"))
            if changed:
                part["set"] = changed
            if diagnosis_sequences:
                part["seq"] = diagnosis_sequences
            if diagnosis.changes:  # this moment's own lines: never "as before"
                part["changes"] = list(diagnosis.changes)
            if part:
                record["diagnosis"] = part
            self._encode_stacks(record, moment.stacks, prev.stacks, force=False)
            self._since_keyframe += 1
        self._prev = moment
        return record

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


class MomentDecoder:
    """Rebuilds full Moments from the records of MomentEncoder (and of schema 1), in order."""

    def __init__(self, unknown: Callable[[str], None]) -> None:
        self.unknown = unknown
        self.prev: Optional[Moment] = None
        self.captures: dict[float, StackCapture] = {}
        self.stale = False  # decode_changes skipped a snapshot since the last keyframe: deltas wait for one

    def reset(self) -> None:
        """Forget the previous moment: deltas cannot be applied until the next keyframe."""
        self.prev = None
        self.stale = False

    def decode_changes(self, record: dict[str, Any]) -> tuple[str, ...]:
        """The changelog lines of a delta `record` and what its diagnosis and stacks became, without
        rebuilding its snapshot (most of a record's cost): for the moments a report does not show,
        between the first and the last keyframe. Deltas after it wait for a keyframe (`stale`)."""
        prev = self.prev
        part = record.get("diagnosis")
        keyframe = "full" in record
        if prev is None or (keyframe and not (isinstance(part, dict) and isinstance(part.get("full"), dict))):
            return self.decode(record).diagnosis.changes  # schema 1 keyframes hold the diagnosis in the snapshot
        if part is not None and not isinstance(part, dict):
            raise ValueError("diagnosis is not an object")
        if keyframe:  # the diagnosis is whole in it: nothing of the previous one is needed
            diagnosis = self._full_diagnosis(part, {})
            prev = Moment(prev.snapshot, diagnosis, None)
            part = None
        else:
            diagnosis = dataclasses.replace(prev.diagnosis, changes=()) if prev.diagnosis.changes else prev.diagnosis
        legacy_seq = {name: entries for name, entries in (record.get("seq") or {}).items() if name in _DIAGNOSIS_KEYED}
        if legacy_seq:  # schema 1: the diagnosis's lists were the snapshot's
            diagnosis = self._apply_diagnosis(diagnosis, {"seq": legacy_seq})
        if part is not None:
            diagnosis = self._apply_diagnosis(diagnosis, part)
        stacks = prev.stacks
        if "stacks" in record:
            stacks = from_data(StackCapture, record["stacks"]) if record["stacks"] is not None else None
        elif "stacks_at" in record:
            stacks = self.captures.get(record["stacks_at"]) if record["stacks_at"] is not None else None
        self.prev = Moment(prev.snapshot, diagnosis, stacks)  # the snapshot is not this moment's: hence stale
        self.stale = True
        return diagnosis.changes

    def decode(self, record: dict[str, Any]) -> Moment:
        """The full Moment of `record`. Raises ValueError (or KeyError/TypeError) when it cannot be rebuilt."""
        changes: dict[str, Any] = {}
        diagnosis: Diagnosis
        stacks: Optional[StackCapture]
        part = record.get("diagnosis")
        if part is not None and not isinstance(part, dict):
            raise ValueError("diagnosis is not an object")
        if "full" in record:
            full = record["full"]
            if not isinstance(full, dict):
                raise ValueError("keyframe is not an object")
            self.stale = False
            legacy = {name: full.pop(name) for name in _LEGACY if name in full}
            self._report_unknown(Snapshot, full)
            for name, (cls, _) in _KEYED.items():
                for item in full.get(name) or ():
                    self._report_unknown(cls, item)
            base: Snapshot = from_data(Snapshot, full)
            changes.update(logs=())
            diagnosis, stacks = self._full_diagnosis(part, legacy), None
            if legacy.get("stacks") is not None:
                stacks = from_data(StackCapture, legacy["stacks"])
        elif self.prev is None:
            raise ValueError("a delta with no full snapshot before it")
        elif self.stale:
            raise ValueError("a delta after moments read for their changelog only: it waits for a keyframe")
        else:
            prev = self.prev
            base = apply(prev.snapshot, record.get("set", {}), self.unknown)
            stacks = prev.stacks
            diagnosis = dataclasses.replace(prev.diagnosis, changes=()) if prev.diagnosis.changes else prev.diagnosis
            legacy_seq: dict[str, Any] = {}
            for name, entries in (record.get("seq") or {}).items():
                if name in _KEYED:
                    cls, key = _KEYED[name]
                    changes[name] = self._decode_sequence(entries, getattr(prev.snapshot, name), cls, key)
                elif name in _DIAGNOSIS_KEYED:  # schema 1: the diagnosis's lists were the snapshot's
                    legacy_seq[name] = entries
                else:
                    self.unknown(f"Snapshot.{name}")
            if legacy_seq:
                diagnosis = self._apply_diagnosis(diagnosis, {"seq": legacy_seq})
            if part is not None:
                diagnosis = self._apply_diagnosis(diagnosis, part)
        if "logs" in record:
            changes["logs"] = self._decode_logs(record["logs"], self.prev.snapshot.logs if self.prev else ())
        if "stacks" in record:
            stacks = from_data(StackCapture, record["stacks"]) if record["stacks"] is not None else None
        elif "stacks_at" in record:
            at = record["stacks_at"]
            if at is not None and at not in self.captures:
                raise ValueError(f"refers to a stack capture taken at {at} that is not in the record")
            stacks = self.captures[at] if at is not None else None
        snapshot = dataclasses.replace(base, **changes) if changes else base
        moment = Moment(snapshot, diagnosis, stacks)
        self.prev = moment
        return moment

    def add_changes(self, at: float, lines: Sequence[str]) -> None:
        """Schema 1 wrote a moment's changelog lines in a "changes" record after it: join them to it."""
        prev = self.prev
        if prev is not None and prev.snapshot.taken_at == at:
            joined = dataclasses.replace(prev.diagnosis, changes=prev.diagnosis.changes + tuple(lines))
            self.prev = dataclasses.replace(prev, diagnosis=joined)

    def _full_diagnosis(self, part: Optional[dict[str, Any]], legacy: dict[str, Any]) -> Diagnosis:
        if part is not None:
            full = part.get("full")
            if not isinstance(full, dict):
                raise ValueError("a keyframe's diagnosis is not whole")
        else:  # schema 1: observations and hypotheses in the snapshot, no idle figures
            full = {name: legacy.get(name) or [] for name in _DIAGNOSIS_KEYED}
        self._report_unknown(Diagnosis, full)
        for name, (cls, _) in _DIAGNOSIS_KEYED.items():
            for item in full.get(name) or ():
                self._report_unknown(cls, item)
        return from_data(Diagnosis, full)

    def _apply_diagnosis(self, old: Diagnosis, part: dict[str, Any]) -> Diagnosis:
        changed = apply(old, part.get("set", {}), self.unknown)
        lists: dict[str, Any] = {}
        for name, entries in (part.get("seq") or {}).items():
            if name not in _DIAGNOSIS_KEYED:
                self.unknown(f"Diagnosis.{name}")
                continue
            cls, key = _DIAGNOSIS_KEYED[name]
            lists[name] = self._decode_sequence(entries, getattr(old, name), cls, key)
        if "changes" in part:
            lists["changes"] = tuple(str(line) for line in part["changes"])
        return dataclasses.replace(changed, **lists) if lists else changed

    def _report_unknown(self, cls: type, data: Any) -> None:
        if isinstance(data, dict):
            for what in unknown_keys(cls, data):
                self.unknown(what)

    def _decode_sequence(
        self, entries: list[Any], old: Sequence[Any], cls: type, key: Callable[[Any], Any]
    ) -> tuple[Any, ...]:
        old_by_key = {k: (i, item) for i, (k, item) in enumerate(zip(sequence_keys(old, key), old))}
        out: list[Any] = []
        for entry in entries:
            if isinstance(entry, list):  # [K, n]: n unchanged items from K's on, in the previous order
                start = old_by_key[entry[0]][0]
                out.extend(old[start:start + entry[1]])
            elif isinstance(entry, dict) and "new" in entry:
                self._report_unknown(cls, entry["new"])
                out.append(from_data(cls, entry["new"]))
            elif isinstance(entry, dict):
                out.append(apply(old_by_key[entry["key"]][1], entry["set"], self.unknown))
            else:
                out.append(old_by_key[entry][1])
        return tuple(out)

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
                old = dataclasses.replace(apply(old, entry.get("set", {}), self.unknown), lines=lines)
            out.append(old)
        return tuple(out)

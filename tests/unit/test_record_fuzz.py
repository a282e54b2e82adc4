"""Mutated real records never crash a reader face: report (md and JSON) from them and replay them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.record_fuzz import base_record, check_record, run_cases
from triage_tui.record.reader import read_record


def test_damaged_records_are_read_or_refused_never_a_crash(tmp_path: Path) -> None:
    assert run_cases(tmp_path, 120) == []


def _one_value(tmp_path: Path, name: str, value_text: str, line_kind: str = "snapshot") -> Path:
    """The base record with `name` of the first line of `line_kind` set to the raw JSON `value_text`."""
    data = base_record(tmp_path / "base.jsonl").split(b"\n")
    for i, line in enumerate(data):
        if not line.strip():
            continue
        record = json.loads(line)
        if record.get("kind") == line_kind and "full" in record:
            record["full"][name] = "@@"
            data[i] = json.dumps(record, separators=(",", ":")).replace('"@@"', value_text).encode()
            break
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(b"\n".join(data))
    return path


def test_a_null_or_non_finite_or_out_of_range_figure_is_left_out_and_counted(tmp_path: Path) -> None:
    for text in ("null", "NaN", "Infinity", "1e999", '"x"', "1e20"):
        path = _one_value(tmp_path, "taken_at", text)
        recording = read_record(path)
        assert all(0 < s.taken_at < 4e9 for s in recording.snapshots)
        assert recording.skipped, text  # the damage is said
        assert check_record(path) is None


def test_deep_nesting_is_refused_not_a_recursion_crash(tmp_path: Path) -> None:
    path = _one_value(tmp_path, "host", "[" * 50000 + "]" * 50000)
    recording = read_record(path)
    assert any("not JSON" in line or "could not be read" in line for line in recording.skipped)
    assert check_record(path) is None

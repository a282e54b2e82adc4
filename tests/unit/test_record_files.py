"""Records on disk: gzip by default (and read back whole or cut), a retention rule in the default
directory, `--record DIR/` writing inside DIR, and the path said when recording ends."""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
from pathlib import Path

from record_shapes import record_demo

from triage_tui.record.reader import read_record
from triage_tui.record.recorder import KEEP_RECORDS, Recorder, prune_records, recorder_from_args


def test_a_gzip_record_reads_back_equal_and_is_smaller(tmp_path: Path) -> None:
    plain, packed = tmp_path / "r.jsonl", tmp_path / "r.jsonl.gz"
    for path in (plain, packed):
        recorder = Recorder(path, host="gpu-node-7")
        record_demo(recorder, ticks=8)
        recorder.close()
    assert packed.read_bytes()[:2] == b"\x1f\x8b"
    assert len(gzip.decompress(packed.read_bytes()).splitlines()) == len(plain.read_bytes().splitlines())
    a, b = read_record(plain), read_record(packed)
    assert b.skipped == [] and a.moments == b.moments and a.stacks == b.stacks
    assert packed.stat().st_size * 3 < plain.stat().st_size


def test_a_gzip_record_cut_mid_write_reads_up_to_its_last_whole_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl.gz"
    recorder = Recorder(path)
    moments, _, _ = record_demo(recorder, ticks=6)
    # no close(): the writer was killed; every line written so far was sync-flushed
    whole = path.read_bytes()
    recording = read_record(path)
    assert recording.moments == moments
    path.write_bytes(whole[:-7])  # the last flush cut short
    cut = read_record(path)
    assert 0 < len(cut.moments) <= len(moments)
    assert cut.moments == moments[: len(cut.moments)]
    recorder.close()


def test_two_runs_appending_to_one_gzip_record_read_as_one(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl.gz"
    for _ in range(2):
        recorder = Recorder(path)
        record_demo(recorder, ticks=3)
        recorder.close()
    assert len(read_record(path).snapshots) == 6


def test_retention_keeps_the_newest_records_only(tmp_path: Path) -> None:
    for n in range(KEEP_RECORDS + 5):
        f = tmp_path / f"triage-h-{n:03}.jsonl.gz"
        f.write_bytes(b"x" * 10)
        os.utime(f, (1000 + n, 1000 + n))
    mine = tmp_path / "notes.txt"
    mine.write_text("not a record")
    deleted = prune_records(tmp_path)
    assert sorted(p.name for p in deleted) == [f"triage-h-{n:03}.jsonl.gz" for n in range(5)]
    assert mine.exists() and len(list(tmp_path.glob("triage-*"))) == KEEP_RECORDS
    assert [p.name for p in prune_records(tmp_path, keep=100, keep_bytes=25)] == [
        f"triage-h-{n:03}.jsonl.gz" for n in range(KEEP_RECORDS + 2, 4, -1)]  # 2 newest fit in 25 bytes


def test_record_dir_slash_writes_a_new_file_inside(tmp_path: Path) -> None:
    target = tmp_path / "records"
    recorder = recorder_from_args(argparse.Namespace(record=str(target) + "/", no_record=False, targets=["1"]), "h")
    assert recorder is not None
    recorder.close()
    assert recorder.path.parent == target and recorder.path.name.endswith(".jsonl.gz")
    again = recorder_from_args(argparse.Namespace(record=str(target), no_record=False, targets=["1"]), "h")
    assert again is not None and again.path.parent == target and again.path != recorder.path  # an existing dir
    again.close()
    assert "recorded to" in again.message and str(again.path) in again.message


def test_help_states_the_retention_rule_and_the_usage_lists_the_commands() -> None:
    out = subprocess.run([sys.executable, "-m", "triage_tui", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    flat = " ".join(out.stdout.split())
    assert f"newest {KEEP_RECORDS} records" in flat and "1 GiB" in flat
    assert "{report,stacks,diagnose,demo,replay,help}" in out.stdout.splitlines()[1]
    assert "2 usage error" in flat and "1 runtime failure" in flat

"""LogFollower against real files: appends, partial lines, progress bars, rotation, truncation, caps."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from triage_tui.collect.logs import LogFollower, check_log_readable, classify_line
from triage_tui.model.unavailable import Unavailable


class FakeClock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def texts(follower: LogFollower) -> list[str]:
    return [line.text for line in follower.poll().lines]


def test_starts_with_the_last_lines_and_follows_appends(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"".join(b"old line %d\n" % i for i in range(5000)))
    follower = LogFollower(str(log), start_bytes=1000, max_lines=50)
    first = texts(follower)
    assert first[-1] == "old line 4999"
    assert "old line 0" not in first
    assert all(t.startswith("old line ") for t in first)  # the cut-off first line was skipped whole
    append(log, b"new one\nnew two\n")
    assert texts(follower)[-2:] == ["new one", "new two"]


def test_partial_line_waits_for_its_newline(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"done\nhalf a li")
    follower = LogFollower(str(log))
    tail = follower.poll()
    assert [x.text for x in tail.lines] == ["done"]
    assert tail.partial == "half a li"
    append(log, b"ne\n")
    tail = follower.poll()
    assert [x.text for x in tail.lines] == ["done", "half a line"]
    assert tail.partial == ""


def test_carriage_return_bar_collapses_to_its_latest_state(tmp_path: Path) -> None:
    log = tmp_path / "bar.log"
    log.write_bytes(b"start\n")
    follower = LogFollower(str(log))
    follower.poll()
    append(log, b"\rLoading:  10%\rLoading:  20%")
    assert follower.poll().partial == "Loading:  20%"
    append(log, b"\rLoading:  60%\r")
    assert follower.poll().partial == "Loading:  60%"
    append(log, b"Loading: 100%\n")
    tail = follower.poll()
    assert [x.text for x in tail.lines] == ["start", "Loading: 100%"]
    assert tail.partial == ""


def test_rotation_finishes_the_old_file_then_reads_the_new_from_start(tmp_path: Path) -> None:
    log = tmp_path / "r.log"
    log.write_bytes(b"one\n")
    follower = LogFollower(str(log))
    follower.poll()
    append(log, b"two\n")  # written before rotation, not yet polled
    os.rename(log, tmp_path / "r.log.1")
    log.write_bytes(b"fresh\n")
    assert texts(follower) == ["one", "two", "fresh"]


def test_copytruncate_restarts_from_zero(tmp_path: Path) -> None:
    log = tmp_path / "t.log"
    log.write_bytes(b"a long first line here\nsecond\n")
    follower = LogFollower(str(log))
    follower.poll()
    with open(log, "r+b") as f:
        f.truncate(0)
    append(log, b"after\n")
    assert texts(follower)[-1] == "after"


def test_long_lines_are_cut_with_a_marker(tmp_path: Path) -> None:
    log = tmp_path / "long.log"
    log.write_bytes(b"x" * 10_000 + b"\nshort\n")
    lines = texts(LogFollower(str(log), max_line_bytes=100))
    assert lines[0].startswith("x" * 100)
    assert "line cut: 9900 more bytes" in lines[0]
    assert lines[1] == "short"


def test_undecodable_bytes_are_replaced(tmp_path: Path) -> None:
    log = tmp_path / "bin.log"
    log.write_bytes(b"ok \xff\xfe end\n")
    assert texts(LogFollower(str(log))) == ["ok \ufffd\ufffd end"]


def test_silence_counts_from_the_files_mtime_then_from_new_bytes(tmp_path: Path) -> None:
    log = tmp_path / "quiet.log"
    log.write_bytes(b"Loading: 100%\n")
    clock = FakeClock()
    os.utime(log, (clock.now - 300, clock.now - 300))
    follower = LogFollower(str(log), clock=clock)
    tail = follower.poll()
    assert tail.seconds_since_last_byte == 300
    clock.now += 10
    assert follower.poll().seconds_since_last_byte == 310
    append(log, b"alive\n")
    clock.now += 5
    assert follower.poll().seconds_since_last_byte == 0
    assert follower.poll().last_byte_at == clock.now


def test_levels_and_traceback_tracking(tmp_path: Path) -> None:
    log = tmp_path / "err.log"
    log.write_bytes(
        b"INFO starting\n"
        b"UserWarning: something harmless\n"
        b"Traceback (most recent call last):\n"
        b'  File "x.py", line 1, in <module>\n'
        b"RuntimeError: boom\n"
        b"[rank3] NCCL WARN Timeout waiting\n"
        b"Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)\n"
        b"back to normal\n"
    )
    levels = [line.level for line in LogFollower(str(log)).poll().lines]
    assert levels == ["info", "warning", "traceback", "traceback", "error", "warning", "error", "info"]
    assert classify_line("CUDA error: an illegal memory access") == "error"
    assert classify_line("Killed") == "error"


def test_unreadable_paths_give_a_reason_not_a_crash(tmp_path: Path) -> None:
    missing = LogFollower(str(tmp_path / "nope.log")).poll()
    assert isinstance(missing.error, Unavailable) and "no such file" in missing.error.reason
    assert isinstance(missing.seconds_since_last_byte, Unavailable)
    directory = LogFollower(str(tmp_path)).poll()
    assert isinstance(directory.error, Unavailable) and "directory" in directory.error.reason
    assert check_log_readable(str(tmp_path)) is not None
    assert check_log_readable(str(tmp_path / "nope.log")) is not None
    (tmp_path / "ok.log").write_bytes(b"")
    assert check_log_readable(str(tmp_path / "ok.log")) is None


@pytest.mark.timeout(60)  # before the fix, opening the FIFO waited for a writer forever
def test_a_fifo_as_log_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    problem = check_log_readable(str(fifo))
    assert problem is not None and problem.reason == "not a regular file"


def test_a_file_that_appears_later_is_picked_up(tmp_path: Path) -> None:
    log = tmp_path / "later.log"
    follower = LogFollower(str(log))
    assert follower.poll().error is not None
    log.write_bytes(b"hello\n")
    tail = follower.poll()
    assert tail.error is None and [x.text for x in tail.lines] == ["hello"]


def test_ring_is_bounded(tmp_path: Path) -> None:
    log = tmp_path / "many.log"
    log.write_bytes(b"".join(b"%d\n" % i for i in range(500)))
    lines = texts(LogFollower(str(log), max_lines=20))
    assert len(lines) == 20 and lines[-1] == "499"


def test_a_flood_is_skipped_ahead_with_a_marker(tmp_path: Path) -> None:
    log = tmp_path / "flood.log"
    log.write_bytes(b"first\n")
    follower = LogFollower(str(log), max_read_bytes=1000)
    follower.poll()
    append(log, b"".join(b"line %05d\n" % i for i in range(1000)))
    lines = texts(follower)
    assert any(t.startswith("[triage: skipped ") for t in lines)
    assert lines[-1] == "line 00999"


def test_mid_rotation_keeps_the_old_lines_and_says_the_file_is_gone(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    log.write_bytes(b"before\n")
    follower = LogFollower(str(log))
    follower.poll()
    append(log, b"last words\n")
    os.rename(log, tmp_path / "m.log.1")
    tail = follower.poll()
    assert [x.text for x in tail.lines] == ["before", "last words"]
    assert tail.error is not None and "no such file" in tail.error.reason
    log.write_bytes(b"reborn\n")
    tail = follower.poll()
    assert tail.error is None and [x.text for x in tail.lines][-1] == "reborn"


def test_copytruncate_refilled_past_the_old_size_within_one_poll(tmp_path: Path) -> None:
    """Same inode, larger size than before: only the content tells; no line lost, no fragment invented."""
    log = tmp_path / "refill.log"
    log.write_bytes(b"2026-01-01 old one\n2026-01-01 old two\n")
    follower = LogFollower(str(log))
    assert texts(follower) == ["2026-01-01 old one", "2026-01-01 old two"]
    ino = os.stat(log).st_ino
    with open(log, "r+b") as f:
        f.truncate(0)
    append(log, b"".join(b"2026-01-02 new line %d\n" % i for i in range(10)))  # far past the old size
    assert os.stat(log).st_ino == ino
    got = texts(follower)
    assert got == ["2026-01-01 old one", "2026-01-01 old two"] + [f"2026-01-02 new line {i}" for i in range(10)]


def test_copytruncate_refilled_with_the_same_head_is_told_by_the_bytes_before_the_offset(tmp_path: Path) -> None:
    log = tmp_path / "same-head.log"
    log.write_bytes(b"server starting\nrequest 1 ok\n")
    follower = LogFollower(str(log))
    follower.poll()
    with open(log, "r+b") as f:
        f.truncate(0)
    append(log, b"server starting\nrequest 9 failed\nrequest 10 ok\n")
    got = texts(follower)
    assert got == ["server starting", "request 1 ok", "server starting", "request 9 failed", "request 10 ok"]


def test_rename_and_create_refilled_past_the_old_size_reads_both(tmp_path: Path) -> None:
    log = tmp_path / "rc.log"
    log.write_bytes(b"old a\n")
    follower = LogFollower(str(log))
    follower.poll()
    append(log, b"old b\n")
    os.rename(log, tmp_path / "rc.log.1")
    log.write_bytes(b"".join(b"new %d\n" % i for i in range(20)))
    assert texts(follower) == ["old a", "old b"] + [f"new {i}" for i in range(20)]


def test_appends_after_many_polls_are_not_mistaken_for_a_rewrite(tmp_path: Path) -> None:
    log = tmp_path / "steady.log"
    log.write_bytes(b"")
    follower = LogFollower(str(log))
    follower.poll()
    expected = []
    for i in range(50):
        append(log, b"line %d\n" % i)
        expected.append(f"line {i}")
        assert texts(follower) == expected

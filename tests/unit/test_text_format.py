"""One formatter per kind of figure (model/text_format.py), in a sentence and a cell register, used by every face."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from triage_tui.model.text_format import CELL, clock, duration, file_stamp, reason, size, stamp, unavailable
from triage_tui.model.unavailable import Unavailable

GIB = 1024**3
PACKAGE = Path(__file__).resolve().parents[2] / "triage_tui"


@pytest.mark.parametrize(("n", "sentence", "cell"), [
    (0, "0 B", "0B"),
    (512, "512 B", "512B"),
    (12 * 1024, "12 KiB", "12K"),
    (1536 * 1024**2, "1.5 GiB", "1.5G"),
    (330 * 1024**2, "330 MiB", "330M"),
    (33 * GIB, "33 GiB", "33G"),  # the figure three formatters wrote as "33 GiB", "33.0 GiB" and "33G"
    (76017 * 1024**2, "74 GiB", "74G"),
    (3.4e12, "3.1 TiB", "3.1T"),
])
def test_sizes_round_alike_in_both_registers(n: float, sentence: str, cell: str) -> None:
    assert size(n) == sentence and size(n, CELL) == cell


@pytest.mark.parametrize(("s", "sentence", "cell"), [
    (0.4, "400 ms", "0s"),
    (2.5, "2.5 s", "2s"),
    (45, "45 s", "45s"),
    (302, "5 min 2 s", "5m02s"),
    (725, "12 min 5 s", "12m05s"),
    (600, "10 min", "10m00s"),
    (7300, "2 h 1 min", "2h01m"),
    (90000, "1 d 1 h", "1d01h"),
])
def test_durations(s: float, sentence: str, cell: str) -> None:
    assert duration(s) == sentence and duration(s, CELL) == cell


def test_unavailable_reads_one_way_in_a_sentence_and_n_a_in_a_cell() -> None:
    u = Unavailable("permission denied", "run as root")
    assert unavailable(u) == str(u) == "unavailable: permission denied (hint: run as root)"
    assert size(u) == duration(u) == unavailable(u)
    assert size(u, CELL) == duration(u, CELL) == unavailable(u, CELL) == "n/a"
    assert reason(u) == "permission denied (hint: run as root)" and reason(Unavailable("gone")) == "gone"
    assert reason(12) == ""
    assert size(None) == "—" and size(None, CELL) == "n/a"  # no value here is not an error


def test_times_of_day() -> None:
    at = time.mktime((2026, 12, 1, 14, 6, 51, 0, 0, -1))
    assert clock(at) == "14:06:51"
    assert stamp(at).startswith("2026-12-01 14:06:51 ")
    assert file_stamp(at) == "20261201-140651"


def test_no_face_formats_a_time_of_day_or_a_size_itself() -> None:
    """The copies this module replaced stay gone: strftime with a time of day, or a loop over byte units,
    only in model/text_format.py (parsers read times with strptime; the demo server writes its own log)."""
    own = {PACKAGE / "model" / "text_format.py"}
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in own or path.parts[-2] == "demo":
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"strftime\([^)]*%H", text) or re.search(r"\(\s*\"B\",\s*\"K", text):
            offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []

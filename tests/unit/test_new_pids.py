"""NewPids on a /proc of files written here: the parents of the PIDs given out since the pass before last."""

from __future__ import annotations

import os
from pathlib import Path

from triage_tui.collect.new_pids import NewPids


def fake_proc(tmp_path: Path, cursor: int, parents: dict[int, int]) -> Path:
    (tmp_path / "self").unlink(missing_ok=True)
    (tmp_path / "self").symlink_to(str(os.getpid()))  # our own namespace's /proc
    (tmp_path / "loadavg").write_text(f"0.20 0.18 0.12 1/80 {cursor}\n")
    for pid, ppid in parents.items():
        (tmp_path / str(pid)).mkdir(exist_ok=True)
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (a (b) c) S {ppid} {pid} 0 0 -1\n")
    return tmp_path


def test_the_parents_of_the_pids_since_the_pass_before_last(tmp_path: Path) -> None:
    new = NewPids(str(fake_proc(tmp_path, 100, {})))
    new.start_pass()
    assert new.parents(at_most=1000) is None  # one cursor: nothing to compare with
    fake_proc(tmp_path, 103, {101: 7, 103: 9})  # 102 came and went
    new.start_pass()
    assert new.parents(at_most=1000) is None  # two: the window needs the pass before last
    fake_proc(tmp_path, 105, {104: 7, 105: 11})
    new.start_pass()
    assert new.parents(at_most=1000) == {7, 9, 11}  # 101..105: a parent named twice, a gone PID skipped
    assert new.looked == 5
    fake_proc(tmp_path, 106, {106: 12})
    new.start_pass()
    assert new.parents(at_most=1000) == {7, 11, 12}  # 104..106: since the pass before last, not the last
    assert new.parents(at_most=2) is None  # three new PIDs: dearer than two children files


def test_no_answer_for_a_wrap_a_proc_not_ours_or_an_odd_stat_line(tmp_path: Path) -> None:
    new = NewPids(str(fake_proc(tmp_path, 32000, {})))
    for cursor in (32700, 40):  # pid_max passed: the window is not a range
        fake_proc(tmp_path, cursor, {})
        new.start_pass()
    assert new.parents(at_most=10**6) is None
    (tmp_path / "self").unlink()
    (tmp_path / "self").symlink_to("1")  # another namespace's /proc: its PIDs are not the cursor's
    assert NewPids(str(tmp_path))._ours is False
    odd = NewPids(str(fake_proc(tmp_path, 50, {})))
    (tmp_path / "51").mkdir(exist_ok=True)
    (tmp_path / "51" / "stat").write_text("51 (x) S\n")  # no parent field
    for cursor in (50, 51, 52):
        fake_proc(tmp_path, cursor, {})
        odd.start_pass()
    assert odd.parents(at_most=100) is None

"""Answers kept for the same row objects (diagnose/same_rows.py): kept for the very objects, worked out again
for equal but other objects and for a changed one."""

from __future__ import annotations

from triage_tui.diagnose.same_rows import forget, kept_for


class Row:
    def __init__(self, value: int) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:  # equal rows are still other objects
        return isinstance(other, Row) and other.value == self.value

    __hash__ = None  # type: ignore[assignment]


def test_the_same_objects_keep_the_answer_and_other_objects_work_it_out_again() -> None:
    forget()
    calls: list[int] = []
    rows = (Row(1), Row(2))

    def total(of: tuple[Row, ...]) -> int:
        calls.append(1)
        return sum(r.value for r in of)

    assert kept_for("t", (rows,), lambda: total(rows)) == 3
    assert kept_for("t", (rows,), lambda: total(rows)) == 3 and len(calls) == 1  # the same tuple: kept
    copy = (Row(1), Row(2))
    assert kept_for("t", (copy,), lambda: total(copy)) == 3 and len(calls) == 2  # equal, not the same: again
    moved = (copy[0], Row(5))
    assert kept_for("t", (moved,), lambda: total(moved)) == 6 and len(calls) == 3
    assert kept_for("other", (moved,), lambda: total(moved)) == 6 and len(calls) == 4  # one answer per name
    forget()
    assert kept_for("t", (moved,), lambda: total(moved)) == 6 and len(calls) == 5

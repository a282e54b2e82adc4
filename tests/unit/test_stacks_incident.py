"""Incident.capture_stacks compares each capture with the one before: unchanged groups carry their age."""

from __future__ import annotations

from collections.abc import Sequence

from tests.unit.stack_samples import eight_ranks_one_compiling
from triage_tui.diagnose.stack_groups import with_groups
from triage_tui.host.base import StackOptions
from triage_tui.incident import Incident
from triage_tui.model.snapshot import Target
from triage_tui.model.stacks import StackCapture


class ReplayedCaptures:
    """A Host whose captures are the same stacks at t=100, then t=160."""

    name = "replayed"

    def __init__(self) -> None:
        self.times = [100.0, 160.0]

    def capture_stacks(self, pids: Sequence[int], options: StackOptions) -> StackCapture:
        processes = tuple(eight_ranks_one_compiling())
        return with_groups(StackCapture(taken_at=self.times.pop(0), pids=tuple(pids), processes=processes))

    def close(self) -> None:
        pass


def test_second_capture_marks_unchanged_groups() -> None:
    incident = Incident(ReplayedCaptures(), Target())  # type: ignore[arg-type]
    first = incident.capture_stacks([1])
    assert all(g.unchanged_for_s is None for g in first.groups)
    second = incident.capture_stacks([1])
    assert [g.unchanged_for_s for g in second.groups] == [60.0] * len(second.groups)
    assert incident.latest_stacks is second

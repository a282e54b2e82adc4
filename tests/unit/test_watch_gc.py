"""An Incident being watched collects cycles less often (incident.py, WATCH_GC_THRESHOLD): the youngest
generation's threshold is raised, never lowered, and the older generations' are left as they were."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from triage_tui.incident import WATCH_GC_THRESHOLD, Incident, collect_cycles_less_often
from triage_tui.model.snapshot import Target, TargetRoot


@pytest.fixture(autouse=True)
def thresholds_restored() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


class _NoHost:
    name = "here"


def test_an_incident_raises_the_youngest_generations_threshold_and_keeps_the_others() -> None:
    gc.set_threshold(700, 7, 3)
    Incident(_NoHost(), Target(roots=(TargetRoot(1, "test"),)))  # type: ignore[arg-type]
    assert gc.get_threshold() == (WATCH_GC_THRESHOLD, 7, 3)


def test_a_larger_threshold_or_the_collector_off_by_threshold_is_kept() -> None:
    gc.set_threshold(50_000, 10, 10)
    collect_cycles_less_often()
    assert gc.get_threshold() == (50_000, 10, 10)
    gc.set_threshold(0, 10, 10)
    collect_cycles_less_often()
    assert gc.get_threshold() == (0, 10, 10)

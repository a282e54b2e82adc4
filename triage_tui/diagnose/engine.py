"""The diagnosis engine: pure functions from snapshots (and stack captures) to hypotheses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..model.snapshot import Hypothesis, Observation, Snapshot
from ..model.stacks import StackCapture


@dataclass(frozen=True)
class Diagnosis:
    observations: tuple[Observation, ...] = ()
    hypotheses: tuple[Hypothesis, ...] = ()
    changes: tuple[str, ...] = ()  # changelog lines this update added


class DiagnosisEngine:
    """Keeps the history it needs and updates incrementally, one snapshot at a time."""

    def update(self, snapshot: Snapshot, stacks: Optional[StackCapture] = None) -> Diagnosis:
        return Diagnosis()

"""`triage diagnose`: the engine over pasted text (one look), with the parts used and ignored."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from ..model.stacks import ProcessStacks, StackCapture
from ..parse.pasted import PastePart, evidence_from_paste
from .engine import Diagnosis, diagnose_once
from .stack_reading import classify, group_processes


@dataclass(frozen=True)
class PastedDiagnosis:
    parts: tuple[PastePart, ...]
    diagnosis: Diagnosis
    stacks: Optional[StackCapture] = None


def capture_from(stacks: tuple[ProcessStacks, ...], at: float = 0.0) -> Optional[StackCapture]:
    """Classify every thread's wait and group identical stacks, as a live capture would be."""
    if not stacks:
        return None
    classified = []
    for proc in stacks:
        threads = []
        for t in proc.threads:
            kind, frame = classify(t.frames, t.status)
            threads.append(replace(t, wait_kind=kind, wait_frame=frame))
        classified.append(replace(proc, threads=tuple(threads)))
    return StackCapture(taken_at=at, pids=tuple(p.pid for p in classified), processes=tuple(classified),
                        groups=group_processes(classified))


def diagnose_text(text: str, now: float = 0.0) -> PastedDiagnosis:
    evidence = evidence_from_paste(text, now)
    capture = capture_from(evidence.stacks, now)
    return PastedDiagnosis(evidence.parts, diagnose_once(evidence.snapshot, capture), capture)

"""Scoring the diagnosis on a labelled corpus of real cases: a function over a directory of case files.

A case file (tests/corpus/cases/*.md) holds `source:`, `cause:` (a hypothesis id) and `sure:` lines, then
`## Evidence` and the evidence as posted. Only the evidence is diagnosed: the header names the answer.

The split into the half the rules are written from ("written") and the held-out half ("held-out") is fixed
by a hash of the file name, decided before any rule was tuned on the corpus; a case never changes half.
Reusable: `score_dir(path, diagnose=...)` takes any text → ranked-ids function (the live rules by default).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

EVIDENCE_MARK = "## Evidence"


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    cause: str
    sure: str
    evidence: str
    half: str  # "written" | "held-out"


@dataclass(frozen=True)
class HalfScore:
    cases: int = 0
    top1: int = 0
    top3: int = 0
    misses: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # (case, want, top 3)

    def percent(self, n: int) -> float:
        return round(100.0 * n / self.cases, 1) if self.cases else 0.0


@dataclass(frozen=True)
class CorpusScore:
    halves: dict[str, HalfScore] = field(default_factory=dict)
    labels: dict[str, int] = field(default_factory=dict)


def half_of(name: str) -> str:
    """The half a case belongs to, by the first byte of the SHA-256 of its file name (even: written)."""
    return "written" if hashlib.sha256(name.encode()).digest()[0] % 2 == 0 else "held-out"


def read_case(path: Path) -> Case:
    text = path.read_text(encoding="utf-8")
    head, _, evidence = text.partition(EVIDENCE_MARK)
    fields = {}
    for line in head.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("source", "cause", "sure"):
            fields[key.strip()] = value.strip()
    evidence = evidence.split("\n", 1)[1] if "\n" in evidence else ""
    return Case(path.stem, fields.get("source", ""), fields.get("cause", ""), fields.get("sure", ""), evidence,
                half_of(path.name))


def read_cases(directory: Path) -> list[Case]:
    return [read_case(p) for p in sorted(directory.glob("*.md"))]


def ranked_causes(text: str) -> list[str]:
    """The live rules over a paste: hypothesis ids, best first. Only causes with evidence for them count (score
    above 0, not ruled out): a hypothesis listed at 0 only because the catalogue has an order is no answer."""
    from ..diagnose.pasted_text import diagnose_text  # noqa: PLC0415 - keeps this module cheap to import
    from .rules import CATALOGUE

    causes = {s.id for s in CATALOGUE if s.kind == "cause"}
    return [h.id for h in diagnose_text(text).diagnosis.hypotheses if h.id in causes and h.status != "ruled out" and h.score > 0]


def score_cases(cases: Sequence[Case], diagnose: Callable[[str], list[str]] = ranked_causes) -> CorpusScore:
    halves: dict[str, HalfScore] = {}
    labels: dict[str, int] = {}
    for case in cases:
        labels[case.cause] = labels.get(case.cause, 0) + 1
        ranked = diagnose(case.evidence)
        h = halves.get(case.half, HalfScore())
        hit1, hit3 = ranked[:1] == [case.cause], case.cause in ranked[:3]
        misses = h.misses if hit1 else h.misses + ((case.name, case.cause, tuple(ranked[:3])),)
        halves[case.half] = HalfScore(h.cases + 1, h.top1 + hit1, h.top3 + hit3, misses)
    return CorpusScore(halves, dict(sorted(labels.items())))


def score_dir(directory: Path, diagnose: Callable[[str], list[str]] = ranked_causes) -> CorpusScore:
    return score_cases(read_cases(directory), diagnose)

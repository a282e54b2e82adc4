"""What the engine derives from the snapshots: observations, ranked hypotheses, the changelog delta.

Kept apart from `Snapshot` (raw collector data only) so a face can tell what was read from what
was concluded, and so replay shows the diagnosis as it stood without running the engine again.
Only `triage_tui/diagnose/` builds a `Hypothesis` (and the record codec, reading one back); a test
fails on any other construction in the package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Observation:
    """A fact derived from the history of snapshots: what, since when, from where, figures."""

    id: str  # registered in diagnose/vocabulary.py, e.g. "all-idle", "log-silent", "rss-illusion"
    text: str  # one line a person reads
    source: str  # processes | memory | logs | ports | gpus | stacks | kernel | pasted
    at: float
    figures: dict[str, Union[float, int, str]] = field(default_factory=dict)
    pids: tuple[int, ...] = ()


@dataclass(frozen=True)
class Evidence:
    """One rule row that fired for a hypothesis: the observation it names, its weight, what it says.

    A hypothesis's score is the sum of its rows' weights clipped to 0..cap, so every point of it
    can be traced to a row shown."""

    observation: str  # the observation id the row names (the first of its condition present)
    weight: float  # > 0 counts for, < 0 against
    text: str  # the observation's text, and the rule's note after " — "


@dataclass(frozen=True)
class Hypothesis:
    id: str  # from the catalogue: deadlock, collective-hang, oom, rss-illusion, ...
    title: str
    status: str  # likely | possible | unlikely | ruled out
    score: float  # round(clip(sum of evidence weights, 0, cap), 2)
    for_: tuple[str, ...] = ()  # what counts for it, to read ("for" in JSON)
    against: tuple[str, ...] = ()  # what counts against it; a rule-out reason first
    next_check: str = ""
    kind: str = "cause"  # cause | finding (a fact about the evidence, listed after every cause)
    evidence: tuple[Evidence, ...] = ()  # the rows the score is the clipped sum of
    cap: float = 1.0  # the score's ceiling: 1, or lower when cap_reason says why
    cap_reason: str = ""  # why the ceiling is lower ("ruled out: …", a missing precondition, a finding)
    pids: tuple[int, ...] = ()  # the processes its title names (the odd rank, the dead or stopped one): faces mark them


@dataclass(frozen=True)
class Diagnosis:
    """The engine's reading of one snapshot (with the history and stacks before it)."""

    observations: tuple[Observation, ...] = ()
    hypotheses: tuple[Hypothesis, ...] = ()  # in the engine's order: causes, then findings; by score
    changes: tuple[str, ...] = ()  # changelog lines this update added
    # PID → since when (epoch s) it has done nothing by the engine's rule (no CPU-time growth beyond
    # the idle rate, no bytes read); absent: it just worked, or is unknown. A time, not an age, so an
    # idle process's entry stays the same tick after tick (and costs nothing in a record delta).
    idle_since: dict[int, float] = field(default_factory=dict)
    idle_after_s: float = 10.0  # idle this long or more counts as idle (the rule all-idle uses)

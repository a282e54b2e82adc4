"""The shapes of the rule tables (rules.py, signal_rows.py): a hypothesis, a weighted row, a rule-out."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Spec:
    """One hypothesis of the vocabulary."""

    id: str
    title: str
    kind: str = "cause"  # cause | finding (findings are listed after the causes)
    needs: str = ""  # condition without which the score is capped at NEEDS_CAP
    needs_text: str = ""  # the "against" line when `needs` does not hold
    titles: tuple[tuple[str, str], ...] = ()  # (condition, title template with {figures})
    next_checks: tuple[tuple[str, str], ...] = ()  # (condition or "", text): first that holds wins


@dataclass(frozen=True)
class Row:
    hypothesis: str
    when: str  # condition over observation ids
    weight: float  # > 0 for, < 0 against
    note: str = ""  # why it counts, appended to the observation text


@dataclass(frozen=True)
class RuleOut:
    hypothesis: str
    when: str
    reason: str  # leads the observation texts of `when` and `cite`
    cite: tuple[str, ...] = ()  # further observation ids whose text joins the reason when present


NEEDS_CAP = 0.2
FINDING_CAP = 0.3  # a finding keeps its status (likely) but scores below any possible cause, for faces that sort by score

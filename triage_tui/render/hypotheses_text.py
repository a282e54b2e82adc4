"""Hypotheses, observations and pasted parts as Markdown or JSON-able data (no textual/rich here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model.diagnosis import Hypothesis, Observation
from .plain_text import md_code, md_inline
from .verdict import dedupe_evidence


def hypothesis_data(h: Hypothesis) -> dict[str, Any]:
    """The report schema's shape: id, title, status, score, for, against, next_check, and the evidence
    rows the score is the clipped sum of."""
    return {"id": h.id, "title": h.title, "status": h.status, "score": h.score, "for": list(h.for_),
            "against": list(h.against), "next_check": h.next_check, "kind": h.kind,
            "evidence": [{"observation": e.observation, "weight": e.weight, "text": e.text} for e in h.evidence],
            "cap": h.cap, "cap_reason": h.cap_reason, "pids": list(h.pids)}


def evidence_markdown(h: Hypothesis) -> list[str]:
    """The rule rows the score is the clipped sum of, as Markdown list items with their weights (as the app's
    Hypotheses pane shows them), then the ceiling and why; a hypothesis from an older record (no rows) gives
    its for/against texts."""
    if not h.evidence:
        lines = [f"- For: {md_inline(x)}" for x in dedupe_evidence(h.for_)] or ["- For: nothing yet"]
        return lines + [f"- Against: {md_inline(x)}" for x in dedupe_evidence(h.against)]
    lines = [f"- {row.weight:+.2f} {md_code(row.observation)}: {md_inline(row.text)}" for row in h.evidence]
    total = sum(row.weight for row in h.evidence)
    if h.status == "ruled out":
        lines.append(f"- Ruled out: {md_inline(h.cap_reason)}")
    elif h.cap_reason:
        lines.append(f"- Score capped at {h.cap:.2f}: {md_inline(h.cap_reason)}")
    lines.append(f"- Score {h.score:.2f}: the rows sum to {total:+.2f}, clipped to 0..{h.cap:.2f}")
    return lines


def hypotheses_markdown(hypotheses: Sequence[Hypothesis], show_unlikely: bool = False) -> list[str]:
    """One block per hypothesis: `### 1. title — likely (0.85)`, then its evidence rows and the next check.
    Unlikely ones without evidence fold into one line unless `show_unlikely`."""
    out: list[str] = []
    quiet: list[str] = []
    n = 0
    for h in hypotheses:
        if h.status == "unlikely" and not h.for_ and not show_unlikely:
            quiet.append(h.id)
            continue
        n += 1
        out.append(f"### {n}. {md_inline(h.title)} — {h.status} ({h.score:.2f}) {md_code(h.id)}")
        out += evidence_markdown(h)
        if h.next_check:
            out.append(f"- next check: {md_inline(h.next_check)}")
        out.append("")
    if quiet:
        out.append(f"Unlikely, no evidence either way: {', '.join(quiet)}")
        out.append("")
    return out


def observations_markdown(observations: Sequence[Observation]) -> list[str]:
    return [f"- {md_inline(f'[{o.source}] {o.text}')}" for o in observations]

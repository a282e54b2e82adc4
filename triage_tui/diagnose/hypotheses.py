"""Scoring the hypotheses: reads the tables in rules.py over a set of observations."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import cache

from ..model.snapshot import Hypothesis, Observation
from .rules import CATALOGUE, NEEDS_CAP, ROWS, RULE_OUTS, Spec

STATUS_ORDER = ("likely", "possible", "unlikely", "ruled out")


@cache
def _parse(condition: str) -> tuple[tuple[tuple[str, bool], ...], ...]:
    """`a & !b | c` → ((("a", True), ("b", False)), (("c", True),)): OR of ANDs."""
    alternatives = []
    for alt in condition.split("|"):
        terms = []
        for term in alt.split("&"):
            term = term.strip()
            if not term:
                continue
            terms.append((term[1:].strip(), False) if term.startswith("!") else (term, True))
        alternatives.append(tuple(terms))
    return tuple(alternatives)


def holds(condition: str, present: Mapping[str, Sequence[Observation]]) -> bool:
    if not condition:
        return True
    return any(all((ident in present) == want for ident, want in alt) for alt in _parse(condition))


def positive_ids(condition: str) -> list[str]:
    return [ident for alt in _parse(condition) for ident, want in alt if want]


def _texts(condition: str, present: Mapping[str, Sequence[Observation]]) -> list[str]:
    out = []
    for ident in positive_ids(condition):
        for obs in present.get(ident, ())[:2]:
            if obs.text not in out:
                out.append(obs.text)
    return out


class _Figures(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def _figures(present: Mapping[str, Sequence[Observation]], processes: int) -> _Figures:
    figs = _Figures(processes=processes or "all")
    for ident in sorted(present):  # stable: the same observations give the same text
        for obs in present[ident]:
            for k, v in obs.figures.items():
                figs.setdefault(k, v)
    return figs


def _pick(options: Sequence[tuple[str, str]], present: Mapping[str, Sequence[Observation]], default: str) -> str:
    for condition, text in options:
        if holds(condition, present):
            return text
    return default


def status_for(score: float) -> str:
    return "likely" if score >= 0.6 else "possible" if score >= 0.3 else "unlikely"


def evaluate(observations: Sequence[Observation]) -> tuple[Hypothesis, ...]:
    """Every hypothesis of the catalogue, causes by score then findings, with for/against/next check."""
    present: dict[str, list[Observation]] = defaultdict(list)
    for obs in observations:
        present[obs.id].append(obs)
    procs = next((o.figures.get("processes") for o in observations if o.id in ("several-processes", "all-idle")), 0)
    figs = _figures(present, int(procs) if isinstance(procs, (int, float)) else 0)
    rows_by: dict[str, list] = defaultdict(list)
    for row in ROWS:
        rows_by[row.hypothesis].append(row)
    scored = []
    for order, spec in enumerate(CATALOGUE):
        scored.append((spec, order, *_score(spec, rows_by[spec.id], present, figs)))
    scored.sort(key=lambda t: (t[0].kind != "cause", STATUS_ORDER.index(t[2].status) == 3, -t[3], t[1]))
    return tuple(h for _spec, _order, h, _raw in scored)


def _score(spec: Spec, rows: Sequence, present: Mapping[str, Sequence[Observation]], figs: _Figures):
    raw = 0.0
    for_: list[str] = []
    against: list[str] = []
    for row in rows:
        if not holds(row.when, present):
            continue
        raw += row.weight
        for text in _texts(row.when, present):
            line = f"{text} — {row.note}" if row.note else text
            (for_ if row.weight > 0 else against).append(line)
    if spec.needs and not holds(spec.needs, present):
        raw = min(raw, NEEDS_CAP)
        against.append(spec.needs_text)
    score = round(max(0.0, min(1.0, raw)), 2)
    status = status_for(score)
    for rule in RULE_OUTS:
        if rule.hypothesis == spec.id and holds(rule.when, present):
            reasons = _texts(rule.when, present) + [t for c in rule.cite for t in _texts(c, present)]
            reason = f"{rule.reason}: " + "; ".join(reasons)
            against = [reason] + [a for a in against if a.split(" — ")[0] not in reason]
            status, score = "ruled out", 0.0
            break
    title = _pick(spec.titles, present, spec.title).format_map(figs)
    next_check = _pick(spec.next_checks, present, "").format_map(figs)
    return Hypothesis(spec.id, title, status, score, tuple(for_), tuple(against), next_check), raw

"""Scoring the hypotheses: reads the tables in rules.py over a set of observations."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from string import Formatter
from typing import Optional

from ..model.diagnosis import Evidence, Hypothesis, Observation
from .rules import CATALOGUE, FINDING_CAP, NEEDS_CAP, ROWS, RULE_OUTS, Row, RuleOut, Spec
from .vocabulary import VOCABULARY

STATUS_ORDER = ("likely", "possible", "unlikely", "ruled out")


class RuleError(ValueError):
    """A rule table that cannot work: raised when rules.py is imported, never during a tick."""


_IDENT = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@cache
def _parse(condition: str) -> tuple[tuple[tuple[str, bool], ...], ...]:
    """`a & !b | c` → ((("a", True), ("b", False)), (("c", True),)): OR of ANDs. Raises RuleError on a
    malformed condition (an empty term, a character an id cannot hold)."""
    alternatives = []
    for alt in condition.split("|"):
        terms = []
        for term in alt.split("&"):
            term = term.strip()
            negated = term.startswith("!")
            ident = term[1:].strip() if negated else term
            if not ident:
                raise RuleError(f"empty term in condition {condition!r}")
            if not _IDENT.fullmatch(ident):
                raise RuleError(f"{ident!r} in condition {condition!r} is not an observation id")
            terms.append((ident, not negated))
        alternatives.append(tuple(terms))
    return tuple(alternatives)


def holds(condition: str, present: Mapping[str, Sequence[Observation]]) -> bool:
    if not condition:
        return True
    ids = getattr(present, "ids", None)
    if ids is not None:  # evaluate's: the ids present, fixed while it scores
        return _holds_for(condition, ids)
    return any(all((ident in present) == want for ident, want in alt) for alt in _parse(condition))


@lru_cache(maxsize=8192)
def _holds_for(condition: str, ids: frozenset[str]) -> bool:
    """holds() for a set of present ids: tick after tick the same few sets are asked about the same ~300
    conditions (a frozenset keeps its hash, so a look-up is cheaper than the walk over the condition)."""
    return any(all((ident in ids) == want for ident, want in alt) for alt in _parse(condition))


class _Present(defaultdict):
    """The observations by id, and (once filled) the frozenset of ids present."""

    ids: Optional[frozenset[str]] = None


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
    figs = _Figures(processes=processes or "the")
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


def _named_pids(options: Sequence[tuple[str, str]], present: Mapping[str, Sequence[Observation]]) -> tuple[int, ...]:
    """The PIDs of the observations behind the title that was picked (the odd rank of `stacks-odd-rank`, the
    stopped process of `stopped-process`): the rows every face marks. None for the plain title."""
    for condition, _text in options:
        if holds(condition, present):
            pids: list[int] = []
            for ident in positive_ids(condition):
                for pid in present[ident][0].pids if present.get(ident) else ():
                    if pid not in pids:
                        pids.append(pid)
            return tuple(pids)
    return ()


def status_for(score: float) -> str:
    return "likely" if score >= 0.6 else "possible" if score >= 0.3 else "unlikely"


Kept = dict[str, tuple[tuple, Hypothesis, float]]  # hypothesis id -> (what it was worked out from, it, its raw sum)


def evaluate(observations: Sequence[Observation], kept: Optional[Kept] = None) -> tuple[Hypothesis, ...]:
    """Every hypothesis of the catalogue, causes by score then findings, with for/against/next check.

    `kept` (the engine's, tick after tick): a hypothesis whose conditions name the same observations as last
    time, with the same texts and PIDs, and whose titles read the same figures, is last time's object; only
    those whose evidence moved are scored again (on a quiet tree, those citing the one text with a growing
    figure: "idle for N s")."""
    present: _Present = _Present(list)
    for obs in observations:
        present[obs.id].append(obs)
    present.ids = frozenset(present)
    procs = next((o.figures.get("processes") for o in observations if o.id in ("several-processes", "all-idle")), 0)
    figs = _figures(present, int(procs) if isinstance(procs, (int, float)) else 0)
    scored = []
    for order, spec in enumerate(CATALOGUE):
        if kept is None:
            scored.append((spec, order, *_score(spec, _ROWS_BY[spec.id], present, figs)))
            continue
        ids, fields = _DEPENDS[spec.id]
        key = (tuple(tuple((o.text, o.pids) for o in found[:2]) if (found := present.get(i)) else None for i in ids),
               tuple(figs.get(f, "?") for f in fields))
        last = kept.get(spec.id)
        if last is not None and last[0] == key:
            scored.append((spec, order, last[1], last[2]))
            continue
        h, raw = _score(spec, _ROWS_BY[spec.id], present, figs)
        kept[spec.id] = (key, h, raw)
        scored.append((spec, order, h, raw))
    scored.sort(key=rank_key)
    return tuple(h for _spec, _order, h, _raw in scored)


def rank_key(t: tuple) -> tuple:
    """The one order every face shows: causes before findings, ruled out last among them, then by
    score (the unclipped sum breaks ties at the cap), then catalogue order."""
    spec, order, h, raw = t
    return (spec.kind != "cause", h.status == "ruled out", -h.score, -raw, order)


def _row_evidence(when: str, weight: float, note: str, present: Mapping[str, Sequence[Observation]]) -> Evidence:
    """The row as shown: the first observation its condition names that is present, its texts, its note."""
    named = next((ident for ident in positive_ids(when) if ident in present), when)
    text = "; ".join(_texts(when, present)) or named
    return Evidence(named, weight, f"{text} — {note}" if note else text)


def _score(spec: Spec, rows: Sequence, present: Mapping[str, Sequence[Observation]], figs: _Figures):
    evidence: list[Evidence] = []
    for_: list[str] = []
    against: list[str] = []
    for row in rows:
        if not holds(row.when, present):
            continue
        evidence.append(_row_evidence(row.when, row.weight, row.note, present))
        for text in _texts(row.when, present):
            line = f"{text} — {row.note}" if row.note else text
            (for_ if row.weight > 0 else against).append(line)
    raw = sum(e.weight for e in evidence)
    cap, cap_reason = 1.0, ""
    if spec.needs and not holds(spec.needs, present):
        cap, cap_reason = NEEDS_CAP, spec.needs_text
        against.append(spec.needs_text)
    status = status_for(clip_score(raw, cap))
    for rule in RULE_OUTS:
        if rule.hypothesis == spec.id and holds(rule.when, present):
            reasons = _texts(rule.when, present) + [t for c in rule.cite for t in _texts(c, present)]
            reason = f"{rule.reason}: " + "; ".join(reasons)
            against = [reason] + [a for a in against if a.split(" — ")[0] not in reason]
            status, cap, cap_reason = "ruled out", 0.0, reason
            break
    if spec.kind == "finding" and cap > FINDING_CAP:  # a fact about the evidence, not a cause: it never outranks one
        cap, cap_reason = FINDING_CAP, cap_reason or "a finding: scored below every possible cause"
    score = clip_score(raw, cap)
    title = _pick(spec.titles, present, spec.title).format_map(figs)
    next_check = _pick(spec.next_checks, present, "").format_map(figs)
    return Hypothesis(spec.id, title, status, score, tuple(for_), tuple(against), next_check, spec.kind,
                      tuple(evidence), cap, cap_reason, _named_pids(spec.titles, present)), raw


def clip_score(raw: float, cap: float = 1.0) -> float:
    """The score shown: the rows' sum clipped to 0..cap, two decimals."""
    return round(max(0.0, min(cap, raw)), 2)


# ---------------------------------------------------------------- the tables, checked once at import
def _conditions(catalogue: Sequence[Spec], rows: Sequence[Row], rule_outs: Sequence[RuleOut]):
    """(where, condition) of every condition the tables hold."""
    for spec in catalogue:
        if spec.needs:
            yield f"{spec.id} needs", spec.needs
        for condition, _ in (*spec.titles, *spec.next_checks):
            if condition:
                yield f"{spec.id} title/next check", condition
    for row in rows:
        yield f"row {row.hypothesis}", row.when
    for rule in rule_outs:
        yield f"rule-out {rule.hypothesis}", rule.when
        for cited in rule.cite:
            yield f"rule-out {rule.hypothesis} cite", cited


def check_rules(catalogue: Sequence[Spec], rows: Sequence[Row], rule_outs: Sequence[RuleOut]) -> None:
    """Raise RuleError unless every condition parses, names only ids of the vocabulary (ids an observer
    can emit), every row and rule-out belongs to a hypothesis of the catalogue, and every row names at
    least one observation that must be present (its evidence row cites it)."""
    ids = {spec.id for spec in catalogue}
    for where, condition in _conditions(catalogue, rows, rule_outs):
        try:
            parsed = _parse(condition)
        except RuleError as exc:
            raise RuleError(f"{where}: {exc}") from None
        unknown = sorted({ident for alt in parsed for ident, _ in alt if ident not in VOCABULARY})
        if unknown:
            raise RuleError(f"{where}: {', '.join(unknown)} in {condition!r}: no observer emits it "
                            "(diagnose/vocabulary.py)")
    for row in rows:
        if row.hypothesis not in ids:
            raise RuleError(f"row for {row.hypothesis!r}: no such hypothesis in the catalogue")
        if not positive_ids(row.when):
            raise RuleError(f"row {row.hypothesis} {row.when!r} names no observation that must be present")
    for rule in rule_outs:
        if rule.hypothesis not in ids:
            raise RuleError(f"rule-out for {rule.hypothesis!r}: no such hypothesis in the catalogue")


def rule_ids() -> set[str]:
    """Every observation id some condition of the tables names (the rest are informational)."""
    return {ident for _, condition in _conditions(CATALOGUE, ROWS, RULE_OUTS)
            for alt in _parse(condition) for ident, _ in alt}


check_rules(CATALOGUE, ROWS, RULE_OUTS)  # at import: a typo on either side is an error, not a silent rule

_ROWS_BY: dict[str, list[Row]] = defaultdict(list)
for _row in ROWS:
    _ROWS_BY[_row.hypothesis].append(_row)


def _depends(spec: Spec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What a hypothesis's scoring reads: the observation ids its conditions name (rows, needs, rule-outs and
    what they cite, titles, next checks) and the figures its texts format."""
    conditions = [row.when for row in _ROWS_BY[spec.id]] + [spec.needs]
    conditions += [c for rule in RULE_OUTS if rule.hypothesis == spec.id for c in (rule.when, *rule.cite)]
    conditions += [c for c, _ in (*spec.titles, *spec.next_checks)]
    ids = sorted({ident for c in conditions if c for alt in _parse(c) for ident, _ in alt})
    texts = [spec.title, *(t for _, t in spec.titles), *(t for _, t in spec.next_checks)]
    fields = sorted({re.split(r"[.\[]", name)[0] for t in texts for _, name, _, _ in Formatter().parse(t) if name})
    return tuple(ids), tuple(fields)


_DEPENDS = {spec.id: _depends(spec) for spec in CATALOGUE}

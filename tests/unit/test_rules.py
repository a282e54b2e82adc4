"""Every row of the rule tables, shown by a case: the observations it names make it count."""

from __future__ import annotations

import pytest

from triage_tui.diagnose.hypotheses import evaluate, holds, positive_ids
from triage_tui.diagnose.rules import CATALOGUE, NEEDS_CAP, ROWS, RULE_OUTS
from triage_tui.model.diagnosis import Observation

IDS = {s.id for s in CATALOGUE}


def obs(*ids: str, **figures) -> list[Observation]:
    return [Observation(id=i, text=f"observed {i}", source="test", at=0.0, figures=dict(figures)) for i in ids]


def first_alternative(condition: str) -> list[str]:
    alt = condition.split("|")[0]
    return [t.strip() for t in alt.split("&") if t.strip() and not t.strip().startswith("!")]


def by_id(hypotheses, hid):
    return next(h for h in hypotheses if h.id == hid)


def needs_ids(hid: str) -> list[str]:
    spec = next(s for s in CATALOGUE if s.id == hid)
    return first_alternative(spec.needs) if spec.needs else []


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.hypothesis}:{r.when}" for r in ROWS])
def test_each_row_counts_for_or_against(row) -> None:
    assert row.hypothesis in IDS
    present = first_alternative(row.when) + needs_ids(row.hypothesis)
    h = by_id(evaluate(obs(*present)), row.hypothesis)
    wanted = [f"observed {i}" for i in first_alternative(row.when)]
    side = h.for_ if row.weight > 0 else h.against
    if h.status == "ruled out":  # a rule-out may fire on the same observation: its reason carries the text
        side = h.against
    assert any(w in line for w in wanted for line in side), (row, h)


@pytest.mark.parametrize("row", [r for r in ROWS if r.weight > 0], ids=lambda r: f"{r.hypothesis}:{r.when}")
def test_each_supporting_row_raises_the_score(row) -> None:
    base = [i for i in needs_ids(row.hypothesis) if i not in first_alternative(row.when)]
    with_row = by_id(evaluate(obs(*base, *first_alternative(row.when))), row.hypothesis)
    without = by_id(evaluate(obs(*base)), row.hypothesis)
    if with_row.status != "ruled out":
        assert with_row.score > without.score or with_row.score == 1.0


@pytest.mark.parametrize("rule", RULE_OUTS, ids=lambda r: r.hypothesis)
def test_each_rule_out_fires_and_says_why(rule) -> None:
    present = first_alternative(rule.when)
    h = by_id(evaluate(obs(*present)), rule.hypothesis)
    assert h.status == "ruled out" and h.score == 0.0
    assert h.against[0].startswith(rule.reason)
    assert all(f"observed {i}" in h.against[0] for i in present)


@pytest.mark.parametrize("rule", [r for r in RULE_OUTS if "!" in r.when], ids=lambda r: r.hypothesis)
def test_each_rule_out_yields_to_its_exceptions(rule) -> None:
    blockers = [t.strip()[1:] for t in rule.when.split("&") if t.strip().startswith("!")]
    for blocker in blockers:
        h = by_id(evaluate(obs(*first_alternative(rule.when), blocker)), rule.hypothesis)
        assert h.status != "ruled out", blocker


def test_needs_caps_a_hypothesis_without_its_precondition() -> None:
    capped = [s for s in CATALOGUE if s.needs]
    assert capped
    for spec in capped:
        rows = [r for r in ROWS if r.hypothesis == spec.id and r.weight > 0]
        present = [i for r in rows for i in first_alternative(r.when) if not holds(spec.needs, {i: [1]})]
        present = [i for i in present if i not in positive_ids(spec.needs)]
        h = by_id(evaluate(obs(*present)), spec.id)
        assert h.score <= NEEDS_CAP and spec.needs_text in h.against


def test_condition_language() -> None:
    present = {"a": [1], "b": [1]}
    assert holds("a & b", present) and holds("a & !c", present) and holds("c | b", present)
    assert not holds("a & !b", present) and not holds("c", present)
    assert holds("", present)


def test_no_evidence_leaves_every_cause_unlikely() -> None:
    for h in evaluate([]):
        assert h.status == "unlikely" and h.score == 0.0


def test_findings_come_after_causes_and_causes_sorted_by_score() -> None:
    hs = evaluate(obs("rss-illusion", "stopped-process", "busy-process"))
    kinds = {s.id: s.kind for s in CATALOGUE}
    assert kinds[hs[-1].id] == "finding" or hs[-1].status == "ruled out"
    causes = [h for h in hs if kinds[h.id] == "cause" and h.status != "ruled out"]
    assert [h.score for h in causes] == sorted((h.score for h in causes), reverse=True)
    assert hs[0].id == "stopped"


def test_titles_and_next_checks_take_figures() -> None:
    hs = evaluate(obs("several-processes", "stacks-odd-rank", pid=4242, kind="sleep", frame="init_drafter (x.py:3)",
                      processes=9))
    h = by_id(hs, "wait-for-missing-rank")
    assert "PID 4242" in h.title and "init_drafter" in h.title
    assert "PID 4242" in h.next_check and "S" in h.next_check
    h0 = by_id(evaluate(obs("several-processes", "all-idle", processes=9)), "wait-for-missing-rank")
    assert "capture stacks of all 9 processes" in h0.next_check


def test_a_finding_keeps_its_status_but_never_outranks_a_cause() -> None:
    hs = evaluate(obs("rss-illusion", "several-processes", "all-idle", "port-refused"))
    illusion = by_id(hs, "rss-illusion")
    assert illusion.status == "likely" and illusion.score <= 0.3
    assert by_id(hs, "wait-for-missing-rank").score > illusion.score


def test_conditions_use_only_the_languages_operators() -> None:
    """`a & b | c` is an OR of ANDs: there are no parentheses, so `a & (b | c)` would silently mean something else."""
    conditions = [r.when for r in ROWS] + [r.when for r in RULE_OUTS] + [s.needs for s in CATALOGUE]
    conditions += [c for s in CATALOGUE for c, _ in s.titles + s.next_checks]
    assert not [c for c in conditions if "(" in c or ")" in c]

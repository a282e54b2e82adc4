"""The observation vocabulary as a registry: rules name only ids an observer can emit (checked at import),
observers emit only registered ids, conditions are parsed once and validated, unused ids are reported, and a
score is the clipped sum of the evidence rows shown."""

from __future__ import annotations

import pytest

from triage_tui.demo.fixture import build_snapshots
from triage_tui.diagnose import observations as process_observations
from triage_tui.diagnose import resource_observations, stack_observations
from triage_tui.diagnose.engine import DiagnosisEngine
from triage_tui.diagnose.hypotheses import RuleError, check_rules, clip_score, rule_ids
from triage_tui.diagnose.rules import CATALOGUE, ROWS, RULE_OUTS, Row, RuleOut, Spec
from triage_tui.diagnose.vocabulary import VOCABULARY, UnknownObservation
from triage_tui.diagnose.wait_kinds import KINDS

# Registered ids no rule names: facts shown to the reader (and counted by the engine's own code, such as
# the processes figure), not evidence for a cause. Adding one here is a decision; this test reports a new one.
INFORMATIONAL = {
    "stacks-failed": "says which processes' stacks could not be read",
    "stacks-subprocess": "a main thread waiting for a child: shown, no cause rests on it yet",
    "log-timeout": "a generic timeout line, shown; the specific NCCL/barrier ones are evidence",
    "oom-kill-elsewhere": "an OOM kill of another program: shown, deliberately not counted",
    "segfault-elsewhere": "a segfault of another program: shown, deliberately not counted",
    "prose-gpu-idle": "a figure quoted in prose: shown, no rule rests on prose alone",
    "prose-rss": "a figure quoted in prose: shown",
    "prose-stuck": "'stuck for hours' in prose: shown",
    "pasted-code": "a script pasted instead of its output, with the library calls it makes: shown, no cause",
    "told-stall": "the symptom in the reporter's words ('seems stuck', 'taking too long'): shown, evidence for no cause",
    "first-look": "CPU against age, state, wait channel, a log's mtime: shown at once, the watch judges",
    "not-judged-yet": "says what a short watch cannot judge: shown, no rule",
    "store-accepting": "a rendezvous store's port state: shown, it is no evidence of a server",
    "store-refused": "a rendezvous store's port state: shown (the waits' rendezvous rows judge it)",
    "log-strace-pending-wait": "strace ends in a futex / child / read wait that never returned: where, not why",
}
# stacks-odd-KIND exists for every wait kind; rules name the kinds that point at a cause (compile, device-sync)
ODD_KINDS = {f"stacks-odd-{kind}" for kind in KINDS}


def test_every_id_a_rule_names_is_registered() -> None:
    assert rule_ids() <= set(VOCABULARY)


def test_ids_no_rule_uses_are_reported() -> None:
    unused = set(VOCABULARY) - rule_ids() - ODD_KINDS
    assert unused == set(INFORMATIONAL), f"registered but named by no rule: {sorted(unused - set(INFORMATIONAL))}"


def test_a_rule_naming_an_unknown_id_fails_the_check() -> None:
    with pytest.raises(RuleError, match="stacks-lock-wiat"):
        check_rules(CATALOGUE, (Row("deadlock", "stacks-lock-wiat", 0.6),), RULE_OUTS)
    with pytest.raises(RuleError, match="no-such-hypothesis"):
        check_rules(CATALOGUE, (Row("no-such-hypothesis", "all-idle", 0.6),), RULE_OUTS)
    with pytest.raises(RuleError, match="empty term"):
        check_rules(CATALOGUE, (Row("deadlock", "all-idle & ", 0.6),), RULE_OUTS)
    with pytest.raises(RuleError, match="names no observation"):
        check_rules(CATALOGUE, (Row("deadlock", "!all-idle", 0.6),), RULE_OUTS)
    with pytest.raises(RuleError, match="typo-id"):
        check_rules(CATALOGUE, ROWS, (RuleOut("oom", "memory-ample", "not an OOM", cite=("typo-id",)),))
    with pytest.raises(RuleError, match="needs-typo"):
        check_rules((Spec("deadlock", "t", needs="needs-typo"),), (), ())
    check_rules(CATALOGUE, ROWS, RULE_OUTS)  # the real tables pass (they were checked at import too)


@pytest.mark.parametrize("module", [process_observations, resource_observations, stack_observations])
def test_an_observer_cannot_emit_an_unregistered_id(module) -> None:
    args = ("no-such-id", "text", 0.0) if module is stack_observations else ("no-such-id", "text", "processes", 0.0)
    with pytest.raises(UnknownObservation):
        module._obs(*args)


def test_every_score_is_the_clipped_sum_of_its_rows() -> None:
    engine = DiagnosisEngine()
    seen = 0
    for snapshot in build_snapshots(30, busy_for=3):
        for h in engine.update(snapshot).hypotheses:
            assert h.score == clip_score(sum(e.weight for e in h.evidence), h.cap), h
            assert all(e.observation in VOCABULARY for e in h.evidence)
            assert (h.cap < 1.0) == bool(h.cap_reason)
            seen += len(h.evidence)
    assert seen > 0


def test_the_pasted_observers_ids_are_registered() -> None:
    from triage_tui.diagnose.pasted_text import PASTE_OBSERVATIONS

    assert set(PASTE_OBSERVATIONS) <= set(VOCABULARY)

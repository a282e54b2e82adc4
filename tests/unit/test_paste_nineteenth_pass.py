"""The nineteenth pass (issue 15): the mined phrases count wherever the other evidence ranks no cause, not only where
the readers found nothing a rule weighs (the gate `paste-no-other-evidence`): a paste where a rule weighs something (a
finding, or evidence against a cause) but ranks nothing was silent."""

from __future__ import annotations

from pathlib import Path

from triage_tui.diagnose.corpus_score import read_case
from triage_tui.diagnose.mined_rows import MINED_WEIGHT
from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.prose_mined import PREFIX

ROOT = Path(__file__).resolve().parents[2]


def test_phrases_count_where_a_rule_weighs_something_but_no_cause_is_ranked() -> None:
    # cases-15 influxdb-cpp-52 (a client in recv() with no receive timeout): a stack with no lock in it is evidence
    # against a deadlock (stacks-no-lock, -0.3), which ranks nothing; the phrases the paste shares with the seen cases
    # of network-wait now rank it, where the old gate (nothing a rule weighs) kept the paste silent
    name = "influxdb-cpp-52-http-request-stuck-in-recv-no-receive-timeout.md"
    case = read_case(ROOT / "tests" / "corpus" / "cases-15" / name)
    d = diagnose_text(case.evidence).diagnosis
    ids = {o.id for o in d.observations}
    assert {"stacks-no-lock", "paste-no-other-evidence", PREFIX + "network-wait"} <= ids
    ranked = [h for h in d.hypotheses if h.kind == "cause" and h.status != "ruled out" and h.score > 0]
    assert ranked[0].id == case.cause == "network-wait"
    assert all(e.observation.startswith(PREFIX) for e in ranked[0].evidence)
    assert ranked[0].score <= 3 * MINED_WEIGHT + 1e-9


def test_a_cause_the_other_evidence_ranks_keeps_the_phrases_silent() -> None:
    # a deadlock told by the stacks ranks: the phrases of other causes the paste holds add nothing
    text = ("Thread 0x7f01 (idle): \"MainThread\"\n    acquire (threading.py:100)\n"
            "OSError: [Errno 28] No space left on device\nThe directory was removed, then it was repeated.\n")
    d = diagnose_text(text).diagnosis
    assert any(h.kind == "cause" and h.score > 0 and not any(e.observation.startswith(PREFIX) for e in h.evidence)
               for h in d.hypotheses)
    assert "paste-no-other-evidence" not in {o.id for o in d.observations}
    assert all(not e.observation.startswith(PREFIX) for h in d.hypotheses for e in h.evidence if e.weight > 0)

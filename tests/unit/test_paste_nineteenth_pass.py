"""The nineteenth pass (issue 15): the mined phrases count wherever the other evidence ranks no cause, not only where
the readers found nothing a rule weighs (the gate `paste-no-other-evidence`): a paste where a rule weighs something (a
finding, or evidence against a cause) but ranks nothing was silent. And two readers of documented tool output from
cases-18's misses: HotSpot's deadlock detector in a thread dump, NVML failing to initialise."""

from __future__ import annotations

from pathlib import Path

from triage_tui.diagnose.corpus_score import read_case
from triage_tui.diagnose.mined_rows import MINED_WEIGHT
from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.diagnose.word_rows import ALONE
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
    # the mined phrases and, since the twenty-second pass, the word model: the weakest rows, under "possible"
    assert all(e.observation.startswith((PREFIX, "told-words-")) for e in ranked[0].evidence)
    assert ranked[0].score <= 3 * MINED_WEIGHT + max(ALONE) + 1e-9 and ranked[0].status == "unlikely"


def test_a_cause_the_other_evidence_ranks_keeps_the_phrases_silent() -> None:
    # a deadlock told by the stacks ranks: the phrases of other causes the paste holds add nothing
    text = ("Thread 0x7f01 (idle): \"MainThread\"\n    acquire (threading.py:100)\n"
            "OSError: [Errno 28] No space left on device\nThe directory was removed, then it was repeated.\n")
    d = diagnose_text(text).diagnosis
    assert any(h.kind == "cause" and h.score > 0 and not any(e.observation.startswith(PREFIX) for e in h.evidence)
               for h in d.hypotheses)
    assert "paste-no-other-evidence" not in {o.id for o in d.observations}
    assert all(not e.observation.startswith(PREFIX) for h in d.hypotheses for e in h.evidence if e.weight > 0)


FIX = Path(__file__).parent / "fixtures" / "paste"


def _causes(text: str) -> list[str]:
    d = diagnose_text(text).diagnosis
    return [h.id for h in d.hypotheses if h.kind == "cause" and h.status != "ruled out" and h.score > 0]


def test_the_jvms_deadlock_detector_in_a_thread_dump_is_a_deadlock() -> None:
    # real output: OpenJDK 17's jstack and jcmd Thread.print of a JVM whose two threads each hold the monitor the
    # other waits for; HotSpot ends the dump with "Found one Java-level deadlock:" ... "Found 1 deadlock."
    for name in ("jstack_openjdk17_found_one_deadlock.txt", "jcmd_thread_print_openjdk17_found_one_deadlock.txt"):
        text = (FIX / name).read_text()
        assert "Found one Java-level deadlock:" in text and "Found 1 deadlock." in text
        d = diagnose_text(text).diagnosis
        assert "log-jvm-deadlock" in {o.id for o in d.observations}, name
        assert _causes(text)[:1] == ["deadlock"], name
    # the verdict alone, as cases-18 threaddump-analyzer-12 pastes the end of a Tomcat dump
    name = "threaddump-analyzer-12-tomcat-jstack-found-one-deadlock.md"
    case = read_case(ROOT / "tests" / "corpus" / "cases-18" / name)
    assert _causes(case.evidence)[:1] == [case.cause] == ["deadlock"]
    # the detector's other verdicts: several cycles count, a dump without one says nothing of the kind
    assert _causes("Found 2 deadlocks.\n")[:1] == ["deadlock"]
    assert "log-jvm-deadlock" not in {o.id for o in diagnose_text("No deadlocks found.\n").diagnosis.observations}


def test_nvml_failing_to_start_is_a_lost_gpu_where_nothing_else_explains_it() -> None:
    # real output: cases-18 dcgm-exporter-46 (nv-hostengine's "Error: Failed to initialize NVML" on a node with a GPU in
    # nvidia-smi's ERR! state), read as a crashed worker (its "Error:" a traceback) before this pass
    name = "dcgm-exporter-46-nv-hostengine-fails-one-gpu-in-err-state.md"
    case = read_case(ROOT / "tests" / "corpus" / "cases-18" / name)
    d = diagnose_text(case.evidence).diagnosis
    assert "log-nvml-init-failed" in {o.id for o in d.observations}
    assert _causes(case.evidence)[:1] == [case.cause] == ["gpu-lost"]
    # weak: a driver/library mismatch (a driver upgraded without a reboot) is not read as a lost GPU
    mismatch = "Failed to initialize NVML: Driver/library version mismatch\n"
    assert "log-nvml-init-failed" not in {o.id for o in diagnose_text(mismatch).diagnosis.observations}
    (h,) = [h for h in d.hypotheses if h.id == "gpu-lost"]
    assert h.score < 0.5  # below the device-handle row (0.7): any other cause's evidence decides

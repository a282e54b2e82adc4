"""The eighteenth pass (issue 15): each distinct mined phrase of a cause found in a paste is a row of its own (up to
three a cause, 0.05 each), so where a silent paste shares phrases with the seen cases of several causes the cause that
shares more ranks first; the score is the sum of the rows shown, each naming its phrase, and the gate is unchanged.
The mined rows' mechanics are checked with the word model (the twenty-second pass) off: it weighs the same pastes."""

from __future__ import annotations

from pathlib import Path

from triage_tui.diagnose.corpus_score import read_case
from triage_tui.diagnose.mined_rows import MINED_WEIGHT
from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.prose_mined import COUNTED, MINED, PREFIX, more_id, phrases_in

from tests.unit.paste_diagnosis import ranked, word_model_off

ROOT = Path(__file__).resolve().parents[2]


def _phrases(cause: str) -> list[str]:
    return [p for c, p, _ in MINED if c == cause]


def _scored(text: str) -> dict[str, tuple[float, list[str]]]:
    d = diagnose_text(text).diagnosis
    return {h.id: (h.score, [e.observation for e in h.evidence]) for h in d.hypotheses if h.score > 0}


def test_each_phrase_found_is_a_row_naming_it_and_the_score_is_their_sum() -> None:
    with word_model_off():
        d = diagnose_text("The directory was removed, then it was repeated, and stale.\n").diagnosis
    (h,) = [h for h in d.hypotheses if h.score > 0]
    assert h.id == "stale-file-lock" and {"directory", "removed", "repeated", "stale"} <= set(_phrases(h.id))
    mined = [e for e in h.evidence if e.observation.startswith(PREFIX)]
    assert [e.observation for e in mined] == [PREFIX + h.id, *(more_id(h.id, k) for k in range(2, COUNTED + 1))]
    assert h.score == round(sum(e.weight for e in h.evidence), 2) == round(COUNTED * MINED_WEIGHT, 2)
    named = [e.text.split("here ")[1].split("'")[1].lower() for e in mined]  # three of the four, each once
    assert len(set(named)) == COUNTED and set(named) <= {"directory", "removed", "repeated", "stale"}


def test_the_cause_that_shares_more_phrases_ranks_first_not_the_catalogues_order() -> None:
    # one phrase of event-never-fires ('num cpus'), two of stale-file-lock: one row each tied them at 0.05
    text = "The actors use num_cpus=2.\nThe directory was removed.\n"
    with word_model_off():
        got = _scored(text)
    assert got["stale-file-lock"][0] == 2 * MINED_WEIGHT > got["event-never-fires"][0] == MINED_WEIGHT
    first = max(got, key=lambda k: got[k][0])
    assert first == "stale-file-lock"


def test_overlapping_phrases_count_as_the_selection_counts_them() -> None:
    # cases-16 argo-workflows-7671 (a tqdm bar a line-based log shows only at 100 %: healthy): 'the progress bar'
    # holds two phrases of healthy, 'pip install' is one of compiling; counted, healthy ranks first (it tied before)
    assert phrases_in(PREFIX + "healthy", "only the progress bar at 100%") == ["the progress", "progress bar"]
    case = read_case(ROOT / "tests" / "corpus" / "cases-16" / "argo-workflows-7671-tqdm-bar-only-appears-at-100-percent.md")
    got = _scored(case.evidence)
    assert max(got, key=lambda k: got[k][0]) == case.cause == "healthy"
    assert more_id("healthy", 2) in got["healthy"][1] and more_id("compiling", 2) not in got["compiling"][1]


def test_the_gate_is_unchanged_other_evidence_silences_every_phrase_row() -> None:
    text = "OSError: [Errno 28] No space left on device\nThe directory was removed, then it was repeated.\n"
    d = diagnose_text(text).diagnosis
    assert "paste-no-other-evidence" not in {o.id for o in d.observations}
    assert all(not e.observation.startswith(PREFIX) for h in d.hypotheses if h.score > 0 for e in h.evidence)


def test_output_that_comes_late_after_a_long_run_is_the_symptom_told_and_ranks_nothing() -> None:
    # https://github.com/chriskiehl/Gooey/issues/225 (cases-17), verbatim: the last seen file that read nothing (the
    # tool's output sat in Python's stdout buffer) now has its piece used as the symptom told
    text = ("the tool run a long time before I can see the long output, [...] I wonder to know how to set can make "
            "the log output immediately\n")
    result = diagnose_text(text)
    assert any(p.used and "told-stall" in p.used_as for p in result.parts)
    assert ranked(result.diagnosis, words=False) == []  # the word model's causes only, at its weights
    for line in ("the job runs for a very long time", "the log appears only after the program ends",
                 "I want to see the output in real time", "nothing prints until the end, before we could see any output"):
        assert "told-stall" in {o.id for o in diagnose_text(line + "\n").diagnosis.observations}, line
    for line in ("the output is written to out.txt", "the tool ran once", "a long time ago I used it"):
        assert "told-stall" not in {o.id for o in diagnose_text(line + "\n").diagnosis.observations}, line

"""The word model (issue 15, the twenty-second pass): the causes a silent paste's words point to, learned from the
seen sets, shown with the phrases that weigh, and never reordering what other evidence ranks."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from triage_tui.diagnose import word_model
from triage_tui.diagnose.corpus_score import read_case, read_cases
from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.diagnose.rules import CATALOGUE
from triage_tui.diagnose.word_rows import ALONE, BEHIND, WORD_ROWS
from triage_tui.parse.paste_words import phrases_of

from tests.unit.bench_script import load_bench_script
from tests.unit.paste_diagnosis import by_words_only, ranked, word_model_off

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
SCRIPT = load_bench_script("paste_selection_22")


@dataclass(frozen=True)
class _Seen:
    """What the selection's learn() reads of a seen case."""

    cause: str
    project: str
    phrases: frozenset


def test_the_table_is_what_the_script_writes_from_the_seen_sets_only() -> None:
    assert SCRIPT.SEEN == ("cases", *(f"cases-{n}" for n in range(2, 29)))
    assert "glob" not in (ROOT / "bench" / "paste_selection_22.py").read_text().replace("never a glob", "")
    cases = [c for d in SCRIPT.SEEN for c in read_cases(CORPUS / d)]
    learned = SCRIPT.learn([_Seen(c.cause, "/".join(c.source.split("/")[3:5]).lower(), phrases_of(c.evidence))
                            for c in cases])
    table = json.loads(word_model.TABLE.read_text(encoding="utf-8"))
    assert table["causes"] == learned["causes"] and len(cases) == sum(table["causes"].values()) == 816
    assert table["phrases"] == learned["phrases"], "python3 bench/paste_selection_22.py --write, and report it"
    assert table["sources"] == [SCRIPT.RULE._short(c.source) for c in cases]


def test_every_phrase_is_held_by_three_seen_cases_of_two_projects() -> None:
    table = json.loads(word_model.TABLE.read_text(encoding="utf-8"))
    owners = {}
    for d in SCRIPT.SEEN:
        for c in read_cases(CORPUS / d):
            owners.setdefault(SCRIPT.RULE._short(c.source), c)
    for phrase, by in list(table["phrases"].items())[::50]:
        assert sum(ix[0] for ix in by.values()) >= 3, phrase
        for cause, (count, *first) in by.items():
            assert 1 <= len(first) <= 2 and len(first) <= count
            for i in first:  # the sources named are seen cases of that cause holding the phrase
                case = owners[table["sources"][i]]
                assert case.cause == cause and phrase in phrases_of(case.evidence), (phrase, cause)


def test_its_causes_are_the_catalogues_and_each_has_a_row_per_place_and_gate() -> None:
    assert set(word_model.WORD_CAUSES) == {s.id for s in CATALOGUE if s.kind == "cause"}
    for cause in word_model.WORD_CAUSES:
        for place in range(1, word_model.PLACES + 1):
            oid = word_model.place_id(cause, place)
            assert (cause, f"{oid} & paste-no-other-evidence", ALONE[place - 1]) in {
                (r.hypothesis, r.when, r.weight) for r in WORD_ROWS}
            assert (cause, f"{oid} & paste-other-evidence", BEHIND[place - 1]) in {
                (r.hypothesis, r.when, r.weight) for r in WORD_ROWS}
    # with the mined rows' most (0.15) a cause the words alone rank stays "unlikely" (under 0.3)
    assert max(ALONE) + 0.15 < 0.3 and max(BEHIND) < 0.05


def test_a_silent_paste_ranks_the_causes_its_words_favour_with_the_phrases_shown() -> None:
    text = "Every later run blocks after the interrupted one; removing the cache directory fixes it.\n"
    d = diagnose_text(text).diagnosis
    causes = [h for h in d.hypotheses if h.score > 0 and h.status != "ruled out"]
    # no reader or hand-written row ranks it: the mined phrases and the words do
    assert all(e.observation.startswith(("told-phrase-", "told-words-")) for h in causes for e in h.evidence
               if e.weight > 0)
    assert [h.id for h in causes][:1] == ["stale-file-lock"] and len(causes) == 3
    for h in causes:
        assert h.status == "unlikely" and h.score == round(sum(e.weight for e in h.evidence), 2)
    words = [e for e in causes[0].evidence if e.observation.startswith("told-words-")]
    assert len(words) == 1 and words[0].weight == ALONE[0] and "rank stale-file-lock first" in words[0].text
    shown = [p.split("'")[0] for p in words[0].text.split(": '", 1)[1].split("; '")]
    assert shown and all(p in phrases_of(text) for p in shown)  # each phrase named is the paste's own
    assert "seen cases of it" in words[0].text and "#" in words[0].text  # with counts and public sources
    assert "paste-no-other-evidence" in {o.id for o in d.observations}


def test_it_never_reorders_what_other_evidence_ranks() -> None:
    # on two seen sets, case by case: where the other evidence ranks a cause, the first three it ranks stay first,
    # in their order; the words may only add causes behind them, at BEHIND's weights
    for d in ("cases-20", "cases-21"):
        for path in sorted((CORPUS / d).glob("*.md")):
            case = read_case(path)
            with word_model_off():
                off = diagnose_text(case.evidence).diagnosis
            before = ranked(off)
            after = diagnose_text(case.evidence).diagnosis
            if "paste-no-other-evidence" in {o.id for o in off.observations} or not before:
                continue  # silent but for the mined phrases: the words count there at ALONE's weights
            assert ranked(after)[:len(before)] == before, case.name
            for h in after.hypotheses:
                if h.id not in before and h.score > 0:
                    assert by_words_only(h) and h.score <= max(BEHIND), (case.name, h.id)


def test_a_phrase_none_of_a_causes_cases_hold_never_counts_for_it(monkeypatch) -> None:
    # smoothing alone would make an unseen phrase look likelier in a small cause than over all cases
    table = word_model._Table(0.5, ("a/b#1", "a/c#2", "a/d#3", "a/e#4"), {"oom": 100, "stopped": 3},
                              {"rare": {"oom": (1, 0)}, "suspend": {"stopped": (3, 1, 2)}})
    monkeypatch.setattr(word_model, "_table", lambda: table)
    monkeypatch.setattr(word_model, "MIN_FOUND", 1)
    assert [r.cause for r in word_model.rank_words("rare")] == ["oom"]
    assert [r.cause for r in word_model.rank_words("rare suspend")][:1] == ["stopped"]
    (r,) = [r for r in word_model.rank_words("rare suspend") if r.cause == "stopped"]
    assert [w.phrase for w in r.phrases] == ["suspend"] and r.phrases[0].sources == ("a/c#2", "a/d#3")
    assert word_model.rank_words("nothing known here") == ()


def test_a_huge_paste_is_read_in_its_first_part() -> None:
    blob = "x" * 5_000_000 + " stale lock file"
    assert word_model.rank_words(blob) == ()  # past MAX_TEXT, and inside one 5 MB word: nothing
    assert word_model.rank_words("stale lock file " + "y " * 1_000_000)[0].cause == "stale-file-lock"


def test_a_paste_that_says_too_little_ranks_nothing_and_reads_nothing() -> None:
    text = "hello, my server is broken\nplease help\n"
    assert 0 < len(phrases_of(text) & set(json.loads(word_model.TABLE.read_text())["phrases"])) < word_model.MIN_FOUND
    assert word_model.rank_words(text) == ()
    result = diagnose_text(text)
    assert not any(p.used for p in result.parts) and not any(h.score > 0 for h in result.diagnosis.hypotheses)


def test_the_prose_the_words_alone_rank_from_is_a_used_piece() -> None:
    # https://github.com/ai4d-iasc/trixie/issues/38 (cases-22, scored once, then seen): a GPU of a node "not working",
    # told in two sentences: no reader reads it, the words rank gpu-lost, and the piece says it was read for them
    case = read_case(CORPUS / "cases-22" / "trixie-38-cn110-gpu-not-working-node-drained-gpu-replaced.md")
    result = diagnose_text(case.evidence)
    used = [p for p in result.parts if p.used]
    assert used and all(p.kind == "text" and p.used_as.startswith("words the seen cases share (told-words-")
                        for p in used)
    assert ranked(result.diagnosis)[:1] == [case.cause] == ["gpu-lost"]

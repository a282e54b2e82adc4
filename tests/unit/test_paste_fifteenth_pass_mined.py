"""The fifteenth pass (issue 15): the mined lexicon (parse/prose_mined.py), phrases chosen by a rule from the seen sets
(bench/paste_selection_15.py; re-mined over 16 seen sets by the seventeenth pass, over 17 by the eighteenth and over 18
by the nineteenth: bench/paste_selection_19.py, which writes the table to parse/prose_mined_table.py).
The table is what the script writes, every row meets the rule on the seen cases' evidence, each row's sources are
seen cases of its cause, a phrase fires its cause's observation worth 0.05 and never inside a longer word, it counts
only where no other evidence ranks a cause (since the nineteenth pass), and the selection reads the seen sets only,
by an explicit list.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

from triage_tui.diagnose.corpus_score import read_cases
from triage_tui.diagnose.mined_rows import MINED_ROWS, MINED_WEIGHT
from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.prose_lexicon import scan_told
from triage_tui.parse.prose_mined import COUNTED, MINED, MINED_SIGNALS, PREFIX, more_id, pattern_of

from tests.unit.paste_diagnosis import ranked, word_model_off

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    # the nineteenth pass's script: the fifteenth's rule (its module, RULE) over the 18 seen sets, scored as the
    # eighteenth pass's script scores (each phrase found a row)
    spec = importlib.util.spec_from_file_location("paste_selection_19", ROOT / "bench" / "paste_selection_19.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


SCRIPT = _bench()
BENCH = SCRIPT.RULE
COUNTING = SCRIPT.PASS18.counting


def test_the_selection_reads_the_seen_sets_only_by_an_explicit_list() -> None:
    assert BENCH.SEEN == ("cases", *(f"cases-{n}" for n in range(2, 19)))
    for name in ("paste_selection_15.py", "paste_selection_17.py", "paste_selection_18.py", "paste_selection_19.py"):
        assert "glob" not in (ROOT / "bench" / name).read_text().replace("never a glob", ""), name


def test_the_table_is_what_the_script_writes_from_the_seen_sets() -> None:
    # reproducible: bench/paste_selection_19.py --write gives this table (phrases, and the order of its rows)
    # the rule scores with the engine as it is since the eighteenth pass (each phrase found a row); it admits the same
    # phrases as with one row per cause
    # (and, since the nineteenth pass, where no other evidence ranks a cause: the gate it measured and kept)
    seen = BENCH.load()
    for scoring in (SCRIPT.gated(True), SCRIPT.gated(False), COUNTING(True), COUNTING(False)):
        with scoring:
            chosen = BENCH.select(seen)
        assert [(c, p) for c, p, _ in MINED] == [(c, p) for c in sorted(chosen) for p in sorted(chosen[c])], (
            "a reader changed what the seen cases give: python3 bench/paste_selection_19.py --write, and report it")


def test_every_row_meets_the_rule_on_the_seen_cases_evidence() -> None:
    cases = [(d, c, "/".join(c.source.split("/")[3:5]).lower(), BENCH.phrases_of(c.evidence))
             for d in BENCH.SEEN for c in read_cases(ROOT / "tests" / "corpus" / d)]
    sources = {c.source for _, c, _, _ in cases}
    for cause, phrase, said in MINED:
        hits = [(d, c, proj) for d, c, proj, ps in cases if phrase in ps]
        right = [(d, proj) for d, c, proj in hits if c.cause == cause]
        assert len({d for d, _ in right}) >= 3 and len({p for _, p in right}) >= 2, phrase
        assert len(right) > len(hits) - len(right), phrase  # right more often than wrong
        for short in said.split("; "):  # owner/repo#N of a seen case of that cause
            owner_repo, _, number = short.partition("#")
            assert any(s.split("/")[3:5] == owner_repo.split("/") and s.rstrip("/").split("/")[-1] == number
                       and c.cause == cause for _, c, _, _ in cases for s in [c.source]), short
            assert any(owner_repo in s for s in sources)


def test_one_row_per_cause_and_phrase_found_worth_a_quarter_of_a_breadth_row() -> None:
    # the first phrase found is the cause's own observation; the second and third (the eighteenth pass) one each more
    causes = Counter(cause for cause, _, _ in MINED)
    assert {s.id for s in MINED_SIGNALS} == {PREFIX + c for c in causes}
    assert {(r.hypothesis, r.when, r.weight) for r in MINED_ROWS} == {
        (c, f"{oid} & paste-no-other-evidence", MINED_WEIGHT) for c in causes
        for oid in (PREFIX + c, *(more_id(c, k) for k in range(2, COUNTED + 1)))}
    assert MINED_WEIGHT == 0.05 and COUNTED == 3


@pytest.mark.parametrize("cause, phrase", [(c, p) for c, p, _ in MINED][:: max(1, len(MINED) // 25)])
def test_a_phrase_fires_its_causes_observation_and_not_inside_a_longer_word(cause: str, phrase: str) -> None:
    import re

    assert PREFIX + cause in {s.id for s in scan_told(f"we saw {phrase.replace(' ', '-')} here")}
    alone = re.compile(pattern_of([phrase]), re.I)
    assert alone.search(f"({phrase})") and not alone.search(f"x{phrase}") and not alone.search(f"{phrase}9")


def test_a_told_phrase_alone_ranks_its_cause_at_its_weight_and_says_where_it_came_from() -> None:
    # num_cpus: Ray's resource request, shared by event-never-fires cases of ray, daft (cases-11 .. cases-13)
    cause, phrase, _ = next(row for row in MINED if row[1] == "num cpus")
    with word_model_off():  # the word model (the twenty-second pass) weighs the same words: its rows apart
        d = diagnose_text("The actors are created with num_cpus=10 since the restart.\n")
    (h,) = [h for h in d.diagnosis.hypotheses if h.score > 0]
    assert h.id == cause and h.score == MINED_WEIGHT and h.status == "unlikely"
    assert any(e.observation == PREFIX + cause for e in h.evidence)
    assert any(phrase in line for line in h.for_) and any("mined" in line for line in h.for_)


def test_a_told_phrase_is_named_as_the_paste_holds_it() -> None:
    # a cause has up to dozens of phrases and its row lists the first six: the observation names the one found
    cause = "shm-exhausted"
    phrases = [p for c, p, _ in MINED if c == cause]
    assert len(phrases) > 6
    phrase = phrases[-1]
    d = diagnose_text(f"It waited and then {phrase} was all the log said.\n")
    (obs,) = [o for o in d.diagnosis.observations if o.id == PREFIX + cause]
    said = obs.text.split(" (line ")[0]
    assert said.endswith(f"here '{phrase}'") or said.lower().endswith(f"here '{phrase.lower()}'"), said


def test_a_told_phrase_counts_only_where_no_other_evidence_ranks_a_cause() -> None:
    # since the nineteenth pass the gate is "no cause ranked", not "nothing a rule weighs". "No space left on device" in
    # a container given its own /dev/shm: the twelfth pass's rows rank no cause (the disk, not shared memory), so the
    # mined phrases of shm-exhausted now count there, at their weight (three phrases, 0.15, unlikely), below every
    # hand-written row; a "No space left on device" alone ranks shm-exhausted (0.3) and keeps them silent
    text = "OSError: [Errno 28] No space left on device\n`docker run --shm-size=16g --gpus all img` shared memory\n"
    with word_model_off():
        d = diagnose_text(text)
    ids = {o.id for o in d.diagnosis.observations}
    assert {PREFIX + "shm-exhausted", "log-shm-sized", "paste-no-other-evidence"} <= ids
    (h,) = [h for h in d.diagnosis.hypotheses if h.score > 0]
    assert h.id == "shm-exhausted" and h.score == round(COUNTED * MINED_WEIGHT, 2) and h.status == "unlikely"
    alone = diagnose_text("OSError: [Errno 28] No space left on device\nThe directory was removed, then repeated.\n")
    assert "paste-no-other-evidence" not in {o.id for o in alone.diagnosis.observations}
    assert ranked(alone.diagnosis, words=False) == ["shm-exhausted"]


def test_the_pattern_joins_the_words_by_spaces_dashes_or_underscores() -> None:
    import re

    pat = re.compile(pattern_of(["lock file"]), re.I)
    assert pat.search("a stale LOCK_FILE") and pat.search("lock - file") and pat.search("lock  file")
    assert not pat.search("lockfile") and not pat.search("block file") and not pat.search("lock files")

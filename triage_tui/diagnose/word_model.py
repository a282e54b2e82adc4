"""The word model: which causes the words of a silent paste point to, learned from the seen cases (the 22nd pass).

Where nothing a reader or a hand-written row finds ranks a cause, the paste is still prose someone wrote about a
hang, and the seen cases of each cause share words with it ("pidlock", "left behind", "interrupted run"). The mined
lexicon (parse/prose_mined.py) admits a phrase for one cause by a hard rule; this model weighs every phrase the seen
cases share by how much more often it occurs in one cause's cases than in all of them (naive Bayes over the phrases
present, bench/paste_selection_22.py). Left one seen set out at a time, over the 21 seen sets (the mined phrases and
this table both learned from the other 20), the engine with it ranks 490 of 612 cases right first and 538 in its first
three, against 459 and 479 with the mined rows alone; replayed on the fresh sets cases-10 .. cases-21 by the engines
that scored them once (bench/paste_replay_22.py), 230 of 360 (64 %) and 288 (80 %), against 170 and 186; scored once
on the next two fresh sets, cases-22 19 of 30 (24) and cases-23 16 (21), against 15 (16) and 15 (17) without it.
Re-learned by the twenty-third pass over the 23 seen sets cases .. cases-23 (672 cases, 3,086 phrases):
leave-one-set-out 493 -> 534 top-1, 519 -> 592 top-3; the replay 234 of 360 (65 %), 296 (82 %). Scored once on
cases-24 (with that table): 14 of 29 (20). Re-learned by the twenty-fourth pass over the 24 seen sets cases ..
cases-24 (701 cases, 3,203 phrases): leave-one-set-out 506 -> 549 top-1, 530 -> 611 top-3; the replay, now over
the fifteen fresh sets cases-10 .. cases-24 (449 cases), 209 -> 281 (63 %) top-1, 228 -> 364 (81 %) top-3. Scored
once on four fresh sets cases-25 .. cases-28 with that table: 58 of 115 (50 %) top-1, 82 (71 %) top-3. Re-learned
again over the 28 seen sets (816 cases, 3,768 phrases): leave-one-set-out 553 -> 605 top-1, 586 -> 694 top-3;
scored once with that table on cases-29 and cases-30: 24 of 58 (41 %), 36 (62 %), where the table of 24 sets gives 27
(37): more seen cases of the same kind move a fresh score less than one set of 30 moves by chance.

What it says is evidence, shown: each cause it ranks (at most three, only in a paste holding at least MIN_FOUND of
its phrases, and only a cause its phrases favour over the seen cases as a whole, never the prior alone) is an
observation naming the phrases that weigh most for it, how many seen cases of that cause and of the others hold each,
and the public threads they come from (diagnose/word_rows.py weighs them). The table (word_model.json beside this
module) is written by `bench/paste_selection_22.py --write` from the seen sets only, never by hand.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..parse.paste_words import phrases_of

TABLE = Path(__file__).with_name("word_model.json")
PLACES = 3  # the causes a paste's words may rank
SHOWN = 3  # the phrases named per cause
MAX_TEXT = 400_000  # the characters read: prose is far shorter; a long log's first part holds its story
# the fewest phrases of the table a paste must hold to be ranked: "my server is broken, please help" says too little
# (leave-one-set-out over the seen sets: 3 and 5 cost no case, 10 cost two; bench/paste_selection_22.py MIN_FOUND)
MIN_FOUND = 5

# the causes of the catalogue (diagnose/rules.py), each a row per place (word_rows.py): a test checks the two agree
WORD_CAUSES: tuple[str, ...] = (
    "wait-for-missing-rank", "collective-hang", "collective-mismatch", "deadlock", "crashed-worker", "oom",
    "still-loading", "compiling", "gpu-hang", "io-blocked", "network-wait", "stopped", "busy-loop", "cpu-starved",
    "healthy", "shm-exhausted", "stale-file-lock", "fork-inherited-lock", "event-never-fires", "gpu-lost")


@dataclass(frozen=True)
class PhraseWeight:
    """One phrase of the paste and what the seen cases say of it for one cause."""

    phrase: str
    in_cause: int  # seen cases of the cause that hold it
    cause_cases: int  # seen cases of the cause
    in_others: int  # seen cases of every other cause that hold it
    weight: float  # its log-likelihood ratio for the cause (natural log)
    sources: tuple[str, ...]  # the cause's seen cases holding it (owner/repo#N), up to two


@dataclass(frozen=True)
class WordRank:
    """A cause the paste's words rank, at `place` (1 = first), and the phrases that weigh most for it."""

    cause: str
    place: int
    phrases: tuple[PhraseWeight, ...]
    found: int  # the paste's phrases the table knows


@dataclass(frozen=True)
class _Table:
    alpha: float
    sources: tuple[str, ...]  # case index -> owner/repo#N
    causes: dict[str, int]  # cause -> its seen cases
    phrases: dict[str, dict[str, tuple[int, ...]]]  # phrase -> cause -> (cases holding it, the first two's indices)


@lru_cache(maxsize=1)
def _table() -> _Table:
    raw = json.loads(TABLE.read_text(encoding="utf-8"))
    return _Table(float(raw["alpha"]), tuple(raw["sources"]), {c: int(n) for c, n in raw["causes"].items()},
                  {p: {c: tuple(ix) for c, ix in by.items()} for p, by in raw["phrases"].items()})


def rank_words(text: str) -> tuple[WordRank, ...]:
    """The causes the paste's phrases favour, best first (at most PLACES): naive Bayes over the phrases present, with
    each cause's share of the seen cases as its prior; a cause whose phrases do not favour it, or that none of them
    is held by a seen case of, is never ranked."""
    table = _table()
    found = sorted(phrases_of(text[:MAX_TEXT]) & table.phrases.keys())
    if len(found) < MIN_FOUND:
        return ()
    total, a = sum(table.causes.values()), table.alpha
    every = {p: sum(ix[0] for ix in table.phrases[p].values()) for p in found}  # the seen cases holding each
    scored = []
    for cause, n in table.causes.items():
        weights = []
        for p in found:
            by = table.phrases[p]
            k = by[cause][0] if cause in by else 0
            weights.append(PhraseWeight(p, k, n, every[p] - k, math.log((k + a) / (n + 2 * a))
                                        - math.log((every[p] + a) / (total + 2 * a)),
                                        tuple(table.sources[i] for i in by.get(cause, (0,))[1:])))
        # a phrase none of the cause's seen cases hold never counts for it (smoothing alone would favour a small cause)
        likelihood = sum(w.weight if w.in_cause else min(w.weight, 0.0) for w in weights)
        if likelihood > 0 and any(w.in_cause for w in weights):
            scored.append((-(likelihood + math.log(n / total)), cause, weights))
    scored.sort(key=lambda s: (s[0], WORD_CAUSES.index(s[1]) if s[1] in WORD_CAUSES else len(WORD_CAUSES)))
    return tuple(WordRank(cause, place, tuple(sorted((w for w in weights if w.weight > 0 and w.in_cause),
                                                     key=lambda w: (-w.weight, w.phrase))[:SHOWN]), len(found))
                 for place, (_, cause, weights) in enumerate(scored[:PLACES], 1))


def place_id(cause: str, place: int) -> str:
    """The observation of a cause the paste's words rank at `place`."""
    return f"told-words-{place}-{cause}"


PLACE_IDS: tuple[tuple[str, str], ...] = tuple(
    (place_id(c, k), f"the paste's words rank {c} {('first', 'second', 'third')[k - 1]} of the seen causes (the word "
     "model, learned from the seen sets)") for c in WORD_CAUSES for k in range(1, PLACES + 1))

"""The fifteenth pass's selection (issue 15): phrases mined from the seen sets by a rule, and its leave-one-set-out.

    python3 bench/paste_selection_15.py            # the report: the rows chosen from all seen sets, LOSO per set
    python3 bench/paste_selection_15.py --write    # and write them to triage_tui/parse/prose_mined.py

Only the seen sets are read, by an explicit list (never a glob of tests/corpus: fresh held-out sets sit beside them
and must stay unopened), and only each case's evidence (corpus_score.read_case drops the header).

The rule, over a list of training sets:
- a phrase is one to three words (letters and digits, a word starting with a letter) adjacent on one line, joined by
  spaces, `-` or `_`, at least one word of four letters or more that is no stop word;
- it is a candidate for cause C when it occurs in the evidence of C's cases in >= 3 training sets and >= 2 projects
  (GitHub owner/repository), and in more than RATIO (1, as in the code and the README) times as many of C's cases as
  of all other causes' together ("right more often than wrong"; RATIO 2 gave 323-326/400 and ranked fewer silent
  cases);
The seventeenth pass runs this rule unchanged over 16 seen sets (bench/paste_selection_17.py sets SEEN and writes the
table); run alone, this script still reads the fifteenth pass's 14.
- every candidate of C fires one observation worth MINED_WEIGHT (0.05) for C; the candidates that occur in a training
  case they move off its right first answer are dropped, until none does ("moves no seen case from right to wrong").
The weight and RATIO were chosen by this figure (weights 0.05, 0.1, 0.15 x RATIO 1, 2, 3 x one or two words at least:
322-326/400), so the figure is a little optimistic for the chosen pair.
Leave-one-set-out: each seen set S is scored with the rows chosen from the other sets only. The engine's own scoring
is simulated from each case's hypotheses without the mined rows (a row adds its weight to its cause's raw sum,
clipped at the cause's cap; a ruled-out cause stays out): no condition, cap or rule-out names a mined id. The rows
chosen from all seen sets are then checked through the real engine (--write, then the corpus test).
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triage_tui.diagnose import hypotheses  # noqa: E402
from triage_tui.diagnose.corpus_score import read_cases  # noqa: E402
from triage_tui.diagnose.mined_rows import MINED_WEIGHT  # noqa: E402
from triage_tui.diagnose import pasted_text  # noqa: E402
from triage_tui.diagnose.pasted_text import diagnose_text  # noqa: E402
from triage_tui.diagnose.rules import CATALOGUE  # noqa: E402
from triage_tui.parse import paste_words  # noqa: E402
from triage_tui.parse.prose_mined import PREFIX  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"
SEEN = ("cases", "cases-2", "cases-3", "cases-4", "cases-5", "cases-6", "cases-7", "cases-8", "cases-9", "cases-10",
        "cases-11", "cases-12", "cases-13", "cases-14")
MIN_SETS, MIN_PROJECTS, MAX_WORDS = 3, 2, paste_words.MAX_WORDS
MIN_WORDS, RATIO = 1, 1  # a phrase's fewest words; its cause's cases > RATIO x the others'
FALLBACK = True  # the mined rows count only where nothing else ranks a cause (as the engine does)
# the stop words and the phrase reader live in the package since the twenty-second pass (parse/paste_words.py), which
# the word model reads too: the same phrases are counted by the selection and by the engine
STOP = paste_words.STOP
CAUSES = {s.id for s in CATALOGUE if s.kind == "cause"}
ORDER = {s.id: k for k, s in enumerate(CATALOGUE)}


@dataclass(frozen=True)
class Case:
    set: str
    name: str
    cause: str
    source: str
    project: str
    phrases: frozenset[str]
    known: bool  # the readers found something a rule weighs: the mined rows do not count (paste-no-other-evidence)
    hyps: tuple[tuple[str, str, bool, float, float], ...]  # (id, kind, ruled out, raw sum, cap), the engine's order


phrases_of = paste_words.phrases_of


def _without_mined() -> dict:
    # the word model's rows too (the twenty-second pass): the hypotheses are what the other evidence gives
    return defaultdict(list, {h: [r for r in rows if not r.when.startswith((PREFIX, "told-words-"))]
                              for h, rows in hypotheses._ROWS_BY.items()})


def load() -> list[Case]:
    saved = hypotheses._ROWS_BY
    hypotheses._ROWS_BY = _without_mined()  # the mined rows this pass may already have written: off
    try:
        out = []
        for d in SEEN:
            for c in read_cases(CORPUS / d):
                found = diagnose_text(c.evidence).diagnosis
                hyps = found.hypotheses
                parts = c.source.split("/")
                out.append(Case(d, c.name, c.cause, c.source, "/".join(parts[3:5]).lower(), phrases_of(c.evidence),
                                any(o.id in pasted_text._KNOWN for o in found.observations),
                                tuple((h.id, h.kind, h.status == "ruled out", sum(e.weight for e in h.evidence), h.cap)
                                      for h in hyps)))
        return out
    finally:
        hypotheses._ROWS_BY = saved


def ranked(case: Case, add: set[str]) -> list[str]:
    """The causes with evidence, best first, with MINED_WEIGHT added to each cause in `add` (hypotheses.rank_key)
    where the readers found nothing a rule weighs (the mined rows need paste-no-other-evidence)."""
    if add and FALLBACK and case.known:
        add = set()
    rows = []
    for hid, kind, out, raw, cap in case.hyps:
        if hid in add and not out:
            raw += MINED_WEIGHT
        score = round(max(0.0, min(cap, raw)), 2) if not out else 0.0
        rows.append((kind != "cause", out, -score, -raw, ORDER[hid], hid, score))
    rows.sort()
    return [r[5] for r in rows if r[5] in CAUSES and not r[1] and r[6] > 0]


def fired(case: Case, chosen: dict[str, set[str]]) -> set[str]:
    return {cause for cause, phrases in chosen.items() if phrases & case.phrases}


def select(train: list[Case]) -> dict[str, set[str]]:
    """cause -> the phrases the rule admits from these cases."""
    where: dict[str, list[int]] = defaultdict(list)
    for k, c in enumerate(train):
        for p in c.phrases:
            where[p].append(k)
    chosen: dict[str, set[str]] = defaultdict(set)
    for p, ks in where.items():
        if len(ks) < 3:
            continue
        counts = Counter(train[k].cause for k in ks)
        cause, n = counts.most_common(1)[0]
        if cause not in CAUSES or n <= RATIO * (len(ks) - n) or len(p.split()) < MIN_WORDS:
            continue
        mine = [train[k] for k in ks if train[k].cause == cause]
        if len({c.set for c in mine}) >= MIN_SETS and len({c.project for c in mine}) >= MIN_PROJECTS:
            chosen[cause].add(p)
    while True:  # drop what moves a training case off its right first answer, until nothing does
        drop: set[tuple[str, str]] = set()
        for c in train:
            add = fired(c, chosen)
            if not add or ranked(c, set())[:1] != [c.cause] or ranked(c, add)[:1] == [c.cause]:
                continue
            drop |= {(cause, p) for cause in add if cause != c.cause for p in chosen[cause] & c.phrases}
        if not drop:  # a phrase holding a shorter chosen one of its cause fires nowhere that one does not: left out
            return {cause: {p for p in ps if not any(q != p and f" {q} " in f" {p} " for q in ps)}
                    for cause, ps in chosen.items() if ps}
        for cause, p in drop:
            chosen[cause].discard(p)


def report(cases: list[Case], out=print) -> dict[str, set[str]]:
    total = [0, 0, 0, 0, 0, 0]
    for s in SEEN:
        chosen = select([c for c in cases if c.set != s])
        members = [c for c in cases if c.set == s]
        before = sum(ranked(c, set())[:1] == [c.cause] for c in members)
        loso = sum(ranked(c, fired(c, chosen))[:1] == [c.cause] for c in members)
        silent_before = sum(not ranked(c, set()) for c in members)
        silent_after = sum(not ranked(c, fired(c, chosen)) for c in members)
        wrong = [c.name for c in members if ranked(c, set())[:1] == [c.cause] != ranked(c, fired(c, chosen))[:1]]
        total = [a + b for a, b in zip(total, (before, loso, len(members), silent_before, silent_after, len(wrong)))]
        out(f"{s}: before {before}/{len(members)}, leave-one-set-out {loso}/{len(members)}; silent {silent_before} -> "
            f"{silent_after}; right -> wrong {wrong or 'none'} ({sum(len(v) for v in chosen.values())} phrases chosen "
            "without it)")
    out(f"all seen: before {total[0]}/{total[2]}, leave-one-set-out {total[1]}/{total[2]}; silent {total[3]} -> "
        f"{total[4]}; right -> wrong {total[5]}")
    chosen = select(cases)
    seen_after = sum(ranked(c, fired(c, chosen))[:1] == [c.cause] for c in cases)
    out(f"chosen from all seen sets: {sum(len(v) for v in chosen.values())} phrases for {len(chosen)} causes; seen "
        f"{total[0]} -> {seen_after}/{len(cases)} (simulated)")
    for cause in sorted(chosen):
        for p in sorted(chosen[cause]):
            hits = [c for c in cases if p in c.phrases]
            right = [c for c in hits if c.cause == cause]
            out(f"  {cause}: '{p}' right {len(right)} ({len({c.set for c in right})} sets, "
                f"{len({c.project for c in right})} projects), other causes {len(hits) - len(right)}")
    return chosen


def _short(url: str) -> str:
    """https://github.com/owner/repo/issues/N (or pull/N) -> owner/repo#N"""
    parts = url.split("/")
    return f"{parts[3]}/{parts[4]}#{parts[6]}" if len(parts) > 6 else url


def write(cases: list[Case], chosen: dict[str, set[str]], path: Path | None = None) -> None:
    """Write the rows into the module holding MINED (prose_mined.py until the nineteenth pass moved the table)."""
    path = path or ROOT / "triage_tui" / "parse" / "prose_mined.py"
    rows = []
    for cause in sorted(chosen):
        for p in sorted(chosen[cause]):
            src = list(dict.fromkeys(c.source for c in cases if p in c.phrases and c.cause == cause))[:3]
            said = "; ".join(_short(u) for u in src)
            row = f"    ({cause!r}, {p!r}, {said!r}),\n"
            rows.append(row if len(row) <= 121 else f"    ({cause!r}, {p!r},\n     {said!r}),\n")
    text = path.read_text()
    start = "MINED: tuple[tuple[str, str, str], ...] = (\n"
    head, _, rest = text.partition(start)
    tail = rest[rest.index(")\n") if rest.startswith(")\n") else rest.index("\n)\n") + 1:]
    path.write_text(head + start + "".join(rows) + tail)


if __name__ == "__main__":
    seen = load()
    picked = report(seen)
    if "--write" in sys.argv:
        write(seen, picked)

"""The eighteenth pass's selection (issue 15): the fifteenth pass's rule, unchanged, over the 17 seen sets.

    python3 bench/paste_selection_18.py            # the report: the rows chosen from all seen sets, LOSO per set
    python3 bench/paste_selection_18.py --write    # and write them to triage_tui/parse/prose_mined.py
    python3 bench/paste_selection_18.py --one      # the engine before the pass's one change (one row per cause)
    python3 bench/paste_selection_18.py --behind   # a second variant, measured and not kept (see BEHIND below)

The rule, its parameters (>= 3 sets, >= 2 projects, more of the cause's cases than of all others' together, 1-3
words, 0.05 each, moving no seen case from right to wrong) and the engine's simulation are those of
bench/paste_selection_15.py, imported, not copied: only the list of seen sets grows (cases-17 was scored once and is
seen now). The parameters were not chosen again on this leave-one-set-out figure (the fifteenth pass chose them on 14
sets). The sets are an explicit list (never a glob of tests/corpus: fresh held-out sets sit beside them and must stay
unopened).

COUNT, the one general change chosen in advance, measured (against --one) and kept: each distinct phrase of a cause found in a
paste is a row of its own (MINED_WEIGHT each, at most COUNT of them per cause, 0.15, under one breadth row's 0.2), not
one row per cause whatever the number of its phrases found. Where a silent paste shares phrases with the seen cases of
several causes they tie today and the catalogue's order decides; counted, the cause that shares more of them ranks
first, and the score is still the sum of the rows shown (each names its phrase). The gate is unchanged (the mined rows
count only where nothing else weighs), so no answer other evidence gives can move. The rule admits the same phrases
either way (on the 17 seen sets; tests/unit/test_paste_fifteenth_pass_mined.py checks it).

BEHIND, measured after COUNT and not kept (the pass makes one change): where the readers found something a rule weighs,
each phrase found (up to COUNT a cause) still adds BEHIND (0.01, below every hand-written row's 0.05) to its cause, so
the mined phrases rank a second and third cause behind the ones the other evidence ranks (and one where that evidence
ranks none) instead of none.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.sibling_script import sibling  # noqa: E402 - bench/ is on the path only from here
SEEN = ("cases", "cases-2", "cases-3", "cases-4", "cases-5", "cases-6", "cases-7", "cases-8", "cases-9", "cases-10",
        "cases-11", "cases-12", "cases-13", "cases-14", "cases-15", "cases-16", "cases-17")


RULE = sibling("paste_selection_15")
RULE.SEEN = SEEN  # load() and report() read the module's list

from triage_tui.parse.prose_mined import COUNTED as COUNT  # noqa: E402 - RULE's import put the repository on the path


def _counted_fired(case, chosen: dict[str, set[str]]) -> dict[str, int]:
    """cause -> how many of its chosen phrases the case holds (a dict: RULE reads it as the set of its keys)."""
    return {cause: n for cause, phrases in chosen.items() if (n := len(phrases & case.phrases))}


def _counted_ranked(case, add) -> list[str]:
    """RULE.ranked with MINED_WEIGHT per phrase found, at most COUNT per cause (add: cause -> phrases found)."""
    if add and RULE.FALLBACK and case.known:
        add = {}
    rows = []
    for hid, kind, out, raw, cap in case.hyps:
        if hid in add and not out:
            raw += RULE.MINED_WEIGHT * min(COUNT, add[hid]) if isinstance(add, dict) else RULE.MINED_WEIGHT
        score = round(max(0.0, min(cap, raw)), 2) if not out else 0.0
        rows.append((kind != "cause", out, -score, -raw, RULE.ORDER[hid], hid, score))
    rows.sort()
    return [r[5] for r in rows if r[5] in RULE.CAUSES and not r[1] and r[6] > 0]


BEHIND = 0.01


def _behind_ranked(case, add) -> list[str]:
    """_counted_ranked, with BEHIND per phrase found where the readers found something a rule weighs."""
    rows = []
    for hid, kind, out, raw, cap in case.hyps:
        if hid in add and not out:
            raw += (BEHIND if RULE.FALLBACK and case.known else RULE.MINED_WEIGHT) * (
                min(COUNT, add[hid]) if isinstance(add, dict) else 1)
        score = round(max(0.0, min(cap, raw)), 2) if not out else 0.0
        rows.append((kind != "cause", out, -score, -raw, RULE.ORDER[hid], hid, score))
    rows.sort()
    return [r[5] for r in rows if r[5] in RULE.CAUSES and not r[1] and r[6] > 0]


def top3(cases) -> None:
    """Leave-one-set-out and the whole table's seen figure, top-1 and top-3, with RULE's ranking as it is set."""
    n1 = n3 = 0
    for s in SEEN:
        chosen = RULE.select([c for c in cases if c.set != s])
        for c in cases:
            if c.set == s:
                got = RULE.ranked(c, RULE.fired(c, chosen))[:3]
                n1, n3 = n1 + (got[:1] == [c.cause]), n3 + (c.cause in got)
    chosen = RULE.select(cases)
    seen = [RULE.ranked(c, RULE.fired(c, chosen))[:3] for c in cases]
    print(f"leave-one-set-out top-1 {n1}, top-3 {n3} of {len(cases)}; seen (simulated) top-1 "
          f"{sum(g[:1] == [c.cause] for g, c in zip(seen, cases))}, top-3 {sum(c.cause in g for g, c in zip(seen, cases))}")


@contextlib.contextmanager
def counting(on: bool = True):
    """RULE's selection and scoring with each phrase found a row (the engine since this pass), then as it was."""
    saved = RULE.fired, RULE.ranked
    if on:
        RULE.fired, RULE.ranked = _counted_fired, _counted_ranked
    try:
        yield RULE
    finally:
        RULE.fired, RULE.ranked = saved


if __name__ == "__main__":
    with counting("--one" not in sys.argv):
        if "--behind" in sys.argv:
            RULE.ranked = _behind_ranked
        seen = RULE.load()
        picked = RULE.report(seen)
        top3(seen)
        if "--write" in sys.argv and "--one" not in sys.argv and "--behind" not in sys.argv:
            RULE.write(seen, picked)

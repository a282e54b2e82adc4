"""The seventeenth pass's selection (issue 15): the fifteenth pass's rule, unchanged, over the 16 seen sets.

    python3 bench/paste_selection_17.py            # the report: the rows chosen from all seen sets, LOSO per set
    python3 bench/paste_selection_17.py --write    # and write them to triage_tui/parse/prose_mined.py
    python3 bench/paste_selection_17.py --weak     # the one variant measured (see WEAK below); writes nothing

The rule, its parameters (>= 3 sets, >= 2 projects, more of the cause's cases than of all others' together, 1-3
words, 0.05 each, moving no seen case from right to wrong) and the engine's simulation are those of
bench/paste_selection_15.py, imported, not copied: only the list of seen sets grows (cases-15 and cases-16 were each
scored once and are seen now). The parameters were not chosen again on this leave-one-set-out figure: the fifteenth
pass chose them on 14 sets, and choosing them again here would make the estimate optimistic again. The sets are an
explicit list (never a glob of tests/corpus: fresh held-out sets sit beside them and must stay unopened).

WEAK, the one variant chosen in advance and measured (--weak): the mined phrases count where the other evidence is
weak, every cause it ranks below "possible" (< 0.3), not only where the readers found nothing a rule weighs.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.sibling_script import sibling  # noqa: E402 - bench/ is on the path only from here
SEEN = ("cases", "cases-2", "cases-3", "cases-4", "cases-5", "cases-6", "cases-7", "cases-8", "cases-9", "cases-10",
        "cases-11", "cases-12", "cases-13", "cases-14", "cases-15", "cases-16")
WEAK = 0.3  # hypotheses.status_of: "possible" from 0.3


RULE = sibling("paste_selection_15")
RULE.SEEN = SEEN  # load() and report() read the module's list


def _weak_ranked(case, add: set[str]) -> list[str]:
    """RULE.ranked with the variant's gate: the phrases count where no cause scores 'possible' without them."""
    if add and case.known:
        best = max((round(max(0.0, min(cap, raw)), 2) for hid, _, out, raw, cap in case.hyps
                    if hid in RULE.CAUSES and not out), default=0.0)
        if best >= WEAK:
            add = set()
    return _plain_ranked(case.__class__(**{**case.__dict__, "known": False}), add)


_plain_ranked = RULE.ranked


if __name__ == "__main__":
    if "--weak" in sys.argv:
        RULE.ranked = _weak_ranked
    seen = RULE.load()
    picked = RULE.report(seen)
    if "--write" in sys.argv and "--weak" not in sys.argv:
        RULE.write(seen, picked)

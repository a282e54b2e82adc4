"""The nineteenth pass's selection (issue 15): the fifteenth pass's rule, unchanged, over the 18 seen sets.

    python3 bench/paste_selection_19.py            # the report: the rows chosen from all seen sets, LOSO per set
    python3 bench/paste_selection_19.py --write    # and write them to triage_tui/parse/prose_mined_table.py
    python3 bench/paste_selection_19.py --known    # the gate before the pass's one change (see RANKED below)

The rule, its parameters (>= 3 sets, >= 2 projects, more of the cause's cases than of all others' together, 1-3
words, 0.05 each, moving no seen case from right to wrong), the engine's simulation and the eighteenth pass's scoring
(each distinct phrase found a row, at most COUNTED a cause) are those of bench/paste_selection_15.py and
bench/paste_selection_18.py, imported, not copied: only the list of seen sets grows (cases-18 was scored once and is
seen now). The parameters were not chosen again. The sets are an explicit list (never a glob of tests/corpus: fresh
held-out sets sit beside them and must stay unopened).

RANKED, the one general change chosen in advance (the eighteenth pass named it): the mined phrases count wherever the
other evidence ranks no cause, not only where the readers found nothing a rule weighs (paste-no-other-evidence): a
paste where some rule weighs something (a finding, or evidence against a cause) but no cause is ranked was silent.
Measured against --known (leave-one-set-out 391 -> 393 top-1, top-3 408 -> 412, no case moved from right to wrong, the
same 254 phrases admitted) and kept: the engine's gate since this pass, and this script's default.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.sibling_script import sibling  # noqa: E402 - bench/ is on the path only from here
SEEN = ("cases", "cases-2", "cases-3", "cases-4", "cases-5", "cases-6", "cases-7", "cases-8", "cases-9", "cases-10",
        "cases-11", "cases-12", "cases-13", "cases-14", "cases-15", "cases-16", "cases-17", "cases-18")


PASS18 = sibling("paste_selection_18")  # the eighteenth pass's scoring (counting), over RULE
RULE = PASS18.RULE
RULE.SEEN = PASS18.SEEN = SEEN  # load(), report() and top3() read the modules' lists
TABLE = ROOT / "triage_tui" / "parse" / "prose_mined_table.py"


def _ranked_gate(case, add) -> list[str]:
    """The eighteenth pass's ranking (each phrase found a row) with the gate RANKED: the phrases count where the other
    evidence ranks no cause (whatever the readers found), not only where nothing a rule weighs was found."""
    if add and PASS18._counted_ranked(case, {}):
        add = {}
    known = case.known
    object.__setattr__(case, "known", False)  # the old gate off: the one above decides
    try:
        return PASS18._counted_ranked(case, add)
    finally:
        object.__setattr__(case, "known", known)


@contextlib.contextmanager
def gated(on: bool = True):
    """RULE scored as the engine scores since this pass: each phrase found a row, the gate RANKED (on) or the old one."""
    with PASS18.counting(True):
        if on:
            RULE.ranked = _ranked_gate  # counting() puts RULE's own back when it ends
        yield RULE


def write(cases, chosen) -> None:
    """RULE.write, to the table's own module (prose_mined.py holds the code that reads it)."""
    RULE.write(cases, chosen, TABLE)


if __name__ == "__main__":
    with gated("--known" not in sys.argv):
        seen = RULE.load()
        picked = RULE.report(seen)
        PASS18.top3(seen)
        if "--write" in sys.argv and "--known" not in sys.argv:
            write(seen, picked)

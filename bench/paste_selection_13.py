"""The thirteenth pass's selection report (issue 15): each item (an Xid's number, a semaphore's wait frame, a socket
read strace left open, Ray's infeasible task) right and wrong per seen set, and the leave-one-set-out score of the
whole pass, by the rule in bench/paste_selection_swaps.py over the seen sets cases .. cases-12 (an explicit list: a
fresh held-out set beside them stays unopened).

    python3 bench/paste_selection_13.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triage_tui.diagnose import wait_kinds  # noqa: E402
from triage_tui.parse import prose_lexicon, signal_lexicon  # noqa: E402
from paste_selection_swaps import NEVER, Item, report as _report, scores, switched_off  # noqa: E402,F401

SEEN = ("cases", "cases-2", "cases-3", "cases-4", "cases-5", "cases-6", "cases-7", "cases-8", "cases-9", "cases-10",
        "cases-11", "cases-12")


_XID_BEFORE = {"log-xid": r"NVRM: Xid|fallen off the bus|GPU has fallen", "log-xid-timeout": None,
               "told-word-gpu-lost": r"\bfell off the bus\b|\bXid\b|\bGPU (?:is )?lost\b|\bNo devices were found\b"}
_STRACE = next(s for s in signal_lexicon.LEXICON if s.id == "log-strace-wait-forever").pattern.pattern
_STRACE_BEFORE = {"log-strace-wait-forever": _STRACE[:_STRACE.rindex("|^")]}  # without the call left open
_LOCK = next(r for r in wait_kinds.WAIT_RULES if r.kind == "lock" and r.native and "__lll_lock_wait" in r.function)
_WAIT_RULES_BEFORE = tuple(replace(r, function=r.function.replace(r"|[Ss]emaphore_?[Ww]ait\b", "")) if r is _LOCK
                           else r for r in wait_kinds.WAIT_RULES)

ITEMS = (
    Item("Xid numbers (reader)", rows=(("gpu-hang", "log-xid-timeout"),),
         swaps=((signal_lexicon, "LEXICON", _XID_BEFORE), (prose_lexicon, "PROSE", _XID_BEFORE))),
    Item("a semaphore's wait frame (reader)", swaps=((wait_kinds, "WAIT_RULES", _WAIT_RULES_BEFORE),)),
    Item("strace's socket read left open (reader)",
         swaps=((signal_lexicon, "LEXICON", _STRACE_BEFORE),)),
    Item("log-ray-infeasible", rows=(("event-never-fires", "log-ray-infeasible"),),
         swaps=((signal_lexicon, "LEXICON", {"log-ray-infeasible": None}),)),
)


def report(out: Callable[[str], None] = print) -> None:
    _report(SEEN, ITEMS, out)


if __name__ == "__main__":
    report()

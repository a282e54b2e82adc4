"""The sixteenth pass's selection report (issue 15): each item (a reader of a tool-output format the seen sets quote
and triage did not read) right and wrong per seen set, and the leave-one-set-out score of the whole pass, by the rule
in bench/paste_selection_swaps.py over the seen sets cases .. cases-15 (an explicit list: a fresh held-out set beside
them stays unopened).

    python3 bench/paste_selection_16.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triage_tui.parse import signal_lexicon  # noqa: E402
from paste_selection_swaps import NEVER, Item, report as _report, scores, switched_off  # noqa: E402,F401

SEEN = ("cases", "cases-2", "cases-3", "cases-4", "cases-5", "cases-6", "cases-7", "cases-8", "cases-9", "cases-10",
        "cases-11", "cases-12", "cases-13", "cases-14", "cases-15")

ITEMS = (
    # one mechanism, a GPU driver's watchdog timing out a job, in the formats two drivers print it: amdgpu's
    # amdgpu_job_timedout ring timeout (cases-15, ROCm) and the CUDA runtime's launch timeout (cases-14, PyTorch)
    Item("a GPU driver's job timeout (amdgpu ring timeout, CUDA launch timeout)",
         rows=(("gpu-hang", "log-gpu-job-timeout"),),
         swaps=((signal_lexicon, "LEXICON", {"log-gpu-job-timeout": None}),)),
)


_JOB = next(s for s in signal_lexicon.LEXICON if s.id == "log-gpu-job-timeout").pattern.pattern
_CUDA = _JOB[_JOB.index(r"|\bthe launch"):]  # the CUDA runtime's wording; the rest is amdgpu's

def _without_cuda(pattern: str) -> str:
    # with the amdgpu wording already taken out only the CUDA one is left: nothing then (an empty pattern matches all)
    return NEVER.pattern if pattern == _CUDA[1:] else pattern.replace(_CUDA, "")


# the same item counted as two, one per driver's wording: each fires on one seen set only, so leave-one-set-out
# chooses neither for the set it fires on (the honest reading: the wording of one driver says nothing of the other's)
BY_WORDING = (
    Item("amdgpu's ring timeout (wording)",
         swaps=((signal_lexicon, "LEXICON", {"log-gpu-job-timeout": lambda p: p[p.index(r"|\bthe launch") + 1:]}),)),
    Item("CUDA's launch timeout (wording)",
         swaps=((signal_lexicon, "LEXICON", {"log-gpu-job-timeout": _without_cuda}),)),
)


def report(out: Callable[[str], None] = print) -> None:
    _report(SEEN, ITEMS, out)
    out("-- the same, counted as one item per wording:")
    _report(SEEN, BY_WORDING, out)


if __name__ == "__main__":
    report()

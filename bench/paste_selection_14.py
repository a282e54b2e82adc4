"""The fourteenth pass's selection report (issue 15): each item (figures quoted in prose, the driver's lost GPU told
through NVIDIA's tools) right and wrong per seen set, and the leave-one-set-out score of the whole pass, by the rule
in bench/paste_selection_swaps.py over the seen sets cases .. cases-13 (an explicit list: a fresh held-out set beside
them stays unopened).

    python3 bench/paste_selection_14.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triage_tui.parse import prose_figures, prose_lexicon, signal_lexicon  # noqa: E402
from paste_selection_swaps import NEVER, Item, report as _report, scores, switched_off  # noqa: E402,F401

SEEN = ("cases", "cases-2", "cases-3", "cases-4", "cases-5", "cases-6", "cases-7", "cases-8", "cases-9", "cases-10",
        "cases-11", "cases-12", "cases-13")


_GPU_LOST = next(s for s in prose_lexicon.PROSE if s.id == "told-word-gpu-lost").pattern.pattern
_SMI_ALT = _GPU_LOST[_GPU_LOST.index(r"|\bGPUs? (?:have"):_GPU_LOST.index(r"|\bnvml[._ ]?init")]
_NVML_ALT = _GPU_LOST[_GPU_LOST.index(r"|\bnvml[._ ]?init"):]

ITEMS = (
    Item("GPUs pinned at N % (reader)", swaps=((prose_figures, "_GPU_AT", NEVER),)),
    Item("stuck ... lasted for N hours (reader)", swaps=((prose_figures, "_LASTED", NEVER),)),
    Item("stuck N minutes in Chinese (reader)", swaps=((prose_figures, "_STUCK_ZH", NEVER),)),
    # one meaning, the driver no longer reaching a GPU, told through NVIDIA's tools in two wordings (each on one set)
    Item("a lost GPU told through nvidia-smi / NVML",
         swaps=((prose_lexicon, "PROSE", {"told-word-gpu-lost": lambda p: p.replace(_SMI_ALT, "").replace(_NVML_ALT, "")}),)),
)


def report(out: Callable[[str], None] = print) -> None:
    _report(SEEN, ITEMS, out)


if __name__ == "__main__":
    report()

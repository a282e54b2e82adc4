"""The rule rows of the word model (diagnose/word_model.py): a cause the paste's words rank, by its place.

Where the other evidence in a paste ranks no cause (`paste-no-other-evidence`), the causes the words rank first,
second and third weigh 0.10, 0.07 and 0.04: with the mined rows (at most 0.15) under "possible" (0.3), and under one
breadth row (0.2), so any reader or hand-written row decides wherever one fires. Where the other evidence ranks a
cause (`paste-other-evidence`), causes it does not rank get 0.03, 0.02 and 0.01, under every hand-written row's 0.05:
they rank a second and third cause behind the ones that evidence ranks and never reorder those. Each row quotes the
phrases that weigh most for its cause.
"""

from __future__ import annotations

from .rule_types import Row
from .word_model import PLACES, WORD_CAUSES, place_id

ALONE = (0.10, 0.07, 0.04)
BEHIND = (0.03, 0.02, 0.01)

WORD_ROWS: tuple[Row, ...] = tuple(
    Row(c, f"{place_id(c, k)} & paste-no-other-evidence", ALONE[k - 1], "told: the words the seen cases of this cause "
        "share (the word model, bench/paste_selection_22.py over the seen sets)")
    for c in WORD_CAUSES for k in range(1, PLACES + 1)) + tuple(
    Row(c, f"{place_id(c, k)} & paste-other-evidence", BEHIND[k - 1], "told: the words the seen cases of this cause "
        "share, behind the other evidence (the word model)")
    for c in WORD_CAUSES for k in range(1, PLACES + 1))

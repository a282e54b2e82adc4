"""The rule rows of the mined lexicon (parse/prose_mined.py): one per cause, worth a quarter of a breadth row (0.05
against 0.2), and counted only where the other evidence in a paste ranks no cause (`paste-no-other-evidence`,
diagnose/pasted_text.py; before the nineteenth pass only where the readers found nothing a rule weighs): a phrase
shared with the seen cases of a cause is the weakest evidence there is, so it never moves an answer other evidence
gives, and a paste that shares only such phrases ranks a cause instead of none.
Each distinct phrase of a cause found is a row of its own, up to COUNTED (3) per cause (the eighteenth pass): where
phrases of several causes are found, the cause that shares more of them ranks first; where the counts tie, the
catalogue's order decides (said by the equal scores).
Each row's text starts "told:" and quotes the line: evidence that someone wrote it, not that a program printed it.
"""

from __future__ import annotations

from ..parse.prose_mined import COUNTED, MINED_SIGNALS, PREFIX, more_id
from .rule_types import Row

MINED_WEIGHT = 0.05

MINED_ROWS: tuple[Row, ...] = tuple(
    Row(s.id[len(PREFIX):], f"{s.id} & paste-no-other-evidence", MINED_WEIGHT, "told: a phrase the seen cases of this cause share across sets and "
        "projects (mined by a rule, bench/paste_selection_15.py over the seen sets)") for s in MINED_SIGNALS)
MINED_ROWS += tuple(
    Row(s.id[len(PREFIX):], f"{more_id(s.id[len(PREFIX):], k)} & paste-no-other-evidence", MINED_WEIGHT, "told: one "
        "phrase more of this cause's (each distinct phrase found is a row, up to three)")
    for s in MINED_SIGNALS for k in range(2, COUNTED + 1))

"""What the paste tests ask of a diagnosis: the causes it ranks, with or without the word model's.

The word model (triage_tui/diagnose/word_model.py, the twenty-second pass) ranks causes from the words a paste shares
with the seen cases: where nothing else ranks one, and behind what other evidence ranks. A test of a reader or a row
asks what that reader's evidence ranks (`ranked(d, words=False)`), or checks a row's mechanics with the model off.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from triage_tui.diagnose import pasted_text
from triage_tui.model.diagnosis import Diagnosis, Hypothesis

WORDS = "told-words-"


def is_word_model(oid: str) -> bool:
    """An observation of the word model or of its gate."""
    return oid.startswith(WORDS) or oid in ("paste-no-other-evidence", "paste-other-evidence")


def by_words_only(h: Hypothesis) -> bool:
    """Every row that counts for the hypothesis is the word model's."""
    return all(e.observation.startswith(WORDS) for e in h.evidence if e.weight > 0)


def ranked(d: Diagnosis, words: bool = True) -> list[str]:
    """The causes (and findings) with a score, best first; with words=False not those only the word model ranks."""
    return [h.id for h in d.hypotheses if h.score > 0 and h.status != "ruled out" and (words or not by_words_only(h))]


@contextmanager
def word_model_off() -> Iterator[None]:
    """diagnose_text as before the word model (a test of another row's mechanics)."""
    saved = pasted_text.rank_words
    pasted_text.rank_words = lambda text: ()
    try:
        yield
    finally:
        pasted_text.rank_words = saved

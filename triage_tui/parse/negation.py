"""A death, kill, OOM, crash or timeout told under a negation does not state one (the twenty-first pass, issue 15).

"The hung kernel is never killed while the submitting process is alive" (cases-20 compute-runtime-962) says that no
kill happened, yet the signal lexicon's `killed` read it as a SIGKILL (oom 0.20). HEDGE (signal_lexicon.py) keeps a
line that lists possible causes from stating; this keeps a line that denies one: a row of DENIABLE does not count on
a line where every place it matches follows a negation a few words before ("never killed", "was not killed",
"wasn't OOM-killed", "no OOM", "without being killed", "did not crash", "no segfault", "never timed out"). A real
statement beside a denial on the same line still counts ("not responding, so it was killed": the negation is of
another verb), and so does a line where one match is denied and another is not.

The words between the negation and the match are a closed list (be / been / get / got, ever, even, yet, more, a /
an / the / any, by; the verbs of not seeing one: see, find, show, cause, trigger, hit, have; "no sign of"): "did not
see any OOM" denies, "could not connect: Connection refused" is no denial of a refusal (and none of its rows is here),
"don't know why it was killed" states the kill. English only (the rows in other languages, prose_languages.py, are not read for their negations).
"""

from __future__ import annotations

import re
from typing import Optional

# the rows whose match is a death, a kill, memory running out, a crash or a timeout (signal_lexicon.py, prose_lexicon.py,
# prose_breadth.py): a negation before it says that it did not happen
DENIABLE = frozenset({
    "log-killed", "log-oom-words", "log-cuda-oom", "log-segfault", "log-sigbus", "log-timeout", "log-worker-exited",
    "log-nccl-timeout", "log-barrier-timeout", "told-word-oom", "told-word-died", "told-word-sigkill",
    "told-crash-others-wait",
})

# the negation, then at most three words of the closed list, then one word that qualifies the match ("OOM-killed",
# "TDR-killed", "oom killed"; not a conjunction: "did not respond and was killed" states the kill), right before the
# match; read on at most WINDOW characters before it (bounded, linear)
_FILLER = (r"(?:be|been|being|get|got|gets|getting|ever|even|yet|actually|really|once|more|longer|any|a|an|the|by|is|was"
           r"|were|are|see|saw|seen|notice|noticed|find|found|show|shows|showed|cause|causes|caused|trigger|triggers"
           r"|triggered|hit|hits|have|has|had|sign|signs|evidence|of)")
_NEGATED = re.compile(r"(?:\b(?:never|not|no|without|nor)|n't|n’t)\s{1,3}(?:" + _FILLER + r"\s{1,3}){0,3}"
                      r"(?:(?!(?:and|but|so|then|or|because|until|after|when)\b)[A-Za-z]{1,12}[- ])?$", re.I)
WINDOW = 60
_TRIES = 32
# the mined rows (prose_mined.py, `told-phrase-CAUSE`) hold many phrases each: a phrase of a death, a kill, memory
# running out, a crash or a timeout ('killed', 'oom kill', 'worker died', 'segfault') is denied as the rows above are,
# any other phrase of the same row is not ('not a task' is no denial of anything)
MINED = "told-phrase-"
_DEATH = re.compile(r"kill|\boom|segfault|sigsegv|\bdie|\bdied|\bdead|crash|time ?out|timed", re.I)


def negated_at(text: str, start: int) -> bool:
    """Whether the words right before `start` deny what follows ("never ", "wasn't OOM-", "without being ")."""
    return bool(_NEGATED.search(text[max(0, start - WINDOW):start]))


def stated_match(oid: str, pattern: "re.Pattern[str]", text: str) -> Optional["re.Match[str]"]:
    """The first place the row matches and states: for a row of DENIABLE, the first match that follows no negation
    (None when every match is denied); for any other row its first match."""
    mined = oid.startswith(MINED)
    if oid not in DENIABLE and not mined:
        return pattern.search(text)
    # the row's own `search` (a pattern object may skip matches of its own: prose_mechanisms' questions), again one
    # character past a denied match; bounded, so a line of denials costs a few searches
    pos = 0
    for _ in range(_TRIES):
        m = pattern.search(text, pos)
        if m is None or not denied(text, m.start(), m.group(0) if mined else ""):
            return m
        pos = m.start() + 1
    return None


def denied(text: str, start: int, phrase: str = "") -> bool:
    """A match at `start` told under a negation; with `phrase` (a mined row's), only when the phrase is a death's."""
    return (not phrase or bool(_DEATH.search(phrase))) and negated_at(text, start)

"""The mined lexicon: words and short phrases the seen cases of one cause share across sets and projects.

The precise rows (prose_lexicon.py) and the breadth rows (prose_breadth.py) were each written by hand from a few seen
cases, and on fresh text the commonest miss is still silence: prose that tells the mechanism in the reporter's own
words, which no row holds. The rows here were chosen by a rule, not by reading misses (bench/paste_selection_15.py,
the fifteenth pass; re-mined by the seventeenth over 16 seen sets, by the eighteenth over 17 and by the nineteenth over
the 18 seen sets cases .. cases-18, the rule unchanged; bench/paste_selection_19.py writes the table, which lives in
prose_mined_table.py since the nineteenth pass): a phrase of one to three words is admitted for a cause when it occurs
in that cause's cases in at least 3 seen sets and 2 projects, in more of that cause's cases than of all other causes'
together, and when adding it moves no seen case off a right first answer. Its leave-one-set-out figure (each seen set
scored with the rows chosen from the others) is in the README's #15 section.

Each row is (cause, phrase, sources): the public threads (seen cases, GitHub owner/repo#N) of that cause it occurs
in, up to three. A phrase that holds a shorter chosen phrase of its cause is left out (it fires nowhere that one does
not). One observation per cause (`told-phrase-CAUSE`), read with the prose lexicon's machinery (each line alone, then
each paragraph as one line), worth little (diagnose/mined_rows.py: 0.05), so that a reader of tool output or a precise
wording decides wherever one fires. Patterns: the words joined by a space, `-` or `_`, not inside a longer word.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .lazy_pattern import lazy_compile
from .negation import denied
from .prose_mined_table import MINED
from .signal_lexicon import Signal

PREFIX = "told-phrase-"


def pattern_of(phrases: Sequence[str]) -> str:
    """The alternation of the phrases, each word a literal, the words joined by up to three spaces, `-` or `_`."""
    alts = sorted({r"[ \t_-]{1,3}".join(re.escape(w) for w in p.split()) for p in phrases}, key=lambda a: (-len(a), a))
    return r"(?<![A-Za-z0-9])(?:" + "|".join(alts) + r")(?![A-Za-z0-9])"


def signals(rows: Sequence[tuple[str, str, str]]) -> tuple[Signal, ...]:
    """One row per cause: its phrases as one pattern, its sources joined."""
    by: dict[str, list[tuple[str, str]]] = {}
    for cause, phrase, source in rows:
        by.setdefault(cause, []).append((phrase, source))
    out = []
    for cause, items in by.items():
        said = ", ".join(f"'{p}'" for p, _ in items[:6]) + (f" and {len(items) - 6} more" if len(items) > 6 else "")
        sources = "; ".join(dict.fromkeys(s for _, src in items for s in src.split("; ")))
        out.append(Signal(PREFIX + cause, f"words the seen cases of {cause} share ({said}; mined from the seen sets)",
                          lazy_compile(pattern_of([p for p, _ in items]), re.I), sources, False, False))
    return tuple(out)


MINED_SIGNALS = signals(MINED)

# Each distinct phrase of a cause a paste holds is a row of its own (the eighteenth pass, bench/paste_selection_18.py
# --count), up to COUNTED per cause: the first is the row's own observation (PREFIX + cause), the k-th (k >= 2)
# observation more_id(cause, k), each naming its phrase. Where a silent paste shares phrases with the seen cases of
# several causes, the one that shares more of them ranks first instead of the catalogue's order deciding a tie.
COUNTED = 3


def more_id(cause: str, k: int) -> str:
    """The observation of the k-th distinct phrase of `cause` found in a paste (2 <= k <= COUNTED)."""
    return f"{PREFIX}{k}-{cause}"


MORE_IDS: tuple[tuple[str, str], ...] = tuple(
    (more_id(s.id[len(PREFIX):], k), f"one phrase more the seen cases of {s.id[len(PREFIX):]} share (the "
     f"{('second', 'third')[k - 2]} distinct one found; mined from the seen sets)")
    for s in MINED_SIGNALS for k in range(2, COUNTED + 1))


def phrase_key(found: str) -> str:
    """A found phrase as the table spells it: lower-case, its words joined by one space."""
    return " ".join(re.split(r"[ \t_-]{1,3}", found.lower()))


_EVERY = {s.id: lazy_compile(f"(?=({s.pattern.pattern}))", re.I) for s in MINED_SIGNALS}


def phrases_in(oid: str, line: str) -> list[str]:
    """Every phrase of the mined row `oid` in `line`, as phrase_key spells it, overlapping ones too ('the progress
    bar' holds 'the progress' and 'progress bar'), as the selection counts them; not a death's phrase told under a
    negation ('never killed': parse/negation.py)."""
    return [phrase_key(m.group(1)) for m in _EVERY[oid].finditer(line) if not denied(line, m.start(), m.group(1))]

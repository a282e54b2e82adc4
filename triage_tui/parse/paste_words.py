"""The words of a paste as the word model counts them: every phrase of one to three adjacent words on one line.

The mined lexicon's rule (bench/paste_selection_15.py, the fifteenth pass) and the word model (diagnose/word_model.py,
the twenty-second pass) both read a paste as this set of phrases, so the selection that builds a table and the engine
that reads it count the same phrases. A word is letters and digits starting with a letter (not glued to a digit
before it: `0x7f...`); words are adjacent when only spaces, `-` or `_` (one to three) join them; a phrase keeps at
least one word of four letters or more that is no stop word (English glue and GitHub's own words: "my fork of the
repo" is about the repository, not the program).
"""

from __future__ import annotations

import re
from typing import FrozenSet

MAX_WORDS = 3
STOP = frozenset("""a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing done down during each even ever every few for from further had
has have having he her here hers him his how i if in into is it its itself just like may me might more most much must
my no nor not now of off on once only or other our out over own same she should so some such than that the their
them then there these they this those through to too under until up upon us very was we were what when where which
while who whom why will with would yet you your also still however using used use get got gets getting make made
seem seems seemed thing things something anything nothing think know thanks please hello issue problem question help
want need tried trying try work works working worked happen happens happened
fork forks forked repo repository branch commit commits merge merged clone cloned pull""".split())
_WORD = re.compile(r"[a-z][a-z0-9]{0,39}")
_JOIN = re.compile(r"[ \t_-]{1,3}")
MAX_LINE = 10_000  # a longer line is a blob, not prose: its first characters are read


def phrases_of(text: str) -> FrozenSet[str]:
    """The paste's phrases, lower-case, their words joined by one space."""
    out = set()
    for line in text.lower().split("\n"):
        line = line[:MAX_LINE]
        words = list(_WORD.finditer(line))
        for i, w in enumerate(words):
            if w.start() and line[w.start() - 1].isalnum():
                continue  # a word glued to digits before it (0x7f...) is no word
            run = [w.group(0)]
            for j in range(i + 1, min(i + MAX_WORDS, len(words))):
                if not _JOIN.fullmatch(line[words[j - 1].end():words[j].start()]):
                    break
                run.append(words[j].group(0))
            for n in range(1, len(run) + 1):
                gram = run[:n]
                if words[i + n - 1].end() < len(line) and line[words[i + n - 1].end()].isalnum():
                    continue
                if any(len(t) >= 4 and t not in STOP for t in gram):
                    out.add(" ".join(gram))
    return frozenset(out)

"""A regular expression compiled on its first use instead of when its module is imported (#18).

The pasted-text lexicons (prose_lexicon.py and the tables it joins: prose_breadth, prose_symptoms,
prose_mined) are imported with the engine, whose vocabulary registers their observation ids, so every live
watch compiled their few hundred patterns in its first tick, before every pane held data, though only text
pasted into `triage diagnose` (or a report's paste) is ever matched against them. Each is compiled when it
is first searched, once, and is then the same `re.Pattern` every call. A pattern that does not compile
fails at its first search; tests/unit/test_lazy_pattern.py compiles every one of the lexicons'.
"""

from __future__ import annotations

import re
import sys
from typing import Any, Optional, cast


class LazyPattern:
    """Stands for `re.compile(source, flags)`: `search` and every other attribute of the compiled pattern."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: Optional[re.Pattern[str]] = None

    @property
    def compiled(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:  # two threads may both compile it: the same pattern either way
            compiled = self._compiled = re.compile(self._source, self._flags)
        return compiled

    @property
    def is_compiled(self) -> bool:
        return self._compiled is not None

    @property
    def pattern(self) -> str:
        return self._source

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Optional[re.Match[str]]:
        return self.compiled.search(string, pos, endpos)

    def __getattr__(self, name: str) -> Any:  # match, finditer, flags, groups, ...
        return getattr(self.compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source!r}, {self._flags!r})"


def lazy_compile(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, compiled when first used (typed as the pattern it stands for)."""
    return cast("re.Pattern[str]", LazyPattern(source, flags))

"""#18: the pasted-text lexicons' patterns are compiled on first use (parse/lazy_pattern.py), so a live watch,
whose engine imports them for their observation ids, never compiles them; each is the pattern it stands for."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from triage_tui.parse.lazy_pattern import LazyPattern, lazy_compile
from triage_tui.parse.prose_lexicon import PROSE


def test_every_pasted_text_pattern_is_lazy_and_compiles_to_the_pattern_it_stands_for() -> None:
    assert PROSE
    for signal in PROSE:
        lazy = signal.pattern
        assert isinstance(lazy, LazyPattern), signal.id
        assert lazy.compiled == re.compile(lazy.pattern, lazy.flags), signal.id  # flags: the compiled pattern's


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    lazy, real = lazy_compile(r"(\w+) (\d+)", re.I), re.compile(r"(\w+) (\d+)", re.I)
    text = "Rank 3 waits; rank 7 too"
    assert isinstance(lazy, LazyPattern) and not lazy.is_compiled
    assert lazy.pattern == real.pattern and not lazy.is_compiled  # its text needs no compile
    assert lazy.search(text).group(0) == real.search(text).group(0)
    assert lazy.search(text, 7).span() == real.search(text, 7).span()
    assert [m.groups() for m in lazy.finditer(text)] == [m.groups() for m in real.finditer(text)]
    assert lazy.match(text) is not None and lazy.flags == real.flags and lazy.groups == 2
    assert lazy.compiled is lazy.compiled  # compiled once


# a live watch: the engine imported and three ticks of the fixture incident (the real engine over them)
LIVE = """
from triage_tui.demo.fixture import FixtureHost, build_snapshots
from triage_tui.incident import Incident
from triage_tui.parse.prose_lexicon import PROSE
host = FixtureHost(build_snapshots(20))
incident = Incident(host, host.target, host.options)
for _ in range(3):
    moment = incident.tick()
assert moment.diagnosis.hypotheses
print(sum(s.pattern.is_compiled for s in PROSE), len(PROSE))
"""


def test_a_live_watch_compiles_none_of_the_pasted_text_patterns() -> None:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", LIVE], capture_output=True, text=True, check=True, cwd=root,
                         timeout=120)
    compiled, total = map(int, out.stdout.split())
    assert total > 50 and compiled == 0

"""The selection rule of the twelfth pass (bench/paste_selection.py) for passes whose items change what a line is read
as: an item is switched off by putting back the tables it changed (`swaps`) as well as by dropping its rule rows.
bench/paste_selection_13.py and bench/paste_selection_14.py each hold their pass's seen sets and items and call
`report` here.

An item fires on a case when switching it off changes the ranked causes there; the fire is right when the case's
cause ranks higher with it on, wrong when lower or when a cause it raised now ranks above the case's; it moves a case
when the case's first answer is right with it off and wrong with it on. Leave-one-set-out: for each seen set S, an
item counts as chosen without S when it is right on at least one other seen set and moves no case of the other sets
off its right first answer; S is then scored with the chosen items only. Only the seen sets named by the caller are
read (never a glob of tests/corpus: a fresh held-out set may sit beside them), and only each case's evidence.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triage_tui.diagnose import hypotheses  # noqa: E402
from triage_tui.diagnose.corpus_score import Case, read_cases  # noqa: E402
from triage_tui.diagnose.pasted_text import diagnose_text  # noqa: E402
from triage_tui.diagnose.rules import CATALOGUE  # noqa: E402
from triage_tui.parse import prose_lexicon, signal_lexicon  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus"
NEVER = re.compile(r"(?!x)x")  # what a switched-off pattern becomes


@dataclass(frozen=True)
class Item:
    name: str
    rows: tuple[tuple[str, str], ...] = ()  # (hypothesis, when) of the rule rows it adds
    # (module, attribute, the value before the pass; for a table of signals, {id: its pattern before, or None})
    swaps: tuple[tuple[object, str, object], ...] = ()


def signals_before(table: tuple[signal_lexicon.Signal, ...], before: dict[str, str | Callable[[str], str] | None]) \
        -> tuple[signal_lexicon.Signal, ...]:
    """The table with these ids' patterns as they were before the pass (None: the row did not exist)."""
    out = []
    for s in table:
        if s.id not in before:
            out.append(s)
            continue
        was = before[s.id]
        if callable(was):  # a change of the pattern as it stands (two items may change one row)
            out.append(replace(s, pattern=re.compile(was(s.pattern.pattern), s.pattern.flags)))
        elif was is not None:
            out.append(replace(s, pattern=re.compile(was, s.pattern.flags)))
    return tuple(out)



def _clear_caches() -> None:
    for f in (signal_lexicon._rows_of, signal_lexicon._any_row, prose_lexicon._told_rows):
        f.cache_clear()


@contextmanager
def switched_off(items: tuple[Item, ...]) -> Iterator[None]:
    off = {r for item in items for r in item.rows}
    saved_rows = hypotheses._ROWS_BY
    saved = [(m, a, getattr(m, a)) for item in items for m, a, _ in item.swaps]
    hypotheses._ROWS_BY = defaultdict(list, {h: [r for r in rows if (r.hypothesis, r.when) not in off]
                                             for h, rows in saved_rows.items()})
    for item in items:  # two items may change the same table: each puts back its own rows' patterns
        for m, a, before in item.swaps:
            setattr(m, a, signals_before(getattr(m, a), before) if isinstance(before, dict) else before)
    _clear_caches()
    try:
        yield
    finally:
        hypotheses._ROWS_BY = saved_rows
        for m, a, v in reversed(saved):
            setattr(m, a, v)
        _clear_caches()


def scores(cases: list[tuple[str, Case]], off: tuple[Item, ...] = ()) -> list[list[str]]:
    """Each case's causes with evidence, in the engine's order (ties broken as every face shows)."""
    causes = {s.id for s in CATALOGUE if s.kind == "cause"}
    with switched_off(off):
        return [[h.id for h in diagnose_text(case.evidence).diagnosis.hypotheses
                 if h.id in causes and h.status != "ruled out" and h.score > 0] for _, case in cases]


def _rank(ranked: list[str], cause: str) -> int:
    return ranked.index(cause) if cause in ranked else len(ranked) + 99


def report(seen: tuple[str, ...], items: tuple[Item, ...], out: Callable[[str], None] = print) -> None:
    """Each item's fires per seen set, then each set scored before, leave-one-set-out and with every item."""
    cases = [(d, c) for d in seen for c in read_cases(CORPUS / d)]
    on = scores(cases)
    fired: dict[str, list[tuple[str, str, bool, bool]]] = {}  # item -> (set, case, right, moved to wrong)
    for item in items:
        without = scores(cases, (item,))
        fired[item.name] = [
            (d, c.name, _rank(s, c.cause) < _rank(w, c.cause),
             bool(w[:1] == [c.cause] != s[:1]))
            for (d, c), s, w in zip(cases, on, without, strict=True) if s != w]
        right = sorted({d for d, _, ok, _ in fired[item.name] if ok}, key=seen.index)
        wrong = [f"{d}:{n}" for d, n, ok, _ in fired[item.name] if not ok]
        moved = [f"{d}:{n}" for d, n, _, m in fired[item.name] if m]
        out(f"{item.name}: right on {sum(ok for *_, ok, _ in fired[item.name])} cases of {right}; "
            f"wrong fires {wrong or 'none'}; moved to a wrong first answer {moved or 'none'}")
    before = scores(cases, items)
    total = [0, 0, 0, 0]
    for s in seen:
        chosen = tuple(i for i in items if any(ok and d != s for d, _, ok, _ in fired[i.name])
                       and not any(m and d != s for d, _, _, m in fired[i.name]))
        members = [k for k, (d, _) in enumerate(cases) if d == s]
        loso = scores([cases[k] for k in members], tuple(i for i in items if i not in chosen))
        row = [sum(before[k][:1] == [cases[k][1].cause] for k in members),
               sum(x[:1] == [cases[k][1].cause] for k, x in zip(members, loso, strict=True)),
               sum(on[k][:1] == [cases[k][1].cause] for k in members), len(members)]
        total = [a + b for a, b in zip(total, row, strict=True)]
        out(f"{s}: before {row[0]}/{row[3]}, leave-one-set-out {row[1]}/{row[3]}, seen (all items) {row[2]}/{row[3]} "
            f"(chosen without it: {', '.join(i.name for i in chosen) or 'none'})")
    out(f"all seen: before {total[0]}/{total[3]}, leave-one-set-out {total[1]}/{total[3]}, seen {total[2]}/{total[3]}")

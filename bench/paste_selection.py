"""The twelfth pass's selection report (issue 15): each new row or reader, right and wrong per seen set, and the
leave-one-set-out score of the whole pass.

    python3 bench/paste_selection.py

Only the seen sets are read, by an explicit list (never a glob of tests/corpus: a fresh held-out set may sit beside
them and must stay unopened). Only each case's evidence is diagnosed (corpus_score.read_case drops the header).

An item fires on a case when switching it off changes the score of its own cause there; the fire is right when the
case's cause is the item's, wrong otherwise, and it moves a case when the case's first answer differs with it off.
Leave-one-set-out: for each seen set S, an item counts as chosen without S when it is right on at least one other
seen set and moves no case of the other sets off its right first answer; S is then scored with the chosen items
only. That score on S estimates what the pass gives a set it was not written from.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triage_tui.diagnose import hypotheses  # noqa: E402
from triage_tui.diagnose.corpus_score import Case, read_cases  # noqa: E402
from triage_tui.diagnose.pasted_text import diagnose_text  # noqa: E402
from triage_tui.diagnose.rules import CATALOGUE  # noqa: E402
from triage_tui.parse import gdb_text  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus"
SEEN = ("cases", "cases-2", "cases-3", "cases-4", "cases-5", "cases-6", "cases-7", "cases-8", "cases-9", "cases-10",
        "cases-11")
_NEVER = re.compile(r"(?!x)x")


@dataclass(frozen=True)
class Item:
    name: str
    cause: str
    rows: tuple[tuple[str, str], ...] = ()  # (hypothesis, when) of the rule rows it adds
    patches: tuple[tuple[object, str], ...] = ()  # (module, attribute) set to a pattern that never matches when off


ITEMS = (
    Item("gdb frames without `#` (reader)", "deadlock",
         patches=((gdb_text, "BARE_FRAME_0"), (gdb_text, "BARE_FRAME"))),
    Item("told-word-cpu-limit", "cpu-starved", rows=(("cpu-starved", "told-word-cpu-limit"),)),
    Item("told-word-fork-logging", "fork-inherited-lock", rows=(("fork-inherited-lock", "told-word-fork-logging"),)),
    Item("told-word-load-slow", "still-loading", rows=(("still-loading", "told-word-load-slow"),)),
    Item("log-no-space as /dev/shm", "shm-exhausted",
         rows=(("shm-exhausted", "log-no-space & !log-shm-sized"),
               ("shm-exhausted", "log-no-space & log-worker-exited & !log-shm-sized"),
               ("crashed-worker", "log-no-space & log-worker-exited & !log-shm-sized"))),
)


@contextmanager
def switched_off(items: tuple[Item, ...]) -> Iterator[None]:
    # the engine scores each hypothesis from its rows grouped at import (hypotheses._ROWS_BY): switch rows off there
    off = {r for item in items for r in item.rows}
    saved_rows = hypotheses._ROWS_BY
    saved = [(m, a, getattr(m, a)) for item in items for m, a in item.patches]
    hypotheses._ROWS_BY = defaultdict(list, {h: [r for r in rows if (r.hypothesis, r.when) not in off]
                                             for h, rows in saved_rows.items()})
    for m, a, _ in saved:
        setattr(m, a, _NEVER)
    try:
        yield
    finally:
        hypotheses._ROWS_BY = saved_rows
        for m, a, v in saved:
            setattr(m, a, v)


class Ranked(dict):
    """A case's causes with evidence and their scores, in the engine's order (ties broken as every face shows)."""


def scores(cases: list[tuple[str, Case]], off: tuple[Item, ...] = ()) -> list[Ranked]:
    causes = {s.id for s in CATALOGUE if s.kind == "cause"}
    out = []
    with switched_off(off):
        for _, case in cases:
            hyps = diagnose_text(case.evidence).diagnosis.hypotheses
            out.append(Ranked((h.id, h.score) for h in hyps
                              if h.id in causes and h.status != "ruled out" and h.score > 0))
    return out


def first(score: Ranked) -> str:
    return next(iter(score), "")


def report(out: Callable[[str], None] = print) -> None:
    cases = [(d, c) for d in SEEN for c in read_cases(CORPUS / d)]
    on = scores(cases)
    fired: dict[str, list[tuple[str, str, bool, bool]]] = {}  # item -> (set, case, right, moved to wrong)
    for item in ITEMS:
        without = scores(cases, (item,))
        fired[item.name] = [
            (d, c.name, c.cause == item.cause, first(w) == c.cause != first(s))
            for (d, c), s, w in zip(cases, on, without, strict=True) if s.get(item.cause, 0) != w.get(item.cause, 0)]
        right = sorted({d for d, _, ok, _ in fired[item.name] if ok}, key=SEEN.index)
        repos = {c.source.split("/")[3:5][-1] for (d, c) in cases if any(ok and n == c.name for _, n, ok, _ in
                                                                           fired[item.name])}
        wrong = [f"{d}:{n}" for d, n, ok, _ in fired[item.name] if not ok]
        moved = [f"{d}:{n}" for d, n, _, m in fired[item.name] if m]
        out(f"{item.name} ({item.cause}): right on {sum(ok for *_, ok, _ in fired[item.name])} cases of {right} "
            f"({len(repos)} projects); "
            f"wrong fires {wrong or 'none'}; moved to a wrong first answer {moved or 'none'}")
    before = scores(cases, ITEMS)
    total = [0, 0, 0, 0]
    for s in SEEN:
        chosen = tuple(i for i in ITEMS if any(ok and d != s for d, _, ok, _ in fired[i.name])
                       and not any(m and d != s for d, _, _, m in fired[i.name]))
        members = [k for k, (d, _) in enumerate(cases) if d == s]
        loso = scores([cases[k] for k in members], tuple(i for i in ITEMS if i not in chosen))
        row = [sum(first(before[k]) == cases[k][1].cause for k in members),
               sum(first(x) == cases[k][1].cause for k, x in zip(members, loso, strict=True)),
               sum(first(on[k]) == cases[k][1].cause for k in members), len(members)]
        total = [a + b for a, b in zip(total, row, strict=True)]
        out(f"{s}: before {row[0]}/{row[3]}, leave-one-set-out {row[1]}/{row[3]}, seen (all items) {row[2]}/{row[3]} "
            f"(chosen without it: {', '.join(i.name for i in chosen) or 'none'})")
    out(f"all seen: before {total[0]}/{total[3]}, leave-one-set-out {total[1]}/{total[3]}, seen {total[2]}/{total[3]}")


if __name__ == "__main__":
    report()

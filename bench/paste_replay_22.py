"""The word model replayed on the fresh sets as they were scored (issue 15, the twenty-second pass).

    python3 bench/paste_replay_22.py            # a few minutes: one worktree per frozen engine, then the simulation
    python3 bench/paste_replay_22.py --forward  # the word model learned only from the sets gathered before each one

Each of the sets cases-10 .. cases-30 was scored once, fresh, by the engine frozen at its pass (scores.json
held_out_N); none of those engines had read its set. The engines that scored cases-22 .. cases-30 had the word model
already (learned then from fewer sets): its rows are taken out of their hypotheses before the model as it is now is
added, so every set is replayed the same way. This script runs each frozen engine again on its own set (in a
temporary `git worktree` of the frozen commit), checks that it gives the recorded one-time score, and then adds the
word model as the engine reads it now (diagnose/word_rows.py: its first three causes at 0.10/0.07/0.04 where nothing
else ranks a cause, or only the mined phrases do; 0.03/0.02/0.01 to causes the other evidence does not rank),
learned from every seen set except the one scored (bench/paste_selection_22.learn). Neither the frozen rules nor the
word model has seen a case it is scored on, so the difference is what the word model adds on text that is fresh for
both: an estimate of the next fresh set's score, before scoring it. The engine's ranking is simulated from each
hypothesis's score (ties by the catalogue's order), as the selection scripts simulate it.
With --forward each set's table is learned only from the sets gathered before it, as a fresh set meets it: over the
21 fresh sets cases-10 .. cases-30 that gives 347 of 622 (56 %) top-1 and 461 (74 %) top-3, against 363 (58 %) and
483 (78 %) learned from every other set; the one-time scores of the last nine sets were lower still (50 %, 70 %).
The sets are an explicit list (never a glob of tests/corpus: fresh held-out sets sit beside them and must stay
unopened).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.unit.bench_script import load_bench_script  # noqa: E402
from triage_tui.diagnose.corpus_score import read_cases  # noqa: E402
from triage_tui.diagnose.word_model import WORD_CAUSES  # noqa: E402
from triage_tui.diagnose.word_rows import ALONE, BEHIND  # noqa: E402
from triage_tui.parse.paste_words import phrases_of  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"
# each fresh set and the commit its pass was frozen at (scores.json held_out_N's rules_at)
FROZEN = (("cases-10", "57d6432"), ("cases-11", "68a249b"), ("cases-12", "a2fd891"), ("cases-13", "ff65146"),
          ("cases-14", "7b5bb7c"), ("cases-15", "a1553e9"), ("cases-16", "71324c9"), ("cases-17", "96ce5e3"),
          ("cases-18", "0309a2c"), ("cases-19", "e075cd5"), ("cases-20", "9a96208"), ("cases-21", "23becdb"),
          # scored once by engines that had the word model already: its rows are taken out of their hypotheses
          # (DUMP) and the model as it is now, learned from the other sets, put back in their place
          ("cases-22", "998fe2c"), ("cases-23", "998fe2c"), ("cases-24", "290d778"), ("cases-25", "15341d1"),
          ("cases-26", "15341d1"), ("cases-27", "15341d1"), ("cases-28", "15341d1"), ("cases-29", "b4b249d"),
          ("cases-30", "b4b249d"))
SELECTION = load_bench_script("paste_selection_22")

# run inside the frozen tree: each case's hypotheses (id, kind, ruled out, score, only mined phrases count for it)
DUMP = """
import json, sys
from pathlib import Path
from triage_tui.diagnose.corpus_score import read_cases
from triage_tui.diagnose.pasted_text import diagnose_text
out = {}
for c in read_cases(Path(sys.argv[1])):
    hs, once = [], []
    for h in diagnose_text(c.evidence).diagnosis.hypotheses:
        kept = [e for e in h.evidence if not e.observation.startswith("told-words-")]  # the word model's own rows
        pos = [e.observation for e in kept if e.weight > 0]
        out_ = h.status == "ruled out"
        score = h.score if out_ or len(kept) == len(h.evidence) else round(max(0.0, min(h.cap, sum(
            e.weight for e in kept))), 2)
        hs.append((h.id, h.kind, out_, score, bool(pos) and all(o.startswith("told-phrase-") for o in pos)))
        if h.kind == "cause" and not out_ and h.score > 0:
            once.append(h.id)
    out[c.name] = (c.cause, hs, once[:3])
print(json.dumps(out))
"""


@dataclass(frozen=True)
class _Seen:
    set: str
    name: str
    cause: str
    project: str
    phrases: frozenset


def frozen_hypotheses(directory: str, commit: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), commit], check=True)
        try:
            got = subprocess.run([sys.executable, "-c", DUMP, str(CORPUS / directory)], cwd=tree, check=True,
                                 env=dict(os.environ, PYTHONPATH=str(tree)), capture_output=True,
                                 text=True, timeout=600)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)
    return json.loads(got.stdout)


def ranked(hyps: list, words: list[str]) -> list[str]:
    """The causes, best first, with the word rows added as the engine adds them."""
    causes = [h for h in hyps if h[1] == "cause" and not h[2] and h[3] > 0]
    silent = not causes or all(h[4] for h in causes)
    rows = []
    for hid, kind, out, score, _mined in hyps:
        if not out and hid in words and (silent or score <= 0):
            score += (ALONE if silent else BEHIND)[words.index(hid)]
        rows.append((kind != "cause", out, -round(score, 2), WORD_CAUSES.index(hid) if hid in WORD_CAUSES else 99, hid))
    rows.sort()
    return [r[4] for r in rows if r[4] in WORD_CAUSES and not r[1] and r[2] < 0]


FORWARD = "--forward" in sys.argv


def main() -> None:
    seen = [_Seen(s, c.name, c.cause, "/".join(c.source.split("/")[3:5]).lower(), phrases_of(c.evidence))
            for s in SELECTION.SEEN for c in read_cases(CORPUS / s)]
    recorded = json.loads((CORPUS / "scores.json").read_text())
    totals = [0, 0, 0, 0, 0]
    for directory, commit in FROZEN:
        hyps = frozen_hypotheses(directory, commit)
        # --forward: only the sets gathered before this one, as a fresh set meets the table (the sets' order in SEEN
        # is the order they were gathered); by default every other seen set, later ones too (a few points higher)
        earlier = SELECTION.SEEN[:SELECTION.SEEN.index(directory)] if directory in SELECTION.SEEN else SELECTION.SEEN
        table = SELECTION.learn([c for c in seen if (c.set in earlier if FORWARD else c.set != directory)])
        # the scored set's own phrases, read from its directory: a set scored after the table was last learned is
        # not among the seen sets the table is learned from
        by_name = {c.name: _Seen(directory, c.name, c.cause, "", phrases_of(c.evidence))
                   for c in read_cases(CORPUS / directory)}
        b1 = b3 = w1 = w3 = o1 = 0
        for name, (cause, hs, once_got) in hyps.items():
            o1 += once_got[:1] == [cause]
            before = ranked(hs, [])[:3]
            after = ranked(hs, SELECTION.rank(table, by_name[name]))[:3]
            b1, b3 = b1 + (before[:1] == [cause]), b3 + (cause in before)
            w1, w3 = w1 + (after[:1] == [cause]), w3 + (cause in after)
        once = recorded["held_out_" + directory.split("-")[1]]
        assert o1 == once["top1"], (directory, o1, once["top1"])  # the frozen engine, run again, as it scored
        print(f"{directory} (frozen at {commit}): scored once {once['top1']}/{once['cases']} (top-3 {once['top3']}); "
              f"replayed without the word model {b1} ({b3}); with the word model as it is now {w1} ({w3})")
        totals = [a + b for a, b in zip(totals, (len(hyps), b1, b3, w1, w3))]
    n = totals[0]
    print(f"all {n}: frozen engines {totals[1]} ({round(100 * totals[1] / n)} %) top-1, {totals[2]} "
          f"({round(100 * totals[2] / n)} %) top-3; with the word model {totals[3]} ({round(100 * totals[3] / n)} %), "
          f"{totals[4]} ({round(100 * totals[4] / n)} %)")


if __name__ == "__main__":
    main()

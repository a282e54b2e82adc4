"""No hypothesis is written by hand anywhere in the package: only the engine (triage_tui/diagnose/) builds a
Hypothesis, and the record codec reads recorded ones back. Every face shows what the engine concluded."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "triage_tui"
ALLOWED = ("diagnose/", "record/snapshot_codec.py", "record/reader.py", "model/codec.py")


def _builds_a_hypothesis(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name in ("Hypothesis", "Evidence"):
        return True
    # from_data(Hypothesis, ...) / from_data(Diagnosis, ...): a hypothesis rebuilt from data
    return name in ("from_data", "from_json") and bool(node.args) and isinstance(node.args[0], ast.Name) \
        and node.args[0].id in ("Hypothesis", "Evidence", "Diagnosis", "Moment")


def test_only_the_engine_and_the_record_codec_build_hypotheses() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where.startswith(ALLOWED):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if _builds_a_hypothesis(node):
                offenders.append(f"{where}:{node.lineno}")
    assert offenders == [], f"a Hypothesis built outside the engine and the record codec: {offenders}"


def test_the_check_finds_a_hand_written_one() -> None:
    """The scan above can fail: it sees the construction forms a face would use."""
    tree = ast.parse("h = Hypothesis('oom', 'Out of memory', 'likely', 0.9)\nm = model.Hypothesis('x', 't', 's', 0)\n"
                     "d = from_data(Diagnosis, data)\n")
    assert sum(_builds_a_hypothesis(n) for n in ast.walk(tree)) == 3

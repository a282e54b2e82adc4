"""The public addresses of the seen corpus cases: a row learned from a thread outside the corpus must not be one."""

from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
# the seen sets, an explicit list (never a glob of tests/corpus: the held-out sets sit beside them, unopened)
SEEN = ("cases", *(f"cases-{i}" for i in range(2, 22)))


def seen_sources(sets: tuple[str, ...] = SEEN) -> set[str]:
    """Every `source:` address of the cases of these sets, without a trailing slash."""
    out = set()
    for name in sets:
        for path in sorted((CORPUS / name).glob("*.md")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.startswith("source:"):
                    out.add(line.split(":", 1)[1].strip().rstrip("/"))
    return out

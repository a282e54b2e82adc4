"""Writes one corpus case file (used while building the corpus; kept so the format has one writer)."""
import sys
from pathlib import Path

HERE = Path(__file__).parent / "cases"
HERE2 = Path(__file__).parent / "cases-2"


def case(name, title, source, cause, sure, established, evidence, project="", where=None):
    body = (f"# {title}\n\nsource: {source}\nproject: {project}\ncause: {cause}\nsure: {sure}\n"
            f"established: {established}\n\n## Evidence (as posted; [...] marks a cut)\n\n{evidence.strip()}\n")
    ((where or HERE) / f"{name}.md").write_text(body)

"""`triage diagnose [FILE ...]`: the diagnosis engine on pasted text (an issue body, a chat message).

Reads the files (or standard input), finds the parts it understands (ps, free, /proc/PID/status,
nvidia-smi, py-spy dumps, faulthandler, kernel lines, curl, a log tail), says which it used and
which it ignored, and prints the ranked hypotheses the way the report does.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..diagnose.pasted_text import PastedDiagnosis, diagnose_text
from ..render.hypotheses_text import hypotheses_markdown, hypothesis_data, observations_markdown
from . import fail


def _read(files: list[str]) -> tuple[str, str]:
    """(text, error): all files joined, or standard input."""
    if not files:
        if sys.stdin is None:  # started with standard input closed
            return "", "no FILE given and standard input is closed"
        # bytes, decoded here: pasted text is often not clean UTF-8, and the locale's strict decoder
        # would end in a traceback
        raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        return raw.decode("utf-8", errors="replace"), ""
    chunks = []
    for name in files:
        try:
            with open(name, encoding="utf-8", errors="replace") as fh:
                chunks.append(fh.read())
        except OSError as exc:
            return "", f"cannot read {name}: {exc.strerror or exc}"
    return "\n\n".join(chunks), ""


def run(args: argparse.Namespace) -> int:
    text, error = _read(list(args.files))
    if error:
        return fail(error)
    if not text.strip():
        return fail("nothing to diagnose: the input is empty (paste ps, free, nvidia-smi, py-spy dumps, logs ...)")
    result = diagnose_text(text)
    if not any(p.used for p in result.parts):
        print(_markdown(result) if args.format == "md" else json.dumps(_data(result), indent=2))
        return fail("found nothing triage reads in the input (see the ignored parts above)", 1)
    print(_markdown(result) if args.format == "md" else json.dumps(_data(result), indent=2))
    return 0


def _part_line(p) -> str:
    where = f"lines {p.first_line}-{p.last_line}" if p.last_line != p.first_line else f"line {p.first_line}"
    if p.used:
        return f"- used {where} as {p.used_as}"
    return f"- ignored {where} ({p.kind}): {p.note}" if p.note else f"- ignored {where} ({p.kind})"


def _markdown(result: PastedDiagnosis) -> str:
    out = ["# triage diagnose", "", "## Parts of the input", *[_part_line(p) for p in result.parts], ""]
    out += ["## Hypotheses", "", *hypotheses_markdown(result.diagnosis.hypotheses)]
    out += ["## Observations", *(observations_markdown(result.diagnosis.observations) or ["- none"]), ""]
    return "\n".join(out)


def _data(result: PastedDiagnosis) -> dict:
    return {
        "parts": [{"kind": p.kind, "first_line": p.first_line, "last_line": p.last_line, "used": p.used,
                   "used_as": p.used_as, "note": p.note} for p in result.parts],
        "hypotheses": [hypothesis_data(h) for h in result.diagnosis.hypotheses],
        "observations": [{"id": o.id, "text": o.text, "source": o.source, "figures": o.figures, "pids": list(o.pids)}
                         for o in result.diagnosis.observations],
    }

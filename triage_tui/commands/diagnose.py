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
from ..parse.paste_input import MAX_BYTES, PasteInput, decode_paste, read_files, read_paste
from ..render.hypotheses_text import hypotheses_markdown, hypothesis_data, observations_markdown
from ..render.plain_text import md_inline, terminal_text
from . import fail


def _read(files: list[str]) -> PasteInput:
    """All files joined, or standard input, streamed and capped (paste_input says what was cut)."""
    if not files:
        if sys.stdin is None:  # started with standard input closed
            return PasteInput("", error="no FILE given and standard input is closed")
        # bytes, decoded there: pasted text is often not clean UTF-8, and the locale's strict decoder
        # would end in a traceback
        if hasattr(sys.stdin, "buffer"):
            return read_paste(sys.stdin.buffer, "standard input")
        return decode_paste(sys.stdin.read(MAX_BYTES).encode(), label="standard input")
    return read_files(files)


def run(args: argparse.Namespace) -> int:
    pasted = _read(list(args.files))
    if pasted.error:
        return fail(pasted.error)
    text = pasted.text
    if not text.strip():
        return fail("nothing to diagnose: the input is empty (paste ps, free, nvidia-smi, py-spy dumps, logs ...)")
    result = diagnose_text(text)
    # the paste's own text reaches the output (quoted lines): a terminal or locale that cannot show a
    # character gets a replacement, never a UnicodeEncodeError
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")
    # the paste's own text is quoted in the output: its control characters are shown escaped
    print(terminal_text(_markdown(result, pasted.cuts) if args.format == "md"
                        else json.dumps(_data(result, pasted.cuts), indent=2)))
    if not any(p.used for p in result.parts):
        return fail("found nothing triage reads in the input (see the ignored parts above)", 1)
    return 0


def _part_line(p) -> str:
    where = f"lines {p.first_line}-{p.last_line}" if p.last_line != p.first_line else f"line {p.first_line}"
    if p.used:
        return f"- used {where} as {p.used_as}"
    return f"- ignored {where} ({p.kind}): {md_inline(p.note)}" if p.note else f"- ignored {where} ({p.kind})"


def _markdown(result: PastedDiagnosis, cuts: tuple[str, ...] = ()) -> str:
    out = ["# triage diagnose", ""]
    if cuts:
        out += ["## Input", *[f"- cut: {c}" for c in cuts], ""]
    out += ["## Parts of the input", *[_part_line(p) for p in result.parts], ""]
    out += ["## Hypotheses", "", *hypotheses_markdown(result.diagnosis.hypotheses)]
    out += ["## Observations", *(observations_markdown(result.diagnosis.observations) or ["- none"]), ""]
    return "\n".join(out)


def _data(result: PastedDiagnosis, cuts: tuple[str, ...] = ()) -> dict:
    return {
        "cuts": list(cuts),
        "parts": [{"kind": p.kind, "first_line": p.first_line, "last_line": p.last_line, "used": p.used,
                   "used_as": p.used_as, "note": p.note} for p in result.parts],
        "hypotheses": [hypothesis_data(h) for h in result.diagnosis.hypotheses],
        "observations": [{"id": o.id, "text": o.text, "source": o.source, "figures": o.figures, "pids": list(o.pids)}
                         for o in result.diagnosis.observations],
    }

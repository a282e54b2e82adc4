"""The verdict: the engine's top cause in one line, the same on every face (the app's line under the
header, the first lines of the Markdown report).

Pure: it reads hypotheses in the engine's order (causes before findings, by score) and never sorts
them (the engine is the only sorter). A next check is written as shell words; the app's key that does it is kept apart
(`key`), so a ticket never reads "S on it" and the app can still say "press S".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

VERDICT_STATUSES = ("likely", "possible")  # a top cause below these is not a verdict

# TUI keystrokes the rules' texts carry, and the key each names: removed from the shell words
_KEY_PHRASES = (
    (re.compile(r"\s*[:;,]?\s*\bS on it\b\.?", re.IGNORECASE), "S"),
    (re.compile(r"\s*\(S\)"), "S"),
    (re.compile(r"\s*\(press [A-Za-z]\)"), ""),
    (re.compile(r"\s*:\s*S\s*$"), "S"),  # "capture stacks of all 8 workers: S"
)
# what the app can do itself for a next check that names it (the key the verdict line shows)
_APP_DOES = (
    (re.compile(r"\bpy-spy dump\b|\bcapture stacks\b|\bstacks of all\b", re.IGNORECASE), "S"),
    (re.compile(r"\bsmaps\b|\bPSS\b", re.IGNORECASE), "m"),
)


@dataclass(frozen=True)
class NextCheck:
    shell: str  # what to run or read, as a person types it
    key: str = ""  # the app's key that does it ("" when the app has none)


def split_next_check(text: str) -> NextCheck:
    """'py-spy dump … PID 7: S on it' → NextCheck('py-spy dump … PID 7', 'S')."""
    key = ""
    shell = text
    for pattern, named in _KEY_PHRASES:
        if pattern.search(shell):
            key = key or named
            shell = pattern.sub("", shell)
    shell = re.sub(r"\s{2,}", " ", shell).strip().rstrip(":;,").strip()
    if not key:
        key = next((k for pattern, k in _APP_DOES if pattern.search(shell)), "")
    return NextCheck(shell, key)


def shell_words(text: str) -> str:
    """A next check with no TUI keystroke in it (for the Markdown and JSON faces)."""
    return split_next_check(text).shell


@dataclass(frozen=True)
class Verdict:
    status: str = ""  # likely | possible; "" when there is no verdict yet
    title: str = ""
    hypothesis_id: str = ""
    evidence: str = ""  # the strongest evidence for it, in a few words
    next_check: NextCheck = NextCheck("")
    missing: str = ""  # with no verdict: what is missing for one

    @property
    def reached(self) -> bool:
        return bool(self.status)


def is_quiet(h: Any) -> bool:
    """Noise on a first look: ruled out, or unlikely with nothing standing for it (no evidence for it, or
    what is for it outweighed to a score of 0). Every face folds these into one short list."""
    return h.status == "ruled out" or (h.status == "unlikely" and (not h.for_ or h.score <= 0))


def causes(hypotheses: Sequence[Any]) -> list[Any]:
    """The causes in the engine's order (a finding — a fact about the evidence — is never a verdict)."""
    return [h for h in hypotheses if getattr(h, "kind", "cause") == "cause"]


def strongest_evidence(hypothesis: Any, limit: int = 3) -> list[str]:
    """The texts for a hypothesis, strongest first (by the weight of its evidence row where the engine
    gives one, else in the engine's order), each once."""
    rows = [e for e in getattr(hypothesis, "evidence", ()) if getattr(e, "weight", 0) > 0]
    texts = [e.text for e in sorted(rows, key=lambda e: -e.weight)] if rows else list(hypothesis.for_)
    return dedupe_evidence(texts)[:limit]


def dedupe_evidence(texts: Sequence[str]) -> list[str]:
    """Each fact once: a bare observation text and the same text with a rule's note after " — " are
    one line (the noted one kept, it says more)."""
    out: list[str] = []
    for text in texts:
        base = text.split(" — ", 1)[0]
        same = next((i for i, seen in enumerate(out) if seen.split(" — ", 1)[0] == base), None)
        if same is None:
            out.append(text)
        elif len(text) > len(out[same]):
            out[same] = text
    return out


def few_words(text: str, limit: int = 48) -> str:
    """The start of `text` up to `limit` characters, cut at a word, with … when cut."""
    text = text.split(" — ", 1)[0].strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[limit // 2:] else cut) + "…"


def verdict(
    hypotheses: Sequence[Any], refreshes: int = 0, history_s: float = 0.0, has_stacks: bool = False,
    idle_after_s: float = 10.0, in_app: bool = True,
) -> Verdict:
    """The top cause when it is likely or possible; else what is missing for a verdict."""
    top: Optional[Any] = next(iter(causes(hypotheses)), None)  # the engine's order: it is the only sorter
    if top is not None and top.status in VERDICT_STATUSES:
        evidence = strongest_evidence(top, 1)
        return Verdict(top.status, top.title, top.id, few_words(evidence[0]) if evidence else "",
                       split_next_check(top.next_check))
    if refreshes == 0:
        return Verdict(missing="waiting for the first refresh")
    missing = []
    if refreshes < 2:
        missing.append("one refresh so far (CPU use needs two)")
    elif history_s < idle_after_s:
        missing.append(f"{history_s:.0f} s watched of the {idle_after_s:.0f} s idleness needs")
    if not has_stacks:
        # the app names its key; a report (read in a ticket) names the command
        missing.append("no stacks yet (press S)" if in_app else "no stacks yet (triage stacks PID)")
    if not missing:
        missing.append("no cause has evidence enough to be possible")
    return Verdict(missing="; ".join(missing))


def verdict_text(v: Verdict, with_key: bool = True) -> str:
    """The verdict as one plain line (the report's summary and the app's line share it)."""
    if not v.reached:
        return f"no verdict yet: {v.missing}"
    out = f"{v.status}: {v.title}"
    if v.evidence:
        out += f" · {v.evidence}"
    if v.next_check.shell:
        out += f" · next: {v.next_check.shell}"
        if with_key and v.next_check.key:
            out += f" (press {v.next_check.key})"
    return out

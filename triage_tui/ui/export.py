"""`e`: write the Markdown report of the incident so far, through whichever renderer is installed.

Preference: the record part's `export_markdown(incident) -> path`; else the report renderer
`render_report_markdown(timeline, changelog)` written to the current directory; else a short
summary of the latest snapshot's hypotheses (so `e` always leaves a file and says where).
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Sequence
from typing import Any

from ..model.snapshot import Snapshot
from . import format as fmt


def _optional(module: str, name: str) -> Any:
    try:
        return getattr(importlib.import_module(module), name)
    except (ModuleNotFoundError, AttributeError):
        return None


def export_report(incident: Any, directory: str = ".") -> str:
    """Write the report; return the path written. Blocking file I/O: call it from a thread worker."""
    export_markdown = _optional("triage_tui.record.export", "export_markdown")
    if export_markdown is not None:
        return str(export_markdown(incident, directory))
    render = _optional("triage_tui.render.markdown", "render_report_markdown")
    timeline = list(incident.timeline)
    text = render(timeline, list(incident.changelog)) if render is not None else summary_markdown(timeline, list(incident.changelog))
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(timeline[-1].taken_at if timeline else time.time()))
    path = os.path.abspath(os.path.join(directory, f"triage-report-{stamp}.md"))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


class ExportError(OSError):
    """No directory `e` tried could take the report: the message says which and why, one line."""


def export_report_somewhere(incident: Any, directories: Sequence[str]) -> str:
    """Write the report into the first of `directories` that takes it; return the path written.
    ExportError names every directory tried and why it refused (read-only, gone, full)."""
    reasons: list[str] = []
    for directory in directories:
        try:
            return export_report(incident, directory)
        except OSError as exc:
            reasons.append(f"{directory}: {exc.strerror or exc}")
    raise ExportError("no directory could take it (" + "; ".join(reasons) + ")")


def summary_markdown(timeline: list[Snapshot], changelog: list[str]) -> str:
    """A minimal report used only when no report renderer is installed."""
    if not timeline:
        return "# triage report\n\nNo refresh was collected.\n"
    last = timeline[-1]
    lines = [f"# triage report: {last.host}", "", f"Latest refresh {fmt.clock(last.taken_at)}, {len(timeline)} refreshes.", ""]
    lines += ["## Hypotheses", ""]
    for h in sorted(last.hypotheses, key=lambda h: -h.score):
        lines.append(f"- **{h.title}** ({h.status}, {h.score:.2f})" + (f" — next: {h.next_check}" if h.next_check else ""))
    if not last.hypotheses:
        lines += [f"- {o.text}" for o in last.observations] or ["- none"]
    lines += ["", "## Changelog", ""] + [f"- {c}" for c in changelog] + [""]
    return "\n".join(lines)

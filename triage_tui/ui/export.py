"""`e`: write the Markdown report of the incident so far (record/export.py's export_markdown, the same
report `triage report` prints) into the first directory that takes it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..record.export import export_markdown


class ExportError(OSError):
    """No directory `e` tried could take the report: the message says which and why, one line."""


def export_report_somewhere(incident: Any, directories: Sequence[str]) -> str:
    """Write the report into the first of `directories` that takes it; return the path written.
    Blocking file I/O: call it from a thread worker.
    ExportError names every directory tried and why it refused (read-only, gone, full)."""
    reasons: list[str] = []
    for directory in directories:
        try:
            return export_markdown(incident, directory)
        except OSError as exc:
            reasons.append(f"{directory}: {exc.strerror or exc}")
    raise ExportError("no directory could take it (" + "; ".join(reasons) + ")")

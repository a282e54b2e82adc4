"""`e`: write the Markdown report of the timeline the app shows, into the first directory that takes it.

The report is record.export.export_markdown's (render/markdown.py's text, the same `triage report`
prints); this module only tries the app's export directories in order and says why each refused.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the model's dataclasses: imported after the app's first frame (#18)
    from ..model.moment import Moment


class ExportError(OSError):
    """No directory `e` tried could take the report: the message says which and why, one line."""


def export_report_somewhere(moments: Sequence[Moment], changelog: Sequence[str], host: str,
                            directories: Sequence[str]) -> str:
    """Write the report into the first of `directories` that takes it; return the path written.
    Blocking file I/O: call it from a thread worker.
    ExportError names every directory tried and why it refused (read-only, gone, full)."""
    from ..record.export import export_markdown  # the report's renderers, on the first `e`, not at start

    reasons: list[str] = []
    for directory in directories:
        try:
            return export_markdown(moments, changelog, host, directory)
        except OSError as exc:
            reasons.append(f"{directory}: {exc.strerror or exc}")
    raise ExportError("no directory could take it (" + "; ".join(reasons) + ")")


def export_directories(incident: Any) -> tuple[str, ...]:
    """Where `e` tries to write, in order: the record's directory (the incident's files together),
    else the current directory, else the XDG state directory."""
    out: list[str] = []
    path = (getattr(getattr(incident, "recorder", None), "path", None)
            or getattr(getattr(incident, "recording", None), "path", None))
    if path:
        out.append(os.path.dirname(os.path.abspath(str(path))))
    out.append(os.getcwd() if os.path.isdir(".") else ".")
    from ..record.recorder import state_directory

    out.append(str(state_directory()))
    return tuple(dict.fromkeys(out))

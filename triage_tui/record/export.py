"""The incident as a report for the ticket: the app's `e` key and `triage report --from FILE`.

The Markdown itself is render/markdown.py's (the same report `triage report` prints); this module
only feeds it the incident so far, or a recording, and writes the file.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..model.codec import to_data
from ..model.snapshot import Snapshot
from .reader import read_record


def _render_markdown(snapshots: Sequence[Snapshot], changelog: Sequence[str]) -> str:
    # Imported here: the renderer lives in another part (render/), and record/ must import without it.
    from ..render.markdown import render_report_markdown

    return render_report_markdown(list(snapshots), list(changelog))


def export_markdown(incident: Any, directory: os.PathLike[str] | str = ".") -> str:
    """Write the Markdown report of `incident` (an Incident or a ReplayIncident) so far; return its path.

    Raises OSError when the file cannot be written (the app says so in one line)."""
    snapshots = list(incident.timeline)
    text = _render_markdown(snapshots, list(incident.changelog))
    host = getattr(getattr(incident, "host", None), "name", "") or (snapshots[-1].host if snapshots else "")
    safe_host = re.sub(r"[^A-Za-z0-9._-]+", "_", str(host)).strip("_") or "host"
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(snapshots[-1].taken_at if snapshots else time.time()))
    directory = Path(directory)
    path = directory / f"triage-report-{safe_host}-{stamp}.md"
    n = 2
    while path.exists():
        path = directory / f"triage-report-{safe_host}-{stamp}-{n}.md"
        n += 1
    path.write_text(text, encoding="utf-8")
    return os.path.abspath(path)  # the app says where it wrote: a full path, not "./…"


def report_from_record(path: os.PathLike[str] | str, fmt: str = "md") -> str:
    """`triage report --from FILE --format md|json`: the report of a recorded incident.

    Raises RecordError for a file that cannot be read or is not a record. What the reader had to
    skip is part of the report, so the reader of the ticket knows the record was incomplete."""
    recording = read_record(path)
    if fmt == "json":
        last = recording.snapshots[-1] if recording.snapshots else None
        return json.dumps({
            "source": "record",
            "record": str(path),
            "header": recording.header,
            "snapshots": len(recording.snapshots),
            "first_at": recording.snapshots[0].taken_at if recording.snapshots else None,
            "last": to_data(last) if last is not None else None,
            "changelog": [{"at": at, "text": text} for at, text in recording.changes],
            "stack_captures": [to_data(c) for c in recording.stacks],
            "notes": [{"at": at, "text": text} for at, text in recording.notes],
            "skipped": recording.skipped,
        }, indent=2, allow_nan=False)
    text = _render_markdown(recording.snapshots, recording.changelog)
    if recording.skipped:
        text = text.rstrip("\n") + "\n\n## Record\n\n" + "".join(f"- {line}\n" for line in recording.skipped)
    return text

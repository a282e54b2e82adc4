"""The incident as a report for the ticket: the app's `e` key and `triage report --from FILE`.

The Markdown itself is render/markdown.py's (the same report `triage report` prints); this module
only feeds it the incident so far, or a recording, and writes the file.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Optional

from ..model.moment import Moment
from ..model.text_format import file_stamp
from ..render.markdown import render_report_markdown
from ..render.report_json import render_report_json
from .reader import read_record
from .recorder import RecordError


def export_markdown(moments: Sequence[Moment], changelog: Sequence[str], host: str = "",
                    directory: os.PathLike[str] | str = ".") -> str:
    """Write the Markdown report of `moments` (a face's timeline so far) and its changelog; return its path.

    Raises OSError when the file cannot be written (the app says so in one line)."""
    text = render_report_markdown(list(moments), list(changelog))
    host = host or (moments[-1].snapshot.host if moments else "")
    safe_host = re.sub(r"[^A-Za-z0-9._-]+", "_", str(host)).strip("_") or "host"
    stamp = file_stamp(moments[-1].taken_at if moments else time.time())
    directory = Path(directory)
    path = directory / f"triage-report-{safe_host}-{stamp}.md"
    n = 2
    while path.exists():
        path = directory / f"triage-report-{safe_host}-{stamp}-{n}.md"
        n += 1
    path.write_text(text, encoding="utf-8")
    return os.path.abspath(path)  # the app says where it wrote: a full path, not "./…"


def report_from_record(
    path: os.PathLike[str] | str, fmt: str = "md", warn: Optional[Callable[[str], None]] = None
) -> str:
    """`triage report --from FILE --format md|json`: the report of a recorded incident.

    The same report `triage report` prints live: Markdown over the whole recording, or the JSON of
    docs/report-schema.md (the last Moment, hypotheses in the engine's order). What the reader had to skip is
    part of the Markdown (a "Record" section) and, for JSON, goes to `warn` (default: stderr), so
    whoever reads the ticket knows the record was incomplete. Raises RecordError for a file that
    cannot be read or is not a record."""
    recording = read_record(path, ends=True)  # a report shows the first and the last moments: the rest gives its changelog
    if fmt == "json":
        say = warn if warn is not None else _warn_on_stderr
        for line in recording.skipped:
            say(line)
        if not recording.moments:
            raise RecordError(f"{path} holds no snapshot to report on")
        return render_report_json(recording.moments[-1])
    text = render_report_markdown(recording.moments, recording.changelog)
    if recording.skipped:
        text = text.rstrip("\n") + "\n\n## Record\n\n" + "".join(f"- {line}\n" for line in recording.skipped)
    return text


def _warn_on_stderr(line: str) -> None:
    print(f"triage: warning: record: {line}", file=sys.stderr)

"""`triage replay FILE`: open the app on a recorded incident, with the hypotheses as they stood."""

from __future__ import annotations

import argparse
import sys

from ..render.plain_text import terminal_text, visible
from . import fail


def run(args: argparse.Namespace) -> int:
    from ..record.reader import read_record
    from ..record.recorder import RecordError
    from ..record.replay import ReplayView

    if getattr(args, "format", "app") in ("md", "json"):  # the record's report, as `report --from` prints it
        from ..record.export import report_from_record

        try:
            text = report_from_record(args.file, args.format)
        except RecordError as exc:
            return fail(str(exc))
        sys.stdout.write(terminal_text(text if args.format == "md" else text + "\n"))
        return 0
    try:
        recording = read_record(args.file)
    except RecordError as exc:
        return fail(str(exc))
    if not recording.moments:
        return fail(f"{args.file} holds no snapshot to replay" + (
            f" ({'; '.join(recording.skipped)})" if recording.skipped else ""))
    for line in recording.skipped:
        print(f"triage: replay: {visible(line)}", file=sys.stderr)
    from .app import run_app  # the app face (ui/), imported only here: it pulls in textual
    # The whole recording is in the timeline from the start and nothing ticks (live=False): the app
    # opens on the last moment recorded, and [ ] { } End step through the moments before it.
    incident = ReplayView(recording, preload=len(recording.moments))
    interval = incident.options.interval_s
    return int(run_app(incident, interval=interval, theme=getattr(args, "theme", "dark"), live=False) or 0)

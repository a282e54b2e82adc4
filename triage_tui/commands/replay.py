"""`triage replay FILE`: open the app on a recorded incident, with the hypotheses as they stood."""

from __future__ import annotations

import argparse
import sys

from . import fail


def run(args: argparse.Namespace) -> int:
    from ..record.reader import read_record
    from ..record.recorder import RecordError
    from ..record.replay import ReplayIncident

    try:
        recording = read_record(args.file)
    except RecordError as exc:
        return fail(str(exc))
    if not recording.snapshots:
        return fail(f"{args.file} holds no snapshot to replay" + (
            f" ({'; '.join(recording.skipped)})" if recording.skipped else ""))
    for line in recording.skipped:
        print(f"triage: replay: {line}", file=sys.stderr)
    try:
        from .app import run_app  # the app face (ui/), imported only here: it pulls in textual
    except ImportError:
        return fail("the interactive app is not available in this build; "
                    f"try `triage report --from {args.file}`")
    return int(run_app(ReplayIncident(recording), theme=getattr(args, "theme", "dark")) or 0)

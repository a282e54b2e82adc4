"""`triage stacks [TARGET ...]`: every process of the target captured at once, identical stacks grouped,
the one that differs called out. Text by default, the whole StackCapture with --json."""

from __future__ import annotations

import argparse
import sys

from ..host.base import StackOptions, TargetError
from . import fail


def _remote_available() -> bool:
    try:
        from ..host import ssh  # noqa: F401  (written by the ssh part)
    except ImportError:
        return False
    return True


def run(args: argparse.Namespace) -> int:
    if getattr(args, "ssh", None):
        if not _remote_available():
            return fail("`triage stacks --ssh` needs remote host support, which this build does not have yet")
        return fail("`triage stacks --ssh` is not wired to the remote host yet; run `triage stacks` on the node")

    from ..collect.stacks import capture_stacks
    from ..collect.targets import resolve_targets, tree_pids
    from ..model.codec import to_json
    from ..render.stacks_text import render_capture

    try:
        target = resolve_targets(list(args.targets))
    except TargetError as exc:
        return fail(str(exc))
    pids = tree_pids(target)
    if not pids:
        if target.auto_picked:
            return fail("no target given and no candidate found; name one: a PID, name:REGEX or :PORT")
        return fail("the target has no live process left")
    if target.auto_picked:
        for root in target.roots:
            print(f"triage: no target given; picked PID {root.pid}: {root.reason}", file=sys.stderr)

    options = StackOptions(native=args.native, locals=args.locals, timeout_s=args.timeout)
    capture = capture_stacks(pids, options)
    if args.json:
        sys.stdout.write(to_json(capture, indent=2) + "\n")
    else:
        sys.stdout.write(render_capture(capture, show_locals=args.locals))
    return 0

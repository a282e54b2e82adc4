"""`triage stacks [TARGET ...]`: every process of the target captured at once, identical stacks grouped,
the one that differs called out. Text by default, the whole StackCapture with --json."""

from __future__ import annotations

import argparse
import sys

from ..host.base import StackOptions, TargetError
from ..render.plain_text import terminal_text
from . import fail, target_failure


def _remote_capture(args: argparse.Namespace, options: StackOptions):  # -> StackCapture | int
    """--ssh: resolve and capture on the node (the tree is the node's, read by one collect)."""
    from ..host.base import CollectOptions
    from ..host.select import host_from_args

    try:
        host = host_from_args(args)
    except TargetError as exc:
        return target_failure(exc)
    try:
        target = host.resolve(list(args.targets))
        snapshot = host.collect(target, CollectOptions(discover_logs=False))
        pids = [p.pid for p in snapshot.processes if not p.exited]
        if not pids:
            problems = "; ".join(s.detail for s in snapshot.sources if s.status == "failing")
            return fail(problems or "the target has no live process left")
        return host.capture_stacks(pids, options)
    except TargetError as exc:
        return target_failure(exc)
    finally:
        host.close()


def run(args: argparse.Namespace) -> int:
    from .job_args import is_job  # the multi-node machinery (SSH, the fleet) only for a job

    if is_job(args):
        from .job import run_job_stacks

        return run_job_stacks(args)
    if getattr(args, "ssh", None):
        from ..model.codec import to_json
        from ..render.stacks_text import render_capture

        capture = _remote_capture(args, StackOptions(native=args.native, locals=args.locals, timeout_s=args.timeout))
        if isinstance(capture, int):
            return capture
        sys.stdout.write(terminal_text(to_json(capture, indent=2) + "\n" if args.format == "json"
                                       else render_capture(capture, show_locals=args.locals)))
        return 0

    from ..collect.stacks import capture_stacks
    from ..collect.targets import resolve_targets, tree_pids
    from ..diagnose.stack_groups import with_groups
    from ..model.codec import to_json
    from ..render.stacks_text import render_capture

    try:
        target = resolve_targets(list(args.targets))
    except TargetError as exc:
        return target_failure(exc)
    pids = tree_pids(target)
    if not pids:
        if target.auto_picked:
            return fail("no target given and no candidate found; name one: a PID, name:REGEX or :PORT")
        return fail("the target has no live process left")
    if target.auto_picked:
        for root in target.roots:
            print(terminal_text(f"triage: no target given; picked PID {root.pid}: {root.reason}"), file=sys.stderr)

    options = StackOptions(native=args.native, locals=args.locals, timeout_s=args.timeout)
    capture = with_groups(capture_stacks(pids, options))
    if args.format == "json":
        sys.stdout.write(terminal_text(to_json(capture, indent=2) + "\n"))
    else:
        sys.stdout.write(terminal_text(render_capture(capture, show_locals=args.locals)))
    return 0

"""`triage [TARGET ...]`: resolve the target on this machine and open the interactive app on it.

`run_app` is the one entry other faces use to open the same app on their own incident:
`triage demo` on the demo's, `triage replay` on a replay source (with live=False).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import fail, target_failure, usage_error


def terminal_problem() -> str:
    """Why the interactive app cannot run here, or "" when it can. Without a terminal on both ends (CI,
    a pipe, `< /dev/null`) the app would paint escape codes into a file and wait for keys forever."""
    if sys.stdin is None or sys.stdout is None or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return "the interactive app needs a terminal (stdin and stdout are not both a TTY)"
    return ""


def run_app(incident: Any, interval: float = 2.0, theme: str = "dark", live: bool = True, auto_stacks: bool = False) -> int:
    """Open the app on `incident` until the user quits; the incident is closed on the way out.

    auto_stacks: capture the whole target's stacks once, by itself, when the engine observes it all idle."""
    problem = terminal_problem()
    if problem:
        incident.close()
        return usage_error(f"{problem}; for text use `triage report` (or `triage demo --report`, `triage report --from FILE`)")
    from ..ui.app import run_app as _run  # textual is imported only when the app is opened

    return _run(incident, interval=interval, theme=theme, live=live, auto_stacks=auto_stacks)


def run_job_app(args: argparse.Namespace) -> int:
    """The Nodes view of a job across nodes (--ssh list, --hostfile, --slurm)."""
    from ..host.base import TargetError
    from ..host.slurm import SlurmError
    from .job import open_job
    from .report import port_of

    problem = terminal_problem()
    if problem:
        return fail(f"{problem}; for text use `triage report` with the same nodes")
    port = port_of(args)
    try:
        records, fleet = open_job(args, port)
    except (TargetError, SlurmError) as exc:
        return fail(str(exc))
    from ..ui.nodes_app import run_nodes_app

    try:
        return run_nodes_app(fleet, interval=args.interval, theme=args.theme)
    finally:
        if records.message():
            print(f"triage: {records.message()}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from .job import is_job

    if is_job(args):
        return run_job_app(args)
    from ..collect.logs import check_log_readable
    from ..host.base import CollectOptions, TargetError
    from ..incident import Incident
    from ..record.recorder import RecordError, recorder_from_args
    from .report import make_host, port_of  # one place builds the host (local, or the ssh part's)

    for path in args.log if not getattr(args, "ssh", None) else ():  # with --ssh the files are on the node
        problem = check_log_readable(path)
        if problem is not None:
            return fail(f"cannot read --log {path}: {problem.reason}" + (f" ({problem.hint})" if problem.hint else ""))
    port = port_of(args)
    try:
        host = make_host(args)
    except TargetError as exc:
        return target_failure(exc)
    try:
        target = host.resolve(args.targets, port=port)
    except TargetError as exc:
        host.close()
        return target_failure(exc)
    options = CollectOptions(
        logs=tuple(args.log), port=port, interval_s=args.interval, smaps_budget_ms=args.smaps_budget_ms,
    )
    try:
        recorder = recorder_from_args(args, host.name)
    except (RecordError, OSError) as exc:  # --record FILE named by the user and not writable
        host.close()
        return fail(f"--record: {exc}")
    return run_app(Incident(host, target, options, recorder=recorder), interval=args.interval, theme=args.theme,
                   auto_stacks=bool(getattr(args, "auto_stacks", False)))

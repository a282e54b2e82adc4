"""`triage [TARGET ...]`: resolve the target on this machine and open the interactive app on it.

`run_app` is the one entry other faces use to open the same app on their own incident:
`triage demo` on the demo's, `triage replay` on a replay source (with live=False).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, Optional

from . import EXIT_FAILURE, EXIT_USAGE, fail, target_failure, usage_error
from .early_frame import early_frame
from .start_gc import gc_paused


def terminal_problem() -> str:
    """Why the interactive app cannot run here, or "" when it can. Without a terminal on both ends (CI,
    a pipe, `< /dev/null`) the app would paint escape codes into a file and wait for keys forever."""
    if sys.stdin is None or sys.stdout is None or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return "the interactive app needs a terminal (stdin and stdout are not both a TTY)"
    return ""


def run_app(incident: Any, interval: float = 2.0, theme: str = "dark", live: bool = True, auto_stacks: bool = False,
            started_on: str = "", started: Optional[Callable[[], None]] = None) -> int:
    """Open the app on `incident` until the user quits; the incident is closed on the way out.

    auto_stacks: capture the whole target's stacks once, by itself, when the engine observes it all idle.
    started_on: the target as typed; given, the early frame says it (host, target, interval, starting)
    before textual is imported, and textual's first frame replaces it (#18).
    started: called once the app shows its first Moment (or has been up a few seconds without one)."""
    problem = terminal_problem()
    if problem:
        incident.close()
        return usage_error(f"{problem}; for text use `triage report` (or `triage demo --report`, `triage report --from FILE`)")
    frame = early_frame(incident.host_name, started_on, interval) if started_on else None
    try:
        from ..ui.app import run_app as _run  # textual is imported only when the app is opened

        return _run(incident, interval=interval, theme=theme, live=live, auto_stacks=auto_stacks,
                    handover=frame.handed_over if frame is not None else None, started=started)
    finally:
        if frame is not None:
            frame.leave()  # the shell's screen back if textual never took the terminal (else textual did)


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
    from .job_args import is_job  # the multi-node machinery (SSH, the fleet, its engine) only for a job

    if is_job(args):
        return run_job_app(args)
    with gc_paused() as pause:  # the collector off until the first Moment is shown (commands/start_gc.py)
        if getattr(args, "ssh", None):  # the connection may ask for a passphrase or a host key: before the app
            return _run_on_host(args, pause.resume)
        return _run_here(args, pause.resume)


def _run_here(args: argparse.Namespace, started: Callable[[], None]) -> int:
    # This machine: the app's first frame is drawn before the collectors are imported and the target is
    # resolved (#18). What is wrong as written is said first, in one line, before anything is drawn;
    # a target that finds nothing ends the app after its first frame with the same line and exit code.
    from ..model.options import TargetSpecError
    from ..parse.target_spec import read_target_spec

    try:
        for spec in args.targets:
            read_target_spec(spec)
    except TargetSpecError as exc:
        return target_failure(exc)
    for path in args.log:  # the check alone: the follower (and the snapshot dataclasses) after the first frame
        from ..collect.log_readable import check_log_readable

        problem = check_log_readable(path)
        if problem is not None:
            return fail(f"cannot read --log {path}: {problem.reason}" + (f" ({problem.hint})" if problem.hint else ""))
    no_terminal = terminal_problem()
    if no_terminal:
        return usage_error(f"{no_terminal}; for text use `triage report` (or `triage demo --report`, `triage report --from FILE`)")
    import socket

    from ..incident import IncidentOpening, OpeningFailed

    incident = IncidentOpening(lambda: _open_local(args, incident.warnings), socket.gethostname())
    try:
        return run_app(incident, interval=args.interval, theme=args.theme,
                       auto_stacks=bool(getattr(args, "auto_stacks", False)), started_on=target_as_typed(args),
                       started=started)
    except OpeningFailed as exc:
        return fail(exc.message, exc.code)


def target_as_typed(args: argparse.Namespace) -> str:
    """The target as typed, for the early frame: the specs, or what triage does without one."""
    return " ".join(args.targets) or "no target given: picking candidates"


def _open_local(args: argparse.Namespace, warnings: list[str]) -> Any:
    """The Incident on this machine (in the app's worker, after its first frame): the host made, the target
    resolved, the recorder opened. Raises OpeningFailed with the line to print and the exit code."""
    from ..host.base import CollectOptions, TargetError
    from ..incident import Incident, OpeningFailed
    from ..model.options import TargetSpecError
    from ..record.recorder import RecordError, recorder_from_args
    from .report import make_host, port_of  # one place builds the host

    port = port_of(args)
    try:
        host = make_host(args)
    except TargetError as exc:
        raise OpeningFailed(str(exc), EXIT_USAGE if isinstance(exc, TargetSpecError) else EXIT_FAILURE) from None
    try:
        target = host.resolve(args.targets, port=port)
        recorder = recorder_from_args(args, host.name, warn=warnings.append)
    except TargetError as exc:
        host.close()
        raise OpeningFailed(str(exc), EXIT_USAGE if isinstance(exc, TargetSpecError) else EXIT_FAILURE) from None
    except (RecordError, OSError) as exc:  # --record FILE named by the user and not writable
        host.close()
        raise OpeningFailed(f"--record: {exc}") from None
    options = CollectOptions(
        logs=tuple(args.log), port=port, interval_s=args.interval, smaps_budget_ms=args.smaps_budget_ms,
    )
    return Incident(host, target, options, recorder=recorder)


def _run_on_host(args: argparse.Namespace, started: Callable[[], None]) -> int:
    """--ssh NODE: the host connected, the target resolved and the recorder opened before the app (a
    passphrase prompt or a host-key question must reach the terminal), then the app."""
    from ..host.base import CollectOptions, TargetError
    from ..incident import Incident
    from ..record.recorder import RecordError, recorder_from_args
    from .report import make_host, port_of

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
                   auto_stacks=bool(getattr(args, "auto_stacks", False)), started_on=target_as_typed(args), started=started)

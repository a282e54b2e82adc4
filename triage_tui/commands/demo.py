"""`triage demo`: start the built-in incident and attach to it (the app, or the report with --report).

The demo's processes and files go away however this command ends: the DemoIncident context manager
stops them on return, on an exception and on Ctrl-C; SIGTERM and SIGHUP (a closed terminal) are
turned into a normal exit so that it runs then too; if this process is killed outright, the demo
launcher notices (PR_SET_PDEATHSIG) and cleans up by itself.
"""

from __future__ import annotations

import argparse
import sys

from ..demo.incident import DemoError, DemoIncident, DemoInfo, exit_on_hangup_and_term
from . import fail, usage_error
from .report import run_report


def _app_args(args: argparse.Namespace, info: DemoInfo) -> argparse.Namespace:
    """The app's own arguments, as if the user had typed `triage LAUNCHER_PID --log LOG --port PORT`."""
    from ..cli import build_parser

    argv = [str(info.launcher_pid), "--log", info.log_path, "--port", str(info.port), "--interval", str(args.interval)]
    if not args.auto_stacks:
        argv.append("--no-auto-stacks")
    if args.record:
        argv += ["--record", args.record]
    if args.no_record:
        argv.append("--no-record")
    argv += ["--theme", getattr(args, "theme", "dark")]
    top, _ = build_parser()
    return top.parse_args(argv)


def _report(args: argparse.Namespace, info: DemoInfo) -> int:
    report_args = argparse.Namespace(
        interval=args.interval, smaps_budget_ms=100.0, duration=args.duration, format=args.format,
        record=args.record, no_record=args.no_record, stacks=args.auto_stacks,
    )
    return run_report(report_args, [str(info.launcher_pid)], [info.log_path], info.port)


def run(args: argparse.Namespace) -> int:
    if args.workers < 1 or args.workers > 64:
        return usage_error(f"--workers must be between 1 and 64, not {args.workers}")
    if args.weights_mb < 1:
        return usage_error(f"--weights-mb must be at least 1, not {args.weights_mb}")
    if not args.report:
        from .app import terminal_problem

        if terminal_problem():  # say so before starting (and removing) nine processes for nothing
            return usage_error(f"{terminal_problem()}; use `triage demo --report`")
    exit_on_hangup_and_term()
    try:
        with DemoIncident(workers=args.workers, weights_mb=args.weights_mb) as demo:
            info = demo.info
            assert info is not None
            print(
                f"triage demo: launcher PID {info.launcher_pid} with {len(info.worker_pids)} workers "
                f"(PIDs {', '.join(map(str, info.worker_pids))}); log {info.log_path}; "
                f"port {info.port} announced, never bound. Everything is removed when this command ends.",
                file=sys.stderr,
            )
            if args.report:
                return _report(args, info)
            from . import app

            return int(app.run(_app_args(args, info)) or 0)
    except DemoError as exc:
        return fail(str(exc))

"""`triage report`: watch the target for a while and print what was seen (Markdown or JSON).

The non-interactive face of the same Incident the app drives: resolve the target, tick every
interval for --duration seconds (at least twice, so CPU % and deltas exist), then render the
timeline of Moments. The JSON is the last Moment, hypotheses in the engine's order (docs/report-schema.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Optional, TextIO

from ..collect.logs import check_log_readable
from ..host.base import CollectOptions, Host, TargetError
from ..incident import HostOutage, Incident, wants_auto_stacks
from ..model.moment import Moment
from ..model.snapshot import Snapshot
from ..record.recorder import RecordError, recorder_from_args
from ..render.plain_text import terminal_text, visible
from . import fail, target_failure

PSS_EXTRA_TICKS = 3  # at most this many extra ticks waiting for the off-thread PSS reads to land
PSS_WAIT_S = 5.0


def port_of(args: argparse.Namespace) -> Optional[int]:
    """--port, else the N of the first :N target: that port is probed."""
    if getattr(args, "port", None):
        return int(args.port)
    for spec in getattr(args, "targets", ()) or ():
        text = spec.strip()
        if text.startswith(":") and text[1:].isdecimal():
            return int(text[1:])
    return None


def _pss_missing(snapshot: Snapshot) -> bool:
    memory = snapshot.memory.target
    return memory.pss_covered < memory.processes


def _tick(incident: Incident, last: Moment) -> Moment:
    """One tick; during a host outage the last good Moment stands (the report says so in Sources)."""
    try:
        return incident.tick()
    except HostOutage:
        return last


def _unexplained(moment: Moment) -> bool:
    """At the end of the watch: nothing shows the target working or answering, so one stack capture is the
    evidence left to read (a lock, a collective and a rendezvous look alike from outside)."""
    ids = {o.id for o in moment.diagnosis.observations}
    return not ids & {"progress-seen", "port-answering", "log-progress"} and bool(moment.snapshot.live_pids())


def watch(incident: Incident, duration_s: float, interval_s: float, auto_stacks: bool = False) -> Moment:
    """Tick at 0, every interval, and at `duration_s`; then, bounded, until PSS covers the tree.

    auto_stacks: the first time the engine sees the whole target idle (or, at the end, when nothing showed
    it working or answering), capture its stacks once (py-spy pauses each process for a moment, so never
    again unasked) and tick once more so the engine reads them."""
    start = time.monotonic()
    last = incident.tick()
    k = 1
    while True:
        due = min(k * interval_s, duration_s)
        time.sleep(max(0.0, start + due - time.monotonic()))
        last = _tick(incident, last)
        final = due >= duration_s
        if auto_stacks and incident.latest_stacks is None and (
                wants_auto_stacks(last) or (final and _unexplained(last))):
            incident.capture_stacks()
            last = _tick(incident, last)
        if final:
            break
        k += 1
    for _ in range(PSS_EXTRA_TICKS):
        if not _pss_missing(last.snapshot):
            break
        incident.wait_for_budgeted_reads(PSS_WAIT_S)  # smaps_rollup runs off-thread: let this tick's reads finish
        last = _tick(incident, last)
    return last


def make_host(args: argparse.Namespace) -> Host:
    """The host to watch: this machine, or the node named by --ssh. Raises TargetError (one line)."""
    from ..host.select import host_from_args

    return host_from_args(args)


def run_report(
    args: argparse.Namespace, targets: list[str], logs: list[str], port: Optional[int], out: Optional[TextIO] = None,
) -> int:
    """Shared by `triage report` and `triage demo --report`."""
    out = out if out is not None else sys.stdout
    for path in logs if not getattr(args, "ssh", None) else ():  # with --ssh the files are on the node
        problem = check_log_readable(path)
        if problem is not None:
            return fail(f"cannot read --log {path}: {problem.reason}" + (f" ({problem.hint})" if problem.hint else ""))
    try:
        host = make_host(args)
    except TargetError as exc:
        return target_failure(exc)
    try:
        try:
            target = host.resolve(targets, port=port)
        except TargetError as exc:
            return target_failure(exc)
        options = CollectOptions(
            logs=tuple(logs), port=port, interval_s=args.interval, smaps_budget_ms=args.smaps_budget_ms,
        )
        try:
            recorder = recorder_from_args(args, host.name)
        except (RecordError, OSError) as exc:  # --record FILE named by the user and not writable
            return fail(f"--record: {exc}")
        incident = Incident(host, target, options, recorder=recorder)
        if sys.stderr.isatty():
            roots = ", ".join(f"PID {r.pid}" for r in target.roots) or "nothing"
            print(f"triage: watching {roots} for {args.duration:g} s ...", file=sys.stderr)
        try:
            last = watch(incident, args.duration, args.interval,
                         bool(getattr(args, "stacks", True)) and bool(getattr(args, "auto_stacks", True)))
        finally:
            if recorder is not None:
                recorder.close()
                print(f"triage: {visible(recorder.message)}", file=sys.stderr)
        if args.format == "json":
            from ..render.report_json import render_report_json  # the renderers, when a report is printed:

            print(terminal_text(render_report_json(last)), file=out)
        else:
            from ..render.markdown import render_report_markdown  # the app imports this module for make_host

            print(terminal_text(render_report_markdown(incident.timeline, incident.changelog)), end="", file=out)
        return 0
    finally:
        host.close()


def run(args: argparse.Namespace) -> int:
    if getattr(args, "from_file", None):
        from ..record.export import report_from_record

        try:
            print(terminal_text(report_from_record(args.from_file, args.format)), end="" if args.format == "md" else "\n")
        except RecordError as exc:
            return fail(str(exc))
        return 0
    from .job_args import is_job  # the multi-node machinery (SSH, the fleet) only for a job

    if is_job(args):
        from .job import run_job_report

        return run_job_report(args, port_of(args))
    return run_report(args, list(args.targets), list(args.log), port_of(args))

"""The multi-node faces: `report`, `stacks` and the app on a job that spans nodes.

A job is named by repeated or ranged `--ssh` (`n[1-3]`, `a,b,c`), `--hostfile FILE`, or `--slurm JOBID`
(its nodes from `scontrol`, its processes from `scontrol listpids` on each node unless a TARGET is given).
The same TARGET spec applies on every node.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from collections.abc import Callable, Sequence
from typing import Optional

from ..fleet import DEFAULT_CONCURRENCY, DEFAULT_NODE_TIMEOUT_S, Fleet, NodeWatch
from ..host.base import CollectOptions, Host, StackOptions, TargetError
from ..host.node_list import NodeListError, nodes_from
from ..host.slurm import SlurmError, is_this_machine, job_of, job_pids
from ..model.job import JobMoment
from . import fail


def requested_nodes(args: argparse.Namespace) -> list[str]:
    """The nodes named by --ssh (repeatable, ranges) and --hostfile; raises NodeListError."""
    return nodes_from(list(getattr(args, "ssh_specs", None) or ()), list(getattr(args, "hostfiles", None) or ()))


def is_job(args: argparse.Namespace) -> bool:
    """True when the face must watch several nodes (or a Slurm job) rather than one host."""
    return bool(getattr(args, "slurm", None)) or len(getattr(args, "nodes", None) or ()) > 1 \
        or bool(getattr(args, "hostfiles", None))


def _ssh_host_factory(args: argparse.Namespace, destination: str) -> Callable[[], Host]:
    def make() -> Host:
        from ..host.select import ssh_host_for

        return ssh_host_for(args, destination)
    return make


def _local_factory() -> Host:
    from ..host.select import local_host

    return local_host()


def _slurm_specs(job_id: str) -> Callable[[Host], list[str]]:
    """The job's PIDs on the node the host reaches (asked of that node's slurmd)."""
    def specs(host: Host) -> list[str]:
        runner = getattr(host, "run_command", None)
        pids = job_pids(job_id, runner) if runner is not None else job_pids(job_id)
        return [str(p) for p in pids]
    return specs


def build_watches(args: argparse.Namespace, options: CollectOptions, port: Optional[int]) -> list[NodeWatch]:
    """One NodeWatch per node of the job. Raises TargetError (one line) for a bad list or job."""
    targets = list(getattr(args, "targets", ()) or ())
    job_id = getattr(args, "slurm", None)
    if job_id:
        job = job_of(job_id)
        here = (socket.gethostname(), socket.getfqdn())
        watches = []
        for node in job.nodes:
            specs: Sequence[str] | Callable[[Host], Sequence[str]] = targets or _slurm_specs(job.job_id)
            if is_this_machine(node, here):
                watches.append(NodeWatch(node, _local_factory, specs, port, options, mode="local"))
            else:
                watches.append(NodeWatch(node, _ssh_host_factory(args, node), specs, port, options))
        return watches
    try:
        nodes = requested_nodes(args)
    except NodeListError as exc:
        raise TargetError(str(exc)) from None
    return [NodeWatch(node, _ssh_host_factory(args, node), targets, port, options) for node in nodes]


def build_fleet(args: argparse.Namespace, options: CollectOptions, port: Optional[int]) -> Fleet:
    watches = build_watches(args, options, port)
    return Fleet(watches, concurrency=int(getattr(args, "concurrency", None) or DEFAULT_CONCURRENCY),
                 node_timeout_s=float(getattr(args, "node_timeout", None) or DEFAULT_NODE_TIMEOUT_S))


def watch_job(fleet: Fleet, duration_s: float, interval_s: float, stacks: bool) -> JobMoment:
    """Tick every node at 0, every interval and at `duration_s`; then, with `stacks`, capture every
    reachable node's stacks at once and tick once more so each node's engine reads them."""
    start = time.monotonic()
    last = fleet.tick()
    k = 1
    while True:
        due = min(k * interval_s, duration_s)
        time.sleep(max(0.0, start + due - time.monotonic()))
        last = fleet.tick()
        if due >= duration_s:
            break
        k += 1
    if stacks:
        last = fleet.capture_stacks(StackOptions())
    return last


def run_job_report(args: argparse.Namespace, port: Optional[int]) -> int:
    from ..render.job_json import render_job_json
    from ..render.job_markdown import render_job_markdown

    options = CollectOptions(logs=tuple(getattr(args, "log", ()) or ()), port=port, interval_s=args.interval,
                             smaps_budget_ms=args.smaps_budget_ms)
    try:
        fleet = build_fleet(args, options, port)
    except (TargetError, SlurmError) as exc:
        return fail(str(exc))
    try:
        if sys.stderr.isatty():
            print(f"triage: watching {len(fleet.watches)} nodes for {args.duration:g} s ...", file=sys.stderr)
        last = watch_job(fleet, args.duration, args.interval, stacks=bool(getattr(args, "auto_stacks", False)))
        if args.format == "json":
            print(render_job_json(last), file=sys.stdout)
        else:
            sys.stdout.write(render_job_markdown(last))
        return 0
    finally:
        fleet.close()


def run_job_stacks(args: argparse.Namespace) -> int:
    from ..render.job_json import render_job_json
    from ..render.job_markdown import render_job_stacks

    options = CollectOptions(discover_logs=False)
    try:
        fleet = build_fleet(args, options, None)
    except (TargetError, SlurmError) as exc:
        return fail(str(exc))
    try:
        fleet.tick()
        last = fleet.capture_stacks(StackOptions(native=args.native, locals=args.locals, timeout_s=args.timeout))
        if getattr(args, "json", False) or getattr(args, "format", "") == "json":
            print(render_job_json(last))
        else:
            sys.stdout.write(render_job_stacks(last))
        return 0
    finally:
        fleet.close()

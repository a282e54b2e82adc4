"""The multi-node faces: `report`, `stacks` and the app on a job that spans nodes.

A job is named by repeated or ranged `--ssh` (`n[1-3]`, `a,b,c`), `--hostfile FILE`, or `--slurm JOBID`
(its nodes from `scontrol`, its processes from `scontrol listpids` on each node unless a TARGET is given).
The same TARGET spec applies on every node.
"""

from __future__ import annotations

import argparse
import re
import socket
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Optional

from ..fleet import DEFAULT_CONCURRENCY, DEFAULT_NODE_TIMEOUT_S, Fleet, NodeWatch
from ..host.base import CollectOptions, Host, StackOptions, TargetError
from ..host.node_list import NodeListError, nodes_from
from ..host.slurm import SlurmError, is_this_machine, job_of, job_pids
from ..model.job import JobMoment
from ..record.recorder import Recorder, RecordError
from ..render.plain_text import terminal_text, visible
from . import fail
from .job_args import is_job

__all__ = ["is_job", "open_job", "requested_nodes", "run_job_report", "run_job_stacks"]


def requested_nodes(args: argparse.Namespace) -> list[str]:
    """The nodes named by --ssh (repeatable, ranges) and --hostfile; raises NodeListError."""
    return nodes_from(list(getattr(args, "ssh_specs", None) or ()), list(getattr(args, "hostfiles", None) or ()))


def _ssh_host_factory(args: argparse.Namespace, destination: str) -> Callable[[], Host]:
    def make() -> Host:
        from ..host.select import ssh_host_for

        return ssh_host_for(args, destination)
    return make


def _local_factory() -> Host:
    from ..host.select import local_host

    return local_host()


def _srun_factory(job_id: str, node: str) -> Callable[[], Host]:
    def make() -> Host:
        from ..host.srun import SrunHost

        return SrunHost(job_id, node)
    return make


def _slurm_specs(job_id: str) -> Callable[[Host], list[str]]:
    """The job's PIDs on the node the host reaches (asked of that node's slurmd)."""
    def specs(host: Host) -> list[str]:
        runner = getattr(host, "run_argv", None)  # over the node's SSH connection or srun; else locally
        pids = job_pids(job_id, runner) if runner is not None else job_pids(job_id)
        return [str(p) for p in pids]
    return specs


class JobRecords:
    """Where a job is recorded: one record per node, side by side in one directory (`--record DIR`, else a
    new `triage-job-…` directory under the XDG state directory); each is an ordinary single-node record that
    `triage replay` and `report --from` read."""

    def __init__(self, args: argparse.Namespace) -> None:
        from ..record.recorder import default_record_path, state_directory

        self.enabled = not getattr(args, "no_record", False)
        self.targets = tuple(getattr(args, "targets", ()) or ())
        self.paths: list[str] = []
        named = getattr(args, "record", None)
        self.directory: Optional[Path] = None
        if not self.enabled:
            return
        try:
            if named:
                self.directory = Path(named)
            else:
                base = default_record_path("job", time.time(), state_directory())
                self.directory = base.parent / base.name.removesuffix(".gz").removesuffix(".jsonl")
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            if named:
                raise TargetError(f"--record {named}: cannot make the job's record directory: {exc}") from None
            print(f"triage: warning: not recording this job: {exc} (use --record DIR)", file=sys.stderr)
            self.enabled = False

    def recorder(self, node: str) -> Optional[Recorder]:
        if not self.enabled or self.directory is None:
            return None
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", node) or "node"
        path = self.directory / f"{safe}.jsonl.gz"  # gzip, as every default record
        try:
            recorder = Recorder(path, host=node, target=self.targets)
        except (RecordError, OSError) as exc:
            print(f"triage: warning: not recording {node}: {exc}", file=sys.stderr)
            return None
        self.paths.append(str(path))
        return recorder

    def message(self) -> str:
        if not self.enabled or self.directory is None:
            return ""
        return f"recorded {len(self.paths)} node(s) under {self.directory}/ (replay one: triage replay FILE)"


def build_watches(args: argparse.Namespace, options: CollectOptions, port: Optional[int],
                  records: Optional[JobRecords] = None) -> list[NodeWatch]:
    """One NodeWatch per node of the job. Raises TargetError (one line) for a bad list or job."""
    targets = list(getattr(args, "targets", ()) or ())
    make_recorder = records.recorder if records is not None else None
    job_id = getattr(args, "slurm", None)
    if job_id:
        job = job_of(job_id)
        here = (socket.gethostname(), socket.getfqdn())
        watches = []
        for node in job.nodes:
            specs: Sequence[str] | Callable[[Host], Sequence[str]] = targets or _slurm_specs(job.job_id)
            if getattr(args, "srun", False):  # no SSH to compute nodes: the agent through the scheduler
                watches.append(NodeWatch(node, _srun_factory(job.job_id, node), specs, port, options,
                                         mode="srun agent", make_recorder=make_recorder))
            elif is_this_machine(node, here):
                watches.append(NodeWatch(node, _local_factory, specs, port, options, mode="local",
                                         make_recorder=make_recorder))
            else:
                watches.append(NodeWatch(node, _ssh_host_factory(args, node), specs, port, options,
                                         make_recorder=make_recorder))
        return watches
    try:
        nodes = requested_nodes(args)
    except NodeListError as exc:
        raise TargetError(str(exc)) from None
    return [NodeWatch(node, _ssh_host_factory(args, node), targets, port, options, make_recorder=make_recorder)
            for node in nodes]


def build_fleet(args: argparse.Namespace, options: CollectOptions, port: Optional[int],
                records: Optional[JobRecords] = None) -> Fleet:
    watches = build_watches(args, options, port, records)
    return Fleet(watches, concurrency=int(getattr(args, "concurrency", None) or DEFAULT_CONCURRENCY),
                 node_timeout_s=float(getattr(args, "node_timeout", None) or DEFAULT_NODE_TIMEOUT_S))


def open_job(args: argparse.Namespace, port: Optional[int]) -> tuple[JobRecords, Fleet]:
    """The job's records and its fleet from the flags (raises TargetError / SlurmError), for every job face."""
    options = CollectOptions(logs=tuple(getattr(args, "log", ()) or ()), port=port, interval_s=args.interval,
                             smaps_budget_ms=args.smaps_budget_ms)
    records = JobRecords(args)
    return records, build_fleet(args, options, port, records)


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

    try:
        records, fleet = open_job(args, port)
    except (TargetError, SlurmError) as exc:
        return fail(str(exc))
    try:
        if sys.stderr.isatty():
            print(f"triage: watching {len(fleet.watches)} nodes for {args.duration:g} s ...", file=sys.stderr)
        last = watch_job(fleet, args.duration, args.interval, stacks=bool(getattr(args, "auto_stacks", False)))
        if args.format == "json":
            print(terminal_text(render_job_json(last)), file=sys.stdout)
        else:
            sys.stdout.write(terminal_text(render_job_markdown(last)))
        return 0
    finally:
        fleet.close()
        if records.message():
            print(f"triage: {visible(records.message())}", file=sys.stderr)


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
            print(terminal_text(render_job_json(last)))
        else:
            sys.stdout.write(terminal_text(render_job_stacks(last)))
        return 0
    finally:
        fleet.close()

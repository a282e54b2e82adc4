"""A Slurm job as a set of nodes and processes: what `scontrol show job`, `scontrol show hostnames` and
`scontrol listpids` say, read through the scheduler's own commands (never a daemon of ours).

`job_of(jobid)` replaces `scontrol show job J | grep NodeList` then `scontrol show hostnames …`;
`job_pids(jobid)` replaces `scontrol listpids J` on the node (it asks that node's slurmd, so it is run
where the processes are: locally for this machine, over the node's SSH connection otherwise).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .base import TargetError

SCONTROL_TIMEOUT_S = 15.0

# run(argv) -> (exit status, stdout, stderr); local by default, an SSH exec channel for a remote node
Runner = Callable[[Sequence[str]], "tuple[int, str, str]"]


class SlurmError(TargetError):
    """A job that cannot be watched through Slurm: one clear line for the user."""


@dataclass(frozen=True)
class SlurmJob:
    job_id: str
    state: str = ""  # RUNNING, PENDING, COMPLETED, …
    node_list: str = ""  # Slurm's compact notation: gpu[01-04]
    nodes: tuple[str, ...] = ()  # expanded by `scontrol show hostnames`
    batch_host: str = ""
    user: str = ""
    name: str = ""


def run_local(argv: Sequence[str]) -> tuple[int, str, str]:
    """Run a Slurm client command here, bounded; a missing command is an exit status of 127."""
    if shutil.which(argv[0]) is None:
        return 127, "", f"{argv[0]}: command not found"
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, errors="replace",
                              timeout=SCONTROL_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return 124, "", f"{' '.join(argv)} did not answer within {SCONTROL_TIMEOUT_S:.0f} s"
    return done.returncode, done.stdout, done.stderr


_FIELD = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z/:]*)=(\S*)")


def parse_show_job(text: str) -> dict[str, str]:
    """`scontrol show job` prints `Key=Value` pairs over several indented lines; the first value of a key wins
    (NodeList appears once per job, ReqNodeList/ExcNodeList are other keys)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        for key, value in _FIELD.findall(line):
            fields.setdefault(key, value)
    return fields


def parse_listpids(text: str) -> list[int]:
    """PIDs from `scontrol listpids` (header `PID JOBID STEPID LOCALID GLOBALID`, one row per process)."""
    pids: list[int] = []
    for line in text.splitlines():
        words = line.split()
        if words and words[0].isdecimal():
            pid = int(words[0])
            if pid not in pids:
                pids.append(pid)
    return pids


def _check_job_id(job_id: str) -> str:
    text = job_id.strip()
    if not re.fullmatch(r"\d+(_\d+)?(\+\d+)?", text):  # 123, an array task 123_4, a het component 123+0
        raise SlurmError(f"malformed Slurm job id {job_id!r} (expected a number such as 1234)")
    return text


def _failure(what: str, status: int, err: str) -> str:
    line = (err.strip().splitlines() or [""])[-1]
    if status == 127:
        return f"{what}: scontrol is not installed here (hint: run triage on a node of the cluster, or use --ssh)"
    return f"{what}: {line or f'exit status {status}'}"


def job_of(job_id: str, run: Runner = run_local) -> SlurmJob:
    """The job's state and nodes. Raises SlurmError when the job is unknown or not running."""
    job_id = _check_job_id(job_id)
    status, out, err = run(["scontrol", "show", "job", job_id])
    if status != 0:
        raise SlurmError(_failure(f"cannot read Slurm job {job_id}", status, err))
    fields = parse_show_job(out)
    state = fields.get("JobState", "")
    node_list = fields.get("NodeList", "")
    if state and state not in ("RUNNING", "SUSPENDED", "COMPLETING"):
        raise SlurmError(f"Slurm job {job_id} is {state}, not running: nothing to watch")
    if not node_list or node_list == "(null)":
        raise SlurmError(f"Slurm job {job_id} has no nodes yet (state {state or 'unknown'})")
    status, out, err = run(["scontrol", "show", "hostnames", node_list])
    if status != 0:
        raise SlurmError(_failure(f"cannot expand the nodes of job {job_id} ({node_list})", status, err))
    nodes = tuple(dict.fromkeys(w for w in out.split() if w))
    if not nodes:
        raise SlurmError(f"scontrol show hostnames {node_list} printed no node")
    return SlurmJob(job_id, state, node_list, nodes, fields.get("BatchHost", ""), fields.get("UserId", ""),
                    fields.get("JobName", ""))


def job_pids(job_id: str, run: Runner = run_local) -> list[int]:
    """Every process of the job on the node `run` executes on (batch script, steps, their tasks)."""
    job_id = _check_job_id(job_id)
    status, out, err = run(["scontrol", "listpids", job_id])
    if status != 0:
        raise SlurmError(_failure(f"cannot list the processes of job {job_id}", status, err))
    pids = parse_listpids(out)
    if not pids:
        raise SlurmError(f"scontrol listpids {job_id} found no process of the job on this node")
    return pids


def is_this_machine(node: str, hostnames: Sequence[str]) -> bool:
    """A Slurm node name that names this machine (short or full host name, or localhost)."""
    short = node.split(".")[0]
    return node in ("localhost", "127.0.0.1") or any(short == h.split(".")[0] for h in hostnames if h)

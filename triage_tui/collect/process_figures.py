"""A process's row figures from the files the collector read (or carried): memory, context switches and user
from /proc/PID/status, bytes from /proc/PID/io, and the wait channel, open fd count and thread states.

Replaces `cat /proc/PID/status`, `cat /proc/PID/io`, `cat /proc/PID/wchan`, `ls /proc/PID/fd | wc -l`. Each read
fails on its own: its figures say why ("unavailable: permission denied ..."), never a silent zero.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Optional

from ..model.unavailable import Unavailable, unavailable_from_error
from ..parse.procfs import ProcStat, StatusNumbers, parse_io_bytes
from .proc_table import read_text
from .process_reads import open_fd_count, thread_states, user_name
from .process_samples import Sample, delta


def status_figures(stat: ProcStat, status: Optional[StatusNumbers], error: Optional[Unavailable],
                   before: Optional[Sample]) -> dict[str, object]:
    out: dict[str, object] = {}
    if error is not None or status is None:
        error = error if error is not None else Unavailable("status not read")
        for key in ("rss_bytes", "rss_anon_bytes", "rss_file_bytes", "rss_shmem_bytes", "vms_bytes",
                    "ctx_voluntary", "ctx_involuntary", "user"):
            out[key] = error
        return out
    no_memory = Unavailable("zombie: no memory left" if stat.state == "Z" else "no memory map (kernel thread)")
    for key, value in (("rss_bytes", status.rss), ("rss_anon_bytes", status.rss_anon),
                       ("rss_file_bytes", status.rss_file), ("rss_shmem_bytes", status.rss_shmem),
                       ("vms_bytes", status.vms)):
        out[key] = value if value is not None else no_memory
    for key, name, value, prev in (
        ("ctx_voluntary", "voluntary_ctxt_switches", status.ctx_voluntary, before.ctx_voluntary if before else None),
        ("ctx_involuntary", "nonvoluntary_ctxt_switches", status.ctx_involuntary,
         before.ctx_involuntary if before else None),
    ):
        out[key] = value if value is not None else Unavailable(f"no {name} in status")
        if value is not None:
            out[key + "_delta"] = delta(value, prev)
    out["user"] = user_name(status.uid) if status.uid is not None else Unavailable("no Uid in status")
    out["nspid"] = status.nspid
    return out



def io_figures(base: str, before: Optional[Sample], alive: bool, carried: Optional[tuple[int, int]],
               reads: Counter[str], held: Optional[Callable[[str], bytes]] = None
               ) -> tuple[dict[str, object], Optional[int], Optional[int]]:
    """read_bytes / write_bytes from /proc/PID/io (root or the same user; ptrace-mode read).
    `carried`: last tick's values of a process that has not run since (the read is skipped). `held`: a file's
    bytes by name through a held fd (held_files.py: the kernel checks access on every read, as on an open)."""
    if not alive:
        gone = Unavailable("exited during this read")
        return {"read_bytes": gone, "write_bytes": gone}, None, None
    read_bytes: Optional[int]  # None: not in io
    write_bytes: Optional[int]
    if carried is not None:
        read_bytes, write_bytes = carried
    else:
        reads["io"] += 1
        try:
            text = held("io").decode("ascii", "replace") if held is not None else read_text(f"{base}/io")
            read_bytes, write_bytes = parse_io_bytes(text)
        except OSError as exc:
            reason = unavailable_from_error(exc, "/proc/PID/io")
            return {"read_bytes": reason, "write_bytes": reason}, None, None
    out: dict[str, object] = {
        "read_bytes": read_bytes if read_bytes is not None else Unavailable("no read_bytes in io"),
        "write_bytes": write_bytes if write_bytes is not None else Unavailable("no write_bytes in io"),
    }
    if read_bytes is not None:
        out["read_bytes_delta"] = delta(read_bytes, before.read_bytes if before else None)
    if write_bytes is not None:
        out["write_bytes_delta"] = delta(write_bytes, before.write_bytes if before else None)
    return out, read_bytes, write_bytes



def cheap_reads(pid: int, base: str, stat: ProcStat, alive: bool, carried_wchan: Optional[str],
                reads: Counter[str], held: Optional[Callable[[str], bytes]] = None) -> dict[str, object]:
    """wchan, open fd count, per-thread states: each may fail on its own. `carried_wchan`: the
    wchan file's text last tick, for a process whose main thread has not run since; `held` as io_figures'."""
    out: dict[str, object] = {}
    if not alive:
        gone = Unavailable("exited during this read")
        return {"wchan": gone, "num_fds": gone}
    try:
        if stat.state == "R" and carried_wchan is None:
            wchan = ""  # on a CPU as its stat line was read: the kernel's wchan says "0" for a running task
        elif carried_wchan is None:
            reads["wchan"] += 1
            wchan = (held("wchan").decode("utf-8", "replace") if held is not None
                     else read_text(f"{base}/wchan")).strip()
        else:
            wchan = carried_wchan
        # "0" means running, that the kernel hides the symbol (kptr_restrict), or a task that has just
        # gone to sleep and is still on its run queue (delayed dequeue, Linux 6.12 on): not carried, so
        # the next refresh reads it again (a Sample keeps only a wchan that is text)
        out["wchan"] = wchan if wchan and wchan != "0" else ("" if stat.state == "R" else Unavailable(
            "kernel reports no wait channel",
            "kernel.kptr_restrict may hide it (read as root), or it had just gone to sleep: the next refresh reads again"))
    except OSError as exc:
        out["wchan"] = unavailable_from_error(exc, "wchan")
    if stat.state == "Z":
        out["num_fds"] = Unavailable("zombie: no open files left")
    else:
        reads["fds"] += 1
        try:
            out["num_fds"] = open_fd_count(pid)
        except OSError as exc:
            out["num_fds"] = unavailable_from_error(exc, "fd")
    if stat.num_threads == 1:
        out["thread_states"] = {stat.state: 1}  # the only thread's state is the process's
    else:
        reads["threads"] += 1
        try:
            out["thread_states"] = thread_states(pid)
        except OSError:
            out["thread_states"] = {}
    return out

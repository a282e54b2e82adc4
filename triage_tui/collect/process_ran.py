"""The row of a single-threaded process that ran since the last tick: every file it needs read again, in one
straight line of code.

Replaces, for the commonest changed row (a worker, a poller, a sleeper that wakes), the general path of
processes.py (the figures gathered into a dict by status_figures, io_figures and cheap_reads, each able to say
why a figure is unavailable, then `ProcessInfo(**info)` and a new Sample): measured at ~30 us of Python per row
on this project's VM, a thousand rows a tick when every process changes. Nothing is carried: status, io, wchan
(none for a process on a CPU) and the fd count are read now, as the general path reads them for a process that
ran, and the figures are those it would build from the same reads (a test compares the two on one process).
Anything not as usual (a read that fails, a figure missing from its file, a zombie, threads, a CPU window too
short to measure) returns None before a row is built, and the caller takes the general path, which reads again
and says why. Pure Python 3.8, standard library only (the agent bundle).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Optional

from ..model.snapshot import ProcessInfo
from ..parse.procfs import ProcStat, parse_io_bytes, parse_status_numbers_again
from .held_files import HeldProcFiles
from .proc_table import CLOCK_TICKS, read_text
from .process_reads import open_fd_count, user_name
from .process_samples import MIN_CPU_WINDOW_S, PSS_DEFAULTS, Sample


def ran_row(pid: int, stat: ProcStat, before: Sample, now: float, cmdline: tuple[str, ...],
            extra: Optional[Mapping[str, object]], run_count: Optional[int], held: HeldProcFiles,
            reads: Counter[str]) -> Optional[ProcessInfo]:
    """The row of `pid`, single-threaded and seen before (`before`, the same start time), whose schedstat run
    count moved since: it was put on a CPU. `before` is updated in place to this tick's sample (the caller keeps
    it). None, with `before` untouched, where the general path must decide (see the module doc)."""
    last = before.row
    if (last is None or last.error is not None or last.exited or stat.num_threads != 1 or before.threads != 1
            or stat.state in ("Z", "X") or run_count is None or before.run_count is None
            or run_count == before.run_count or now - before.at < MIN_CPU_WINDOW_S
            or before.ctx_voluntary is None or before.ctx_involuntary is None
            or before.read_bytes is None or before.write_bytes is None or not isinstance(last.num_fds, int)):
        return None
    base = f"/proc/{pid}"
    starttime = stat.starttime
    try:
        reads["status"] += 1
        status, status_head = parse_status_numbers_again(read_text(f"{base}/status"), before.status_head)
        reads["io"] += 1
        read_bytes, write_bytes = parse_io_bytes(held.read(pid, starttime, "io").decode("ascii", "replace"))
        if stat.state == "R":
            wchan = ""  # on a CPU as its stat line was read: the kernel's wchan says "0" for a running task
        else:
            reads["wchan"] += 1
            wchan = held.read(pid, starttime, "wchan").decode("utf-8", "replace").strip()
        reads["fds"] += 1
        num_fds = open_fd_count(pid)
    except OSError:
        return None  # gone, or not ours to read: the general path reads again and says which
    voluntary, involuntary = status.ctx_voluntary, status.ctx_involuntary
    if (voluntary is None or involuntary is None or status.uid is None or status.rss is None
            or status.rss_anon is None or status.rss_file is None or status.rss_shmem is None or status.vms is None
            or read_bytes is None or write_bytes is None or (stat.state != "R" and (not wchan or wchan == "0"))):
        return None
    ticks = stat.utime + stat.stime
    name = status.name if status.name is not None else stat.comm
    pss = extra if extra else PSS_DEFAULTS
    row = ProcessInfo(
        pid=pid, ppid=stat.ppid, name=name, cmdline=cmdline, state=stat.state,
        thread_states=last.thread_states if before.state == stat.state else {stat.state: 1},
        cpu_percent=100.0 * (ticks - before.cpu_ticks) / CLOCK_TICKS / (now - before.at),
        cpu_time_s=ticks / CLOCK_TICKS, reaped_children_cpu_s=stat.children_ticks / CLOCK_TICKS,
        user_time_s=stat.utime / CLOCK_TICKS, system_time_s=stat.stime / CLOCK_TICKS, threads=1,
        start_time=last.start_time, wchan=wchan, ctx_voluntary=voluntary, ctx_involuntary=involuntary,
        ctx_voluntary_delta=voluntary - before.ctx_voluntary, ctx_involuntary_delta=involuntary - before.ctx_involuntary,
        read_bytes=read_bytes, write_bytes=write_bytes, read_bytes_delta=read_bytes - before.read_bytes,
        write_bytes_delta=write_bytes - before.write_bytes, major_faults=stat.majflt,
        major_faults_delta=stat.majflt - before.majflt, num_fds=num_fds, nspid=status.nspid,
        user=user_name(status.uid), rss_bytes=status.rss, rss_anon_bytes=status.rss_anon,
        rss_file_bytes=status.rss_file, rss_shmem_bytes=status.rss_shmem, vms_bytes=status.vms,
        **pss,  # the PSS figures, as the general path puts `extra` into the row
    )
    before.at, before.cpu_ticks, before.majflt, before.name, before.cmdline = now, ticks, stat.majflt, name, cmdline
    before.ctx_voluntary, before.ctx_involuntary = voluntary, involuntary
    before.read_bytes, before.write_bytes, before.io = read_bytes, write_bytes, (read_bytes, write_bytes)
    before.state, before.wchan, before.status, before.rss_pages = stat.state, wchan, status, stat.rss_pages
    before.run_count, before.stat, before.row, before.quiet, before.extra = run_count, stat, row, False, None
    before.status_head = status_head
    return row

"""Per-process figures for the target tree, one row per PID, every tick.

Replaces `ps -o pid,ppid,stat,%cpu,time,nlwp,lstart,wchan,user -L`, `cat /proc/PID/status`,
`cat /proc/PID/io` and `ls /proc/PID/fd | wc -l`. Stateful: CPU %, context-switch, I/O and
major-fault deltas are against the previous tick's sample of the same process (same PID and
same start time, so a reused PID starts fresh). A process that vanishes or denies access marks
its own row and never aborts the walk.

Cost (a refresh of 1,000 processes should stay in the tens of milliseconds): the stat line comes
from the tick's /proc table pass, argv and user names are kept, and wchan and io are not re-read
for a process that has provably not run since the last tick. Its main thread's state, voluntary
and involuntary context switches and the group's CPU ticks are all unchanged, so its main thread
was never scheduled and still sleeps where it slept: wchan is the same. io is carried only for a
single-threaded process (then no thread of it ran, so it issued no I/O); a multi-threaded one's
other threads may have. A carried value is the value a read would have returned, not an estimate.

The same proof lets a single-threaded process skip /proc/PID/status (the dearest read): when its
schedstat run count (`pcount`, times it was put on a CPU), state, CPU ticks, major faults and
RSS pages (in the stat line already read) are unchanged, it has not run, so its context switches,
UID and NSpid are the same, and its memory figures too: its RSS can only shrink by reclaim while
it sleeps, and RSS pages would show that. Where schedstat is missing (no CONFIG_SCHED_INFO),
status is read every tick.

Such a process costs one schedstat read and nothing else: its open-fd count is carried too (only
its own system calls open or close its fds; it made none), and when its row would hold the same
figures as last tick's (its deltas were zero already, the same PSS figure, the same parent) the
row *is* last tick's object, so the engine, the recorder and the app can skip it by identity.
`reads` counts every per-process read by kind, for the tests and the benchmarks.

By topic: process_samples.py (what is kept between ticks, the not-run proof), process_figures.py (a row's
figures from status, io, wchan, fds), process_reads.py (single reads: schedstat, fd count, thread states).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Optional

from ..model.snapshot import ExitedProcess, ProcessInfo
from ..model.unavailable import Maybe, Unavailable, unavailable_from_error
from ..parse.procfs import ProcStat, StatusNumbers, parse_stat, parse_status_numbers_again
from .held_files import HeldProcFiles
from .proc_table import CLOCK_TICKS, ProcTable, boot_time, read_cmdline, read_text
from .process_figures import cheap_reads, io_figures, status_figures
from .process_reads import exit_code_of_wait_status, exit_status_readable
from .process_ran import ran_row
from .process_samples import (MIN_CPU_WINDOW_S, PSS_DEFAULTS, ZERO_DELTAS, Sample, has_not_run, row_like,
                              status_unchanged)

MAX_EXITED = 100  # keep the most recent disappearances so the UI can explain them
STATUS_KEYS = frozenset({"Name", "Uid", "VmRSS", "RssAnon", "RssFile", "RssShmem", "VmSize",
                         "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches", "NSpid"})


def _denied_or_gone(exc: OSError, what: str) -> Unavailable:
    return unavailable_from_error(exc, what)


class ProcessCollector:
    """Collect ProcessInfo rows for a set of PIDs; keeps the previous samples for deltas."""

    def __init__(self) -> None:
        self._previous: dict[int, Sample] = {}
        self._exited: list[ExitedProcess] = []
        self._boot_time = boot_time()
        self._cmdlines: dict[tuple[int, int, str], tuple[str, ...]] = {}
        # per-process reads by kind ("status", "io", "wchan", "fds", "schedstat", "threads"), since start
        self.reads: Counter[str] = Counter()
        # each tree process's schedstat (and, through the /proc pass, its stat) stays open across ticks
        self.held = HeldProcFiles()

    def close(self) -> None:
        """Close the held /proc files (also done when the collector is dropped)."""
        self.held.close()

    @property
    def exited(self) -> tuple[ExitedProcess, ...]:
        """Processes of the tree seen before and gone now, most recent last."""
        return tuple(self._exited)

    def collect(self, pids: Sequence[int], table: Optional[ProcTable] = None,
                extra: Optional[Mapping[int, Mapping[str, object]]] = None) -> tuple[ProcessInfo, ...]:
        """One row per PID, in order. `table`: this tick's /proc pass, to reuse its stat lines.
        `extra`: more ProcessInfo fields per PID read elsewhere (PSS from the smaps thread), put
        into the row as it is built (rebuilding 1,000 frozen rows afterwards cost ~10 ms a tick);
        a row whose process is gone does not take them."""
        rows: list[ProcessInfo] = []
        samples: dict[int, Sample] = {}
        stats = table.stats if table is not None else {}
        counts = table.run_counts if table is not None else {}
        moved = table.rss_moved if table is not None else set()  # its pages moved while it slept: status again
        extra = extra if extra is not None else {}
        previous = self._previous
        now = time.monotonic()
        quiet = 0
        for pid in pids:
            stat = stats.get(pid)
            before = previous.get(pid)
            pss = extra.get(pid)
            # _collect_one's first test, here: a process still not run since its row was carried (the very stat
            # line, the same run count and PSS figures) is that row again; most of an idle tree, every tick
            if (before is not None and stat is not None and stat is before.stat and before.quiet
                    and before.row is not None and before.run_count is not None
                    and counts.get(pid) == before.run_count and (pss or None) == before.extra and now > before.at
                    and stat.num_threads == 1 and stat.state != "Z" and pid not in moved):
                before.at = now
                rows.append(before.row)
                samples[pid] = before
                quiet += 1
                continue
            row, sample = self._collect_one(pid, stat, pss, counts.get(pid), pid in moved)
            rows.append(row)
            if sample is not None:
                samples[pid] = sample
        self.reads["schedstat"] += quiet  # read by the /proc pass for each of them (one read a tick either way)
        now = time.time()
        for pid, before in self._previous.items():
            if pid in samples:
                continue
            if self._still_alive(pid, before.starttime):
                continue  # left the tree (reparented away), not exited
            code: Maybe[int] = Unavailable("not our child: exit status unknown")
            if before.exit_code is not None:
                code = before.exit_code  # seen as a zombie: the kernel showed its wait status
            elif before.exit_hidden:
                code = Unavailable("exit status hidden: another user's process",
                                   "run triage as root or as the target's user")
            self._exited.append(ExitedProcess(pid=pid, name=before.name, cmdline=before.cmdline, last_seen=now,
                                              exit_code=code))
        del self._exited[:-MAX_EXITED]
        self._previous = samples
        self.held.keep_only(samples)  # a process that left the tree or exited releases its fds
        if len(self._cmdlines) > 4 * len(samples) + 100:  # forget processes long gone
            self._cmdlines = {k: v for k, v in self._cmdlines.items() if k[0] in samples}
        return tuple(rows)

    def _run_count(self, pid: int, starttime: int) -> Optional[int]:
        """read_run_count through the held schedstat fd of the process that started at `starttime`."""
        try:
            return int(self.held.read(pid, starttime, "schedstat").split()[2])
        except (OSError, ValueError, IndexError):
            return None

    @staticmethod
    def _still_alive(pid: int, starttime: int) -> bool:
        try:
            stat = parse_stat(read_text(f"/proc/{pid}/stat"))
        except OSError:
            return False
        return stat is not None and stat.starttime == starttime and stat.state not in ("Z", "X")

    def _gone_row(self, pid: int, exc: OSError) -> ProcessInfo:
        before = self._previous.get(pid)
        return ProcessInfo(
            pid=pid, ppid=0, name=before.name if before else "?", cmdline=before.cmdline if before else (),
            state="X", exited=isinstance(exc, (FileNotFoundError, ProcessLookupError)),
            error=_denied_or_gone(exc, "stat"),
        )

    def _cmdline(self, pid: int, stat: ProcStat) -> tuple[str, ...]:
        """argv, re-read only when the process is new or renamed itself (setproctitle changes comm too)."""
        key = (pid, stat.starttime, stat.comm)
        cmdline = self._cmdlines.get(key)
        if cmdline is None:
            cmdline = read_cmdline(pid)
            if cmdline or stat.state != "Z":
                self._cmdlines[key] = cmdline
        return cmdline

    def _collect_one(self, pid: int, stat: Optional[ProcStat] = None, extra: Optional[Mapping[str, object]] = None,
                     run_count: Optional[int] = None, rss_moved: bool = False) -> tuple[ProcessInfo, Optional[Sample]]:
        """`run_count`: the schedstat count the /proc pass read for this very stat line (proc_tree.py), if it did.
        `rss_moved`: the pass saw its memory's page counts move though it did not run (its status is read)."""
        base = f"/proc/{pid}"
        now = time.monotonic()
        if stat is None:
            try:
                stat = parse_stat(read_text(f"{base}/stat"))
            except OSError as exc:
                return self._gone_row(pid, exc), None
        if stat is None:
            return ProcessInfo(pid=pid, ppid=0, name="?", error=Unavailable("malformed /proc/PID/stat")), None
        before = self._previous.get(pid)
        if before is not None and before.starttime != stat.starttime:
            before = None  # the PID was reused by a new process
        status: Optional[StatusNumbers] = None
        vanished: Optional[Unavailable] = None
        status_error: Optional[Unavailable] = None
        ticks = stat.utime + stat.stime
        # read before status: should it run in between, the next tick sees a new count and re-reads
        if stat.num_threads != 1 or stat.state == "Z":
            run_count = None
        else:
            if run_count is None:
                run_count = self._run_count(pid, stat.starttime)
            self.reads["schedstat"] += 1  # here or in the /proc pass: one read a tick either way
            if (before is not None and before.quiet and before.row is not None and stat is before.stat
                    and not rss_moved and run_count is not None and run_count == before.run_count and (extra or None) == before.extra
                    and now > before.at):
                # the very stat line (the /proc pass kept its ProcStat: not a byte moved) of a process still
                # not run since its row was carried: that row again, as _unchanged_row would conclude
                before.at = now
                return before.row, before
        cmdline = self._cmdline(pid, stat)
        if before is not None:  # single-threaded and put on a CPU since: read whole, the straight way
            row = ran_row(pid, stat, before, now, cmdline, extra, run_count, self.held, self.reads)
            if row is not None:
                return row, before
        unchanged = status_unchanged(before, stat, ticks, run_count) and not rss_moved
        if unchanged and before is not None and now > before.at:
            row = self._unchanged_row(stat, before, now, cmdline, extra)
            if row is not None:
                return row, before
        status_head = before.status_head if before is not None else None
        try:
            if unchanged and before is not None:
                status = before.status
            else:
                self.reads["status"] += 1
                status, head = parse_status_numbers_again(read_text(f"{base}/status"), status_head)
                # a process read for the first time keeps no head: most never run again (an idle tree's status is
                # not read again), and a head is ~0.7 KB; the first time it runs, ran_row keeps one
                status_head = head if before is not None else None
        except OSError as exc:
            status_error = _denied_or_gone(exc, "status")
            if isinstance(exc, (FileNotFoundError, ProcessLookupError)):
                vanished = Unavailable("exited during this read", "the row keeps what was read before it went")
        info: dict[str, object] = {
            "pid": pid, "ppid": stat.ppid, "name": status.name if status is not None and status.name is not None else stat.comm, "cmdline": cmdline,
            "state": stat.state, "threads": stat.num_threads,
            "user_time_s": stat.utime / CLOCK_TICKS, "system_time_s": stat.stime / CLOCK_TICKS,
            "cpu_time_s": ticks / CLOCK_TICKS, "reaped_children_cpu_s": stat.children_ticks / CLOCK_TICKS,
            "start_time": self._boot_time + stat.starttime / CLOCK_TICKS,
            "major_faults": stat.majflt,
        }
        zombie_code_readable = stat.state == "Z" and stat.exit_code is not None and exit_status_readable(pid)
        if zombie_code_readable:  # the status its parent would get from wait()
            info["exit_status"] = stat.exit_code
        elif stat.state == "Z" and stat.exit_code is not None:  # the kernel printed 0 there: not a real 0
            info["exit_status"] = Unavailable("exit status hidden: another user's process",
                                              "run triage as root or as the target's user")
        short_window = before is not None and now - before.at < MIN_CPU_WINDOW_S
        idle = has_not_run(before, stat, ticks, status)
        if before is not None and not short_window:
            info["cpu_percent"] = 100.0 * (ticks - before.cpu_ticks) / CLOCK_TICKS / (now - before.at)
        elif before is not None and idle:  # provably not scheduled since `before`: 0 % however short (as the carried row says)
            info["cpu_percent"] = 0.0
        elif before is not None:
            last = before.row.cpu_percent if before.row is not None else None
            info["cpu_percent"] = last if last is not None else Unavailable(
                "not measured yet", "CPU % needs two reads at least a quarter second apart")
        if before is not None:
            info["major_faults_delta"] = stat.majflt - before.majflt
        info.update(status_figures(stat, status, status_error, before))
        carried_io = before.io if idle and before is not None and stat.num_threads == 1 == before.threads else None
        # a process seen before that ran again has its io and wchan read through held fds (one pread a tick: 1.3
        # against 6.2 us an open, read and close for io, 2.0 against 4.5 for wchan), as its stat and schedstat
        # are; a new one the plain way (in a big tree the first tick's fds go to the stat and schedstat files
        # every tick reads). A process that keeps running holds stat, schedstat, io and wchan: 4 fds, as one that
        # sleeps holds stat, schedstat and statm; beyond the bound (held_files.py) files are opened as before
        starttime = stat.starttime
        held = (lambda name: self.held.read(pid, starttime, name)) if before is not None else None
        io = io_figures(base, before, vanished is None, carried_io, self.reads, held)
        info.update(io[0])
        carried_wchan = before.wchan if idle and before is not None else None
        info.update(cheap_reads(pid, base, stat, vanished is None, carried_wchan, self.reads, held))
        if vanished is not None:
            info["exited"] = True
            info["error"] = vanished
        elif extra:
            info.update(extra)
        wchan = info.get("wchan")
        sample = Sample(  # over a short window the CPU baseline stays where it was (see MIN_CPU_WINDOW_S)
            starttime=stat.starttime, at=before.at if short_window and before is not None else now,
            cpu_ticks=before.cpu_ticks if short_window and before is not None else ticks,
            ctx_voluntary=status.ctx_voluntary if status is not None else None,
            ctx_involuntary=status.ctx_involuntary if status is not None else None,
            read_bytes=io[1], write_bytes=io[2], majflt=stat.majflt, name=str(info["name"]), cmdline=cmdline,
            exit_code=exit_code_of_wait_status(stat.exit_code) if zombie_code_readable and stat.exit_code is not None
            else None,
            exit_hidden=stat.state == "Z" and stat.exit_code is not None and not zombie_code_readable,
            state=stat.state, threads=stat.num_threads, wchan=wchan if isinstance(wchan, str) else None,
            io=(io[1], io[2]) if io[1] is not None and io[2] is not None else None,
            status=status, rss_pages=stat.rss_pages, run_count=run_count, stat=stat, status_head=status_head,
        )
        sample.row = ProcessInfo(**info)  # type: ignore[arg-type]
        return sample.row, sample

    @staticmethod
    def _unchanged_row(stat: ProcStat, before: Sample, now: float, cmdline: tuple[str, ...],
                       extra: Optional[Mapping[str, object]]) -> Optional[ProcessInfo]:
        """The row of a process that has provably not run since `before` (see module doc): last
        tick's row with zero deltas, its fd count, this tick's parent and PSS figures — last tick's
        row object itself when none of those differ from it. None when last tick's row lacks a
        figure this path would carry (then the full path reads it)."""
        row = before.row
        if (row is None or row.exited or row.error is not None or before.wchan is None or before.io is None
                or not isinstance(row.num_fds, int)):
            return None
        before.at, before.stat = now, stat
        extra = extra or None
        if before.quiet and row.ppid == stat.ppid and row.cmdline is cmdline and extra == before.extra:
            return row
        changes: dict[str, object] = dict(ZERO_DELTAS)
        changes.update(PSS_DEFAULTS)
        if extra:
            changes.update(extra)
        changes["ppid"] = stat.ppid  # a parent that exits re-parents its child, which need not run
        changes["cmdline"] = cmdline
        before.row = out = row_like(row, changes)
        before.quiet, before.extra = True, extra
        return out

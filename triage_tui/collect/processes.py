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
"""

from __future__ import annotations

import os
import pwd
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Optional

from ..model.snapshot import ExitedProcess, ProcessInfo
from ..model.unavailable import Maybe, Unavailable, unavailable_from_error
from ..parse.procfs import ProcStat, StatusNumbers, parse_kb_table, parse_stat, parse_status_numbers
from .proc_table import CLOCK_TICKS, ProcTable, boot_time, read_bytes, read_cmdline, read_text

# CPU % is measured over at least this long: the kernel counts CPU time in clock ticks (10 ms), so
# over the few milliseconds between a tick and a quick follow-up one (the report's last tick after a
# slow PSS read) a ~45 % process read 0.0 % and a single thread 244 %. A shorter window keeps the
# last figure measured over a full one and measures the next from the same start.
MIN_CPU_WINDOW_S = 0.25
MAX_EXITED = 100  # keep the most recent disappearances so the UI can explain them
STATUS_KEYS = frozenset({"Name", "Uid", "VmRSS", "RssAnon", "RssFile", "RssShmem", "VmSize",
                         "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches", "NSpid"})


@dataclass
class _Sample:  # mutable: an unchanged process's sample is carried forward in place
    starttime: int
    at: float  # monotonic
    cpu_ticks: int
    ctx_voluntary: Optional[int]
    ctx_involuntary: Optional[int]
    read_bytes: Optional[int]
    write_bytes: Optional[int]
    majflt: int
    name: str
    cmdline: tuple[str, ...]
    exit_code: Optional[int] = None  # known while it was a zombie (stat field 52)
    exit_hidden: bool = False  # a zombie whose field 52 the kernel hid from us (it prints 0 then)
    state: str = "?"
    threads: int = 0
    wchan: Optional[str] = None  # as read (None: not read or not readable)
    io: Optional[tuple[int, int]] = None  # (read_bytes, write_bytes) as read
    status: Optional[StatusNumbers] = None  # last tick's /proc/PID/status figures
    rss_pages: int = -1
    run_count: Optional[int] = None  # schedstat pcount (single-threaded processes only)
    row: Optional[ProcessInfo] = None  # the row this sample's tick produced
    quiet: bool = False  # `row` was built by the not-run path: zero deltas, PSS figures from `extra`
    extra: Optional[Mapping[str, object]] = None  # the PSS fields `row` was built with (None: none)


_PSS_FIELDS = ("pss_bytes", "uss_bytes", "swap_bytes", "pss_read_at")
_PSS_DEFAULTS = {f.name: f.default for f in fields(ProcessInfo) if f.name in _PSS_FIELDS}
_ZERO_DELTAS = {"major_faults_delta": 0, "ctx_voluntary_delta": 0, "ctx_involuntary_delta": 0,
                "read_bytes_delta": 0, "write_bytes_delta": 0, "cpu_percent": 0.0}


def _row_like(row: ProcessInfo, changes: Mapping[str, object]) -> ProcessInfo:
    """`row` with `changes`, as dataclasses.replace would build it, for a fraction of the cost:
    ProcessInfo is a plain frozen dataclass (no __post_init__, no slots), so its state is its
    __dict__, and every field is present in the copy."""
    out = object.__new__(ProcessInfo)
    out.__dict__.update(row.__dict__)
    out.__dict__.update(changes)
    return out


def read_run_count(pid: int) -> Optional[int]:
    """Times PID's main thread was put on a CPU (/proc/PID/schedstat, third field); None when
    the kernel has no schedstat (CONFIG_SCHED_INFO) or it cannot be read."""
    try:
        return int(read_bytes(f"/proc/{pid}/schedstat").split()[2])
    except (OSError, ValueError, IndexError):
        return None


def _status_unchanged(before: Optional[_Sample], stat: ProcStat, ticks: int, run_count: Optional[int]) -> bool:
    """A single-threaded process that provably has not run since `before`: its status is the same."""
    return (before is not None and before.status is not None and run_count is not None
            and run_count == before.run_count and stat.num_threads == 1 == before.threads
            and stat.state == before.state and stat.state not in ("R", "Z", "X") and ticks == before.cpu_ticks
            and stat.majflt == before.majflt and stat.rss_pages == before.rss_pages)


def _has_not_run(before: Optional[_Sample], stat: ProcStat, ticks: int, status: Optional[StatusNumbers]) -> bool:
    """True when the main thread has provably not been scheduled since `before` (see module doc)."""
    if (before is None or status is None or before.state != stat.state or before.cpu_ticks != ticks
            or stat.state in ("R", "Z", "X")):
        return False
    return (status.ctx_voluntary is not None and status.ctx_involuntary is not None
            and status.ctx_voluntary == before.ctx_voluntary and status.ctx_involuntary == before.ctx_involuntary)


def _delta(now: Optional[int], before: Optional[int]) -> object:
    if now is None:
        return Unavailable("not read")
    if before is None:
        return Unavailable("first sample")
    return now - before


_USERS: dict[int, str] = {}


def user_name(uid: int) -> str:
    if uid not in _USERS:
        try:
            _USERS[uid] = pwd.getpwuid(uid).pw_name
        except KeyError:
            _USERS[uid] = str(uid)  # no passwd entry (common in containers): show the number
    return _USERS[uid]


def exit_code_of_wait_status(status: int) -> int:
    """A zombie's wait status as a shell shows it: the exit code, or minus the killing signal."""
    return -(status & 0x7F) if status & 0x7F else (status >> 8) & 0xFF


def exit_status_readable(pid: int) -> bool:
    """Whether the kernel shows us PID's real exit code in /proc/PID/stat field 52.

    Without ptrace read access (another user's process, and we are not root) the kernel prints 0
    there: a silent zero that read as "exit code 0" for a child that exited 7. /proc/PID/exe is
    guarded by the same check (PTRACE_MODE_READ_FSCREDS), so its readlink tells: EACCES means the
    field was hidden; ENOENT (a zombie has no executable mapped any more) or success means it is real."""
    try:
        os.readlink(f"/proc/{pid}/exe")
    except PermissionError:
        return False
    except OSError:
        return True
    return True


def open_fd_count(pid: int) -> int:
    """Number of open fds. Linux >= 6.2 reports it as the size of /proc/PID/fd (one stat call);
    older kernels say 0 there, so count the directory instead."""
    size = os.stat(f"/proc/{pid}/fd").st_size
    return size if size > 0 else len(os.listdir(f"/proc/{pid}/fd"))


def thread_states(pid: int) -> dict[str, int]:
    """{"R": 1, "S": 40}: the state letter of every thread (/proc/PID/task/*/stat)."""
    counts: dict[str, int] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = parse_stat(read_text(f"/proc/{pid}/task/{tid}/stat"))
        except OSError:
            continue  # thread ended between listdir and read
        if stat is not None:
            counts[stat.state] = counts.get(stat.state, 0) + 1
    return counts


def _denied_or_gone(exc: OSError, what: str) -> Unavailable:
    return unavailable_from_error(exc, what)


class ProcessCollector:
    """Collect ProcessInfo rows for a set of PIDs; keeps the previous samples for deltas."""

    def __init__(self) -> None:
        self._previous: dict[int, _Sample] = {}
        self._exited: list[ExitedProcess] = []
        self._boot_time = boot_time()
        self._cmdlines: dict[tuple[int, int, str], tuple[str, ...]] = {}
        # per-process reads by kind ("status", "io", "wchan", "fds", "schedstat", "threads"), since start
        self.reads: Counter[str] = Counter()

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
        samples: dict[int, _Sample] = {}
        stats = table.stats if table is not None else {}
        extra = extra if extra is not None else {}
        for pid in pids:
            row, sample = self._collect_one(pid, stats.get(pid), extra.get(pid))
            rows.append(row)
            if sample is not None:
                samples[pid] = sample
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
        if len(self._cmdlines) > 4 * len(samples) + 100:  # forget processes long gone
            self._cmdlines = {k: v for k, v in self._cmdlines.items() if k[0] in samples}
        return tuple(rows)

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

    def _collect_one(self, pid: int, stat: Optional[ProcStat] = None,
                     extra: Optional[Mapping[str, object]] = None) -> tuple[ProcessInfo, Optional[_Sample]]:
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
        cmdline = self._cmdline(pid, stat)
        status: Optional[StatusNumbers] = None
        vanished: Optional[Unavailable] = None
        status_error: Optional[Unavailable] = None
        ticks = stat.utime + stat.stime
        # read before status: should it run in between, the next tick sees a new count and re-reads
        run_count = None
        if stat.num_threads == 1 and stat.state != "Z":
            run_count = read_run_count(pid)
            self.reads["schedstat"] += 1
        unchanged = _status_unchanged(before, stat, ticks, run_count)
        if unchanged and before is not None and now > before.at:
            row = self._unchanged_row(stat, before, now, cmdline, extra)
            if row is not None:
                return row, before
        try:
            if unchanged and before is not None:
                status = before.status
            else:
                self.reads["status"] += 1
                status = parse_status_numbers(read_text(f"{base}/status"))
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
        idle = _has_not_run(before, stat, ticks, status)
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
        info.update(self._status_figures(stat, status, status_error, before))
        carried_io = before.io if idle and before is not None and stat.num_threads == 1 == before.threads else None
        io = self._io(base, before, vanished is None, carried_io, self.reads)
        info.update(io[0])
        carried_wchan = before.wchan if idle and before is not None else None
        info.update(self._cheap_reads(pid, base, stat, vanished is None, carried_wchan, self.reads))
        if vanished is not None:
            info["exited"] = True
            info["error"] = vanished
        elif extra:
            info.update(extra)
        wchan = info.get("wchan")
        sample = _Sample(  # over a short window the CPU baseline stays where it was (see MIN_CPU_WINDOW_S)
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
            status=status, rss_pages=stat.rss_pages, run_count=run_count,
        )
        sample.row = ProcessInfo(**info)  # type: ignore[arg-type]
        return sample.row, sample

    @staticmethod
    def _unchanged_row(stat: ProcStat, before: _Sample, now: float, cmdline: tuple[str, ...],
                       extra: Optional[Mapping[str, object]]) -> Optional[ProcessInfo]:
        """The row of a process that has provably not run since `before` (see module doc): last
        tick's row with zero deltas, its fd count, this tick's parent and PSS figures — last tick's
        row object itself when none of those differ from it. None when last tick's row lacks a
        figure this path would carry (then the full path reads it)."""
        row = before.row
        if (row is None or row.exited or row.error is not None or before.wchan is None or before.io is None
                or not isinstance(row.num_fds, int)):
            return None
        before.at = now
        extra = extra or None
        if before.quiet and row.ppid == stat.ppid and row.cmdline is cmdline and extra == before.extra:
            return row
        changes: dict[str, object] = dict(_ZERO_DELTAS)
        changes.update(_PSS_DEFAULTS)
        if extra:
            changes.update(extra)
        changes["ppid"] = stat.ppid  # a parent that exits re-parents its child, which need not run
        changes["cmdline"] = cmdline
        before.row = out = _row_like(row, changes)
        before.quiet, before.extra = True, extra
        return out

    @staticmethod
    def _status_figures(stat: ProcStat, status: Optional[StatusNumbers], error: Optional[Unavailable],
                        before: Optional[_Sample]) -> dict[str, object]:
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
                out[key + "_delta"] = _delta(value, prev)
        out["user"] = user_name(status.uid) if status.uid is not None else Unavailable("no Uid in status")
        out["nspid"] = status.nspid
        return out

    @staticmethod
    def _io(base: str, before: Optional[_Sample], alive: bool, carried: Optional[tuple[int, int]],
            reads: Counter[str]) -> tuple[dict[str, object], Optional[int], Optional[int]]:
        """read_bytes / write_bytes from /proc/PID/io (root or the same user; ptrace-mode read).
        `carried`: last tick's values of a process that has not run since (the read is skipped)."""
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
                table = parse_kb_table(read_text(f"{base}/io"))
            except OSError as exc:
                reason = _denied_or_gone(exc, "/proc/PID/io")
                return {"read_bytes": reason, "write_bytes": reason}, None, None
            read_bytes, write_bytes = table.get("read_bytes"), table.get("write_bytes")
        out: dict[str, object] = {
            "read_bytes": read_bytes if read_bytes is not None else Unavailable("no read_bytes in io"),
            "write_bytes": write_bytes if write_bytes is not None else Unavailable("no write_bytes in io"),
        }
        if read_bytes is not None:
            out["read_bytes_delta"] = _delta(read_bytes, before.read_bytes if before else None)
        if write_bytes is not None:
            out["write_bytes_delta"] = _delta(write_bytes, before.write_bytes if before else None)
        return out, read_bytes, write_bytes

    @staticmethod
    def _cheap_reads(pid: int, base: str, stat: ProcStat, alive: bool, carried_wchan: Optional[str],
                     reads: Counter[str]) -> dict[str, object]:
        """wchan, open fd count, per-thread states: each may fail on its own. `carried_wchan`: the
        wchan file's text last tick, for a process whose main thread has not run since."""
        out: dict[str, object] = {}
        if not alive:
            gone = Unavailable("exited during this read")
            return {"wchan": gone, "num_fds": gone}
        try:
            if carried_wchan is None:
                reads["wchan"] += 1
            wchan = carried_wchan if carried_wchan is not None else read_text(f"{base}/wchan").strip()
            # "0" means running, or that the kernel hides the symbol (kptr_restrict)
            out["wchan"] = wchan if wchan and wchan != "0" else ("" if stat.state == "R" else Unavailable(
                "kernel reports no wait channel", "kernel.kptr_restrict may hide it; read as root"))
        except OSError as exc:
            out["wchan"] = _denied_or_gone(exc, "wchan")
        if stat.state == "Z":
            out["num_fds"] = Unavailable("zombie: no open files left")
        else:
            reads["fds"] += 1
            try:
                out["num_fds"] = open_fd_count(pid)
            except OSError as exc:
                out["num_fds"] = _denied_or_gone(exc, "fd")
        if stat.num_threads == 1:
            out["thread_states"] = {stat.state: 1}  # the only thread's state is the process's
        else:
            reads["threads"] += 1
            try:
                out["thread_states"] = thread_states(pid)
            except OSError:
                out["thread_states"] = {}
        return out

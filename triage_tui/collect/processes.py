"""Per-process figures for the target tree, one row per PID, every tick.

Replaces `ps -o pid,ppid,stat,%cpu,time,nlwp,lstart,wchan,user -L`, `cat /proc/PID/status`,
`cat /proc/PID/io` and `ls /proc/PID/fd | wc -l`. Stateful: CPU %, context-switch, I/O and
major-fault deltas are against the previous tick's sample of the same process (same PID and
same start time, so a reused PID starts fresh). A process that vanishes or denies access marks
its own row and never aborts the walk.
"""

from __future__ import annotations

import os
import pwd
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from ..model.snapshot import ExitedProcess, ProcessInfo
from ..model.unavailable import Unavailable, unavailable_from_error
from ..parse.procfs import ProcStat, int_field, kb_field_bytes, parse_kb_table, parse_stat, parse_status
from .proc_table import CLOCK_TICKS, boot_time, read_cmdline, read_text

MAX_EXITED = 100  # keep the most recent disappearances so the UI can explain them


@dataclass(frozen=True)
class _Sample:
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

    @property
    def exited(self) -> tuple[ExitedProcess, ...]:
        """Processes of the tree seen before and gone now, most recent last."""
        return tuple(self._exited)

    def collect(self, pids: Sequence[int]) -> tuple[ProcessInfo, ...]:
        rows: list[ProcessInfo] = []
        samples: dict[int, _Sample] = {}
        for pid in pids:
            row, sample = self._collect_one(pid)
            rows.append(row)
            if sample is not None:
                samples[pid] = sample
        now = time.time()
        for pid, before in self._previous.items():
            if pid in samples:
                continue
            if self._still_alive(pid, before.starttime):
                continue  # left the tree (reparented away), not exited
            self._exited.append(ExitedProcess(pid=pid, name=before.name, cmdline=before.cmdline, last_seen=now))
        del self._exited[:-MAX_EXITED]
        self._previous = samples
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

    def _collect_one(self, pid: int) -> tuple[ProcessInfo, Optional[_Sample]]:
        base = f"/proc/{pid}"
        now = time.monotonic()
        try:
            stat = parse_stat(read_text(f"{base}/stat"))
        except OSError as exc:
            return self._gone_row(pid, exc), None
        if stat is None:
            return ProcessInfo(pid=pid, ppid=0, name="?", error=Unavailable("malformed /proc/PID/stat")), None
        before = self._previous.get(pid)
        if before is not None and before.starttime != stat.starttime:
            before = None  # the PID was reused by a new process
        cmdline = read_cmdline(pid)
        fields: dict[str, str] = {}
        vanished: Optional[Unavailable] = None
        status_error: Optional[Unavailable] = None
        try:
            fields = parse_status(read_text(f"{base}/status"))
        except OSError as exc:
            status_error = _denied_or_gone(exc, "status")
            if isinstance(exc, (FileNotFoundError, ProcessLookupError)):
                vanished = Unavailable("exited during this read", "the row keeps what was read before it went")
        ticks = stat.utime + stat.stime
        info: dict[str, object] = {
            "pid": pid, "ppid": stat.ppid, "name": fields.get("Name", stat.comm), "cmdline": cmdline,
            "state": stat.state, "threads": stat.num_threads,
            "user_time_s": stat.utime / CLOCK_TICKS, "system_time_s": stat.stime / CLOCK_TICKS,
            "cpu_time_s": ticks / CLOCK_TICKS,
            "start_time": self._boot_time + stat.starttime / CLOCK_TICKS,
            "major_faults": stat.majflt,
        }
        if before is not None and now > before.at:
            info["cpu_percent"] = 100.0 * (ticks - before.cpu_ticks) / CLOCK_TICKS / (now - before.at)
            info["major_faults_delta"] = stat.majflt - before.majflt
        info.update(self._status_figures(stat, fields, status_error, before))
        io = self._io(base, before, vanished is None)
        info.update(io[0])
        info.update(self._cheap_reads(pid, base, stat, vanished is None))
        if vanished is not None:
            info["exited"] = True
            info["error"] = vanished
        sample = _Sample(
            starttime=stat.starttime, at=now, cpu_ticks=ticks,
            ctx_voluntary=int_field(fields, "voluntary_ctxt_switches"),
            ctx_involuntary=int_field(fields, "nonvoluntary_ctxt_switches"),
            read_bytes=io[1], write_bytes=io[2], majflt=stat.majflt, name=str(info["name"]), cmdline=cmdline,
        )
        return ProcessInfo(**info), sample  # type: ignore[arg-type]

    @staticmethod
    def _status_figures(stat: ProcStat, fields: dict[str, str], error: Optional[Unavailable],
                        before: Optional[_Sample]) -> dict[str, object]:
        out: dict[str, object] = {}
        if error is not None:
            for key in ("rss_bytes", "rss_anon_bytes", "rss_file_bytes", "rss_shmem_bytes", "vms_bytes",
                        "ctx_voluntary", "ctx_involuntary", "user"):
                out[key] = error
            return out
        no_memory = Unavailable("zombie: no memory left" if stat.state == "Z" else "no memory map (kernel thread)")
        for key, name in (("rss_bytes", "VmRSS"), ("rss_anon_bytes", "RssAnon"), ("rss_file_bytes", "RssFile"),
                          ("rss_shmem_bytes", "RssShmem"), ("vms_bytes", "VmSize")):
            value = kb_field_bytes(fields, name)
            out[key] = value if value is not None else no_memory
        for key, name, prev in (
            ("ctx_voluntary", "voluntary_ctxt_switches", before.ctx_voluntary if before else None),
            ("ctx_involuntary", "nonvoluntary_ctxt_switches", before.ctx_involuntary if before else None),
        ):
            value = int_field(fields, name)
            out[key] = value if value is not None else Unavailable(f"no {name} in status")
            if value is not None:
                out[key + "_delta"] = _delta(value, prev)
        uid = int_field(fields, "Uid")
        out["user"] = user_name(uid) if uid is not None else Unavailable("no Uid in status")
        nspid = fields.get("NSpid", "")
        try:
            out["nspid"] = tuple(int(x) for x in nspid.split())
        except ValueError:
            out["nspid"] = ()
        return out

    @staticmethod
    def _io(base: str, before: Optional[_Sample], alive: bool) -> tuple[dict[str, object], Optional[int], Optional[int]]:
        """read_bytes / write_bytes from /proc/PID/io (root or the same user; ptrace-mode read)."""
        if not alive:
            gone = Unavailable("exited during this read")
            return {"read_bytes": gone, "write_bytes": gone}, None, None
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
    def _cheap_reads(pid: int, base: str, stat: ProcStat, alive: bool) -> dict[str, object]:
        """wchan, open fd count, per-thread states: each may fail on its own."""
        out: dict[str, object] = {}
        if not alive:
            gone = Unavailable("exited during this read")
            return {"wchan": gone, "num_fds": gone}
        try:
            wchan = read_text(f"{base}/wchan").strip()
            # "0" means running, or that the kernel hides the symbol (kptr_restrict)
            out["wchan"] = wchan if wchan and wchan != "0" else ("" if stat.state == "R" else Unavailable(
                "kernel reports no wait channel", "kernel.kptr_restrict may hide it; read as root"))
        except OSError as exc:
            out["wchan"] = _denied_or_gone(exc, "wchan")
        if stat.state == "Z":
            out["num_fds"] = Unavailable("zombie: no open files left")
        else:
            try:
                out["num_fds"] = len(os.listdir(f"{base}/fd"))
            except OSError as exc:
                out["num_fds"] = _denied_or_gone(exc, "fd")
        try:
            out["thread_states"] = thread_states(pid)
        except OSError:
            out["thread_states"] = {}
        return out

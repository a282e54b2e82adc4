"""Agentless mode: one plain shell script per refresh on the node, parsed here with parse/.

For nodes without a usable Python (or --agentless). Replaces running `ps`, `free`, `cat /proc/PID/status`,
`ss -ltnp`, `nvidia-smi --query-gpu` and `tail` by hand. Nothing the user typed is put in the script
unquoted: PIDs are ints, log paths go through shlex.quote, name:REGEX patterns are matched HERE against
ps output and never sent. What this mode cannot see is said in the snapshot (reason starts "agentless mode").
"""

from __future__ import annotations

import dataclasses
import re
import secrets
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from ..model.snapshot import (
    GpuDevice,
    GpuReport,
    KernelReport,
    ListeningSocket,
    LogLine,
    LogTail,
    MemoryReport,
    PortReport,
    ProcessInfo,
    Snapshot,
    SourceStatus,
    SystemMemory,
    Target,
    TargetMemory,
    TargetRoot,
)
from ..model.unavailable import Unavailable
from ..parse.meminfo import free_columns, parse_meminfo
from ..parse.proc_status import parse_proc_status, status_bytes, status_int
from ..parse.ps_columns import PS_COLUMNS_COMMAND, PsRow, parse_ps_columns, subtree
from ..parse.ss_listen import parse_ss_listen
from .base import CollectOptions, TargetError

LOG_TAIL_BYTES = 16384
NO_SMAPS = Unavailable("agentless mode: no smaps_rollup", "install psutil for the node's python3 to use agent mode")
BLIND_SPOTS = "agentless mode: no PSS/USS (smaps_rollup), no stack capture, no kernel log, no port probes"
GPU_QUERY = ("nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,memory.total,memory.used,memory.free,"
             "utilization.gpu,temperature.gpu --format=csv,noheader,nounits")


@dataclass(frozen=True)
class Sections:
    """The script's output cut at its markers: {"ps": text, "status 123": text, "log 0": text, ...}."""

    parts: dict[str, str]

    def get(self, name: str) -> str:
        return self.parts.get(name, "")


def build_script(marker: str, status_pids: Sequence[int], logs: Sequence[str], gpus: bool = True) -> str:
    """One refresh as one script. `marker` is random per refresh so no log line can fake a section."""
    def section(name: str) -> str:
        return f"echo; echo {marker}{name}; "

    lines = [section("ps") + PS_COLUMNS_COMMAND, section("meminfo") + "cat /proc/meminfo"]
    lines += [section(f"status {int(p)}") + f"cat /proc/{int(p)}/status 2>&1" for p in status_pids]
    lines.append(section("ss") + "ss -ltnpH 2>&1")
    if gpus:
        lines.append(section("gpu") + f"{GPU_QUERY} 2>&1 || echo nvidia-smi-failed")
    for i, path in enumerate(logs):
        q = shlex.quote(path)
        lines.append(section(f"logstat {i}") + f"stat -c '%s %Y' -- {q} 2>&1")
        lines.append(section(f"log {i}") + f"tail -c {LOG_TAIL_BYTES} -- {q} 2>/dev/null; echo '|'")
    lines.append(section("now") + "date +%s.%N")
    return "\n".join(lines) + "\n"


def split_sections(output: str, marker: str) -> Sections:
    parts: dict[str, list[str]] = {}
    current: Optional[str] = None
    for line in output.split("\n"):
        if line.startswith(marker):
            current = line[len(marker):]
            parts[current] = []
        elif current is not None:
            parts[current].append(line)
    # each section's text ends with the "echo" that separates it from the next marker: drop that newline
    return Sections({k: "\n".join(v[:-1] if v and v[-1] == "" else v) for k, v in parts.items()})


def new_marker() -> str:
    return f"@@triage-{secrets.token_hex(8)}@@ "


def resolve_from_ps(specs: Sequence[str], rows: list[PsRow], ss_text: str, port: Optional[int]) -> Target:
    """TARGET specs against the node's ps and ss output; regexes run here, never on the node."""
    by_pid = {r.pid: r for r in rows}
    roots: list[TargetRoot] = []
    for spec in specs:
        if spec.isdigit():
            if int(spec) not in by_pid:
                raise TargetError(f"no process with PID {spec} on the node")
            roots.append(TargetRoot(int(spec), f"PID {spec}"))
        elif spec.startswith("name:"):
            try:
                pattern = re.compile(spec[5:])
            except re.error as exc:
                raise TargetError(f"bad regex in {spec!r}: {exc}") from None
            found = [r for r in rows if pattern.search(r.args)]
            # a match whose parent matches too is part of that parent's tree: keep only the topmost
            pids = {r.pid for r in found}
            roots += [TargetRoot(r.pid, f"command line matches {spec[5:]!r}") for r in found if r.ppid not in pids]
            if not found:
                raise TargetError(f"no process on the node matches {spec!r}")
        elif spec.startswith(":") and spec[1:].isdigit():
            listeners = [pid for s in parse_ss_listen(ss_text) if s.port == int(spec[1:]) for pid in s.pids]
            if not listeners:
                raise TargetError(f"nothing listens on {spec} on the node (ss -ltnp, as the ssh user)")
            roots += [TargetRoot(pid, f"listens on {spec}") for pid in dict.fromkeys(listeners)]
        else:
            raise TargetError(f"not a target: {spec!r} (expected PID, name:REGEX or :PORT)")
    if not specs:
        raise TargetError("agentless mode needs a TARGET (PID, name:REGEX or :PORT)")
    return Target(specs=tuple(specs), roots=tuple(roots))


def _process(row: PsRow, status_text: Optional[str]) -> ProcessInfo:
    info = ProcessInfo(
        pid=row.pid, ppid=row.ppid, name=(row.args.split() or ["?"])[0].rsplit("/", 1)[-1][:64],
        cmdline=tuple(row.args.split()), state=row.stat[:1], threads=row.threads, cpu_time_s=row.cpu_time_s,
        user=row.user, rss_bytes=row.rss_bytes, vms_bytes=row.vsz_bytes,
        pss_bytes=NO_SMAPS, uss_bytes=NO_SMAPS, swap_bytes=NO_SMAPS, pss_age_s=NO_SMAPS,
        cpu_percent=Unavailable("agentless mode: no CPU sampling"),
    )
    if status_text is None:
        missing = Unavailable("agentless mode: appeared since the last refresh", "next refresh reads it")
        return _replace(info, rss_anon_bytes=missing, rss_file_bytes=missing, rss_shmem_bytes=missing)
    f = parse_proc_status(status_text)
    if "Pid" not in f:
        return _replace(info, exited=True, error=Unavailable(f"agentless mode: /proc/{row.pid}/status: {status_text.strip()[:80]}"))

    def known(value: Optional[int]) -> object:
        return value if value is not None else Unavailable("not in /proc/PID/status")

    return _replace(
        info, name=f.get("Name", info.name), rss_bytes=known(status_bytes(f, "VmRSS")),
        rss_anon_bytes=known(status_bytes(f, "RssAnon")), rss_file_bytes=known(status_bytes(f, "RssFile")),
        rss_shmem_bytes=known(status_bytes(f, "RssShmem")),
        ctx_voluntary=known(status_int(f, "voluntary_ctxt_switches")),
        ctx_involuntary=known(status_int(f, "nonvoluntary_ctxt_switches")),
        nspid=tuple(int(x) for x in f.get("NSpid", "").split() if x.isdigit()),
    )


def _replace(info: ProcessInfo, **changes: object) -> ProcessInfo:
    return dataclasses.replace(info, **changes)  # type: ignore[arg-type]


def _gpus(text: str) -> GpuReport:
    if not text.strip() or "nvidia-smi-failed" in text:
        return GpuReport(source="none", error=Unavailable(f"agentless mode: nvidia-smi: {text.strip()[:120] or 'no output'}"))
    devices = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 9 or not cells[0].isdigit():
            continue

        def mib(cell: str) -> object:
            return int(float(cell)) * 1024 * 1024 if cell.replace(".", "").isdigit() else Unavailable(f"nvidia-smi: {cell}")

        def num(cell: str) -> object:
            return int(float(cell)) if cell.replace(".", "").isdigit() else Unavailable(f"nvidia-smi: {cell}")

        devices.append(GpuDevice(index=int(cells[0]), name=cells[1], uuid=cells[2], pci_bus_id=cells[3],
                                 memory_total_bytes=mib(cells[4]), memory_used_bytes=mib(cells[5]),
                                 memory_free_bytes=mib(cells[6]), utilization_gpu_percent=num(cells[7]),
                                 temperature_c=num(cells[8])))
    return GpuReport(source="nvidia-smi", devices=tuple(devices))


def _log(path: str, stat_text: str, body: str, now: float) -> LogTail:
    parts = stat_text.split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return LogTail(path=path, error=Unavailable(f"agentless mode: {stat_text.strip()[:120] or 'cannot stat'}"))
    size, mtime = int(parts[0]), int(parts[1])
    body = body[:-1] if body.endswith("|") else body  # the '|' sentinel keeps a missing final newline visible
    text_lines = body.split("\n")
    partial = text_lines.pop() if text_lines else ""
    if size > LOG_TAIL_BYTES and text_lines:
        text_lines = text_lines[1:]  # the first line was cut by tail -c
    lines = tuple(LogLine(t, seen_at=now, level=_level(t)) for t in text_lines)
    return LogTail(path=path, lines=lines, partial=partial, size_bytes=size,
                   seconds_since_last_byte=max(now - mtime, 0.0), last_byte_at=float(mtime))


def _level(line: str) -> str:
    low = line.lower()
    if line.startswith("Traceback") or line.startswith("  File "):
        return "traceback"
    if "error" in low or "exception" in low:
        return "error"
    return "warning" if "warn" in low else "info"


def build_snapshot(host: str, target: Target, options: CollectOptions, sections: Sections,
                   status_pids: Sequence[int], started: float, duration_ms: float) -> Snapshot:
    rows = subtree(parse_ps_columns(sections.get("ps")), [r.pid for r in target.roots])
    read = set(status_pids)
    processes = tuple(_process(r, sections.get(f"status {r.pid}") if r.pid in read else None) for r in rows)
    free = free_columns(parse_meminfo(sections.get("meminfo")))

    def mem(key: str) -> object:
        return free.get(key, Unavailable("agentless mode: not in /proc/meminfo"))

    system = SystemMemory(total_bytes=mem("total"), used_bytes=mem("used"), free_bytes=mem("free"),
                          available_bytes=mem("available"), buff_cache_bytes=mem("buff_cache"),
                          shared_bytes=mem("shared"), swap_total_bytes=mem("swap_total"),
                          swap_used_bytes=mem("swap_used"))
    live = [p for p in processes if not p.exited]

    def total(attr: str) -> object:
        values = [getattr(p, attr) for p in live]
        return sum(values) if values and all(isinstance(v, int) for v in values) else Unavailable("agentless mode: not read for every process")

    target_mem = TargetMemory(processes=len(live), rss_sum_bytes=total("rss_bytes"), pss_sum_bytes=NO_SMAPS,
                              uss_sum_bytes=NO_SMAPS, anon_sum_bytes=total("rss_anon_bytes"),
                              file_sum_bytes=total("rss_file_bytes"), shmem_sum_bytes=total("rss_shmem_bytes"))
    pids = {p.pid for p in processes}
    listening = tuple(ListeningSocket(pid, s.address, s.port, s.family)
                      for s in parse_ss_listen(sections.get("ss")) for pid in s.pids if pid in pids)
    now_text = sections.get("now").strip()
    now = float(now_text) if re.fullmatch(r"\d+(\.\d+)?", now_text) else time.time()
    logs = tuple(_log(path, sections.get(f"logstat {i}"), sections.get(f"log {i}"), now)
                 for i, path in enumerate(options.logs))
    return Snapshot(
        host=host, taken_at=started, interval_s=options.interval_s, target=target, processes=processes,
        memory=MemoryReport(system=system, target=target_mem, smaps_budget_ms=0.0), logs=logs,
        ports=PortReport(listening=listening, error=Unavailable("agentless mode: no port probes") if options.port else None),
        gpus=_gpus(sections.get("gpu")),
        kernel=KernelReport(error=Unavailable("agentless mode: kernel log not read", "use agent mode")),
        sources=(SourceStatus("ssh", "ok", duration_ms, "agentless mode, one script per refresh"),
                 SourceStatus("mode", "ok", 0.0, BLIND_SPOTS)),
    )

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Optional, Union

from ..collect.gpu import join_gpus_to_processes
from ..collect.kernel import logged_while_alive
from ..collect.log_levels import LineClassifier
from ..collect.smaps_files import count_sharers, parse_smaps
from ..model.mappings import FileMapping
from ..model.snapshot import (
    GpuProcess,
    GpuReport,
    KernelReport,
    ListeningSocket,
    LogLine,
    LogTail,
    MemoryReport,
    PortProbe,
    PortReport,
    ProcessInfo,
    Snapshot,
    SourceStatus,
    SystemMemory,
    Target,
    TargetMemory,
    TargetRoot,
)
from ..model.unavailable import Maybe, Unavailable
from ..model.waits import WaitSource
from ..parse.dmesg import parse_kernel_lines
from ..parse.free import parse_free
from ..parse.nvidia_smi import (
    COMPUTE_APPS_ARGS,
    QUERY_GPU_ARGS,
    NvidiaSmiParseError,
    parse_compute_apps_csv,
    parse_query_gpu_csv,
)
from ..parse.proc_status import parse_proc_status
from ..parse.ps import parse_ps
from ..parse.ss_listen import parse_ss_listen
from ..parse.text_errors import ParseError
from .base import CollectOptions, TargetError

LOG_TAIL_BYTES = 16384
KERNEL_TAIL_LINES = 50
# the same columns `triage diagnose` reads from a pasted `ps -eo ...` (header line included: parse_ps needs it)
PS_COMMAND = "LC_ALL=C ps -eo pid,ppid,stat,nlwp,rss,vsz,time,user:32,args"
NOT_YET = Unavailable("agentless mode: appeared since the last refresh", "the next refresh reads it")
# what a shell cannot read, said once (the mode source) rather than in every cell
BLIND_SPOTS = ("agentless mode: PSS/USS from smaps_rollup, CPU % from /proc/PID/stat deltas between refreshes, "
               "port probes with bash's /dev/tcp; no wait-for graph, no NVML (nvidia-smi only); "
               "stacks only with py-spy on the node or uploadable (same architecture)")
PROBE_TIMEOUT_S = 2
GPU_QUERY = "nvidia-smi " + " ".join(QUERY_GPU_ARGS)
GPU_APPS = "nvidia-smi " + " ".join(COMPUTE_APPS_ARGS)


@dataclass(frozen=True)
class Sections:
    """The script's output cut at its markers: {"ps": text, "status 123": text, "log 0": text, ...}."""

    parts: dict[str, str]

    def get(self, name: str) -> str:
        return self.parts.get(name, "")


# Keeps ps's header and the rows of the roots' subtrees: a refresh sends back the tree, not the whole
# process table (roots are ints; the awk program is fixed text).
SUBTREE_AWK = (
    "awk -v roots=\"$roots\" 'NR==1{print;next} {n++; line[n]=$0; pid[n]=$1; ppid[n]=$2} "
    "END{split(roots,r,\" \"); for(i in r) keep[r[i]]=1; more=1; "
    "while(more){more=0; for(k=1;k<=n;k++) if(!(pid[k] in keep) && (ppid[k] in keep)){keep[pid[k]]=1; more=1}} "
    "for(k=1;k<=n;k++) if(pid[k] in keep) print line[k]}'"
)


def build_script(marker: str, status_pids: Sequence[int], logs: Sequence[str], gpus: bool = True,
                 roots: Optional[Sequence[int]] = None, port: Optional[int] = None) -> str:
    """One refresh as one script. `marker` is random per refresh so no log line can fake a section.
    With `roots`, ps output is cut to their subtrees on the node (resolve needs the whole table)."""
    def section(name: str) -> str:
        return f"echo; echo {marker}{name}; "

    ps = PS_COMMAND
    if roots is not None:
        ps = f"roots='{' '.join(str(int(r)) for r in roots)}'; {PS_COMMAND} | {SUBTREE_AWK}"
    lines = [section("ps") + ps, section("free") + "LC_ALL=C free -b"]
    lines += [section(f"status {int(p)}") + f"cat /proc/{int(p)}/status 2>&1" for p in status_pids]
    # PSS/USS (what smem reads) and the CPU ticks a delta between two refreshes turns into CPU %
    lines += [section(f"rollup {int(p)}") + f"cat /proc/{int(p)}/smaps_rollup 2>&1" for p in status_pids]
    lines += [section(f"stat {int(p)}") + f"cat /proc/{int(p)}/stat 2>/dev/null" for p in status_pids]
    lines.append(section("clk") + "getconf CLK_TCK 2>/dev/null || echo 100")
    lines.append(section("ss") + "ss -ltnpH 2>&1")
    if port is not None:  # what curl would meet at the TCP level, as probe_port does locally
        for address in ("127.0.0.1", "::1"):
            lines.append(section(f"probe {address}") + (
                f"if command -v bash >/dev/null 2>&1; then r=$(timeout {PROBE_TIMEOUT_S} bash -c "
                f"'exec 3<>/dev/tcp/{address}/{int(port)}' 2>&1); echo \"rc=$? $r\" | head -c 300; "
                "else echo 'nobash'; fi"))
    if gpus:
        lines.append(section("gpu") + f"{GPU_QUERY} 2>&1 || echo nvidia-smi-failed")
        lines.append(section("gpuapps") + f"{GPU_APPS} 2>&1 || echo nvidia-smi-failed")
        lines.append(section("btime") + "grep '^btime' /proc/stat")
        # Only lines parse/dmesg.py turns into events, and only for the tree's PIDs (ints; fixed patterns):
        # a busy node's kernel log would otherwise dominate every refresh.
        pid_re = "|".join(str(int(p)) for p in sorted({*status_pids, *(roots or ())})) or "0"
        lines.append(section("dmesg") + "if d=$(dmesg 2>&1); then printf '%s\\n' \"$d\" | grep -E "
                     "'Killed process|oom-kill|oom_reaper|segfault at|traps: ' | "
                     f"grep -E '(\\[|process |pid=)({pid_re})([^0-9]|$)' | tail -n {KERNEL_TAIL_LINES}; "
                     "else echo \"dmesg-failed: $(printf '%s' \"$d\" | head -c 200)\"; fi")
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


def ps_rows(sections: Sections) -> tuple[ProcessInfo, ...]:
    try:
        return parse_ps(sections.get("ps")).processes
    except ParseError as exc:
        raise TargetError(f"agentless mode: cannot read the node's ps output: {exc}") from None


def subtree(rows: Sequence[ProcessInfo], roots: Sequence[int]) -> list[ProcessInfo]:
    """The roots and all their descendants, parents before children (ps --forest order)."""
    children: dict[int, list[ProcessInfo]] = {}
    by_pid = {r.pid: r for r in rows}
    for r in rows:
        children.setdefault(r.ppid, []).append(r)
    out: list[ProcessInfo] = []
    seen: set[int] = set()
    stack = [by_pid[p] for p in reversed(roots) if p in by_pid]
    while stack:
        row = stack.pop()
        if row.pid in seen:
            continue
        seen.add(row.pid)
        out.append(row)
        stack.extend(reversed(children.get(row.pid, [])))
    return out


def resolve_from_ps(specs: Sequence[str], rows: Sequence[ProcessInfo], ss_text: str, port: Optional[int]) -> Target:
    """TARGET specs against the node's ps and ss output; regexes run here, never on the node."""
    by_pid = {r.pid: r for r in rows}
    roots: list[TargetRoot] = []
    for spec in specs:
        if spec.isdecimal():
            if int(spec) not in by_pid:
                raise TargetError(f"no process with PID {spec} on the node")
            roots.append(TargetRoot(int(spec), f"PID {spec}"))
        elif spec.startswith("name:"):
            try:
                pattern = re.compile(spec[5:])
            except re.error as exc:
                raise TargetError(f"bad regex in {spec!r}: {exc}") from None
            found = [r for r in rows if pattern.search(" ".join(r.cmdline))]
            # a match whose parent matches too is part of that parent's tree: keep only the topmost
            pids = {r.pid for r in found}
            roots += [TargetRoot(r.pid, f"command line matches {spec[5:]!r}") for r in found if r.ppid not in pids]
            if not found:
                raise TargetError(f"no process on the node matches {spec!r}")
        elif spec.startswith(":") and spec[1:].isdecimal():
            listeners = [pid for s in parse_ss_listen(ss_text) if s.port == int(spec[1:]) for pid in s.pids]
            if not listeners:
                raise TargetError(f"nothing listens on {spec} on the node (ss -ltnp, as the ssh user)")
            roots += [TargetRoot(pid, f"listens on {spec}") for pid in dict.fromkeys(listeners)]
        else:
            raise TargetError(f"not a target: {spec!r} (expected PID, name:REGEX or :PORT)")
    if not specs:
        raise TargetError("agentless mode needs a TARGET (PID, name:REGEX or :PORT)")
    return Target(specs=tuple(specs), roots=tuple(roots))


_FROM_STATUS = ("name", "state", "threads", "rss_bytes", "rss_anon_bytes", "rss_file_bytes", "rss_shmem_bytes",
                "vms_bytes", "swap_bytes", "ctx_voluntary", "ctx_involuntary", "nspid")


@dataclass(frozen=True)
class CpuSample:
    """Each process's CPU ticks (start time, utime + stime) at one refresh: the next refresh's delta over
    the wall time between the two is its CPU % (what top shows), never a figure over a few milliseconds."""

    at: float
    ticks: dict[int, tuple[int, int]]
    clock_ticks: int = 100


MIN_CPU_INTERVAL_S = 0.5


def cpu_sample(sections: Sections, pids: Sequence[int], at: float) -> CpuSample:
    ticks = {}
    for pid in pids:
        fields = sections.get(f"stat {pid}").rpartition(")")[2].split()
        if len(fields) > 19 and fields[11].isdecimal() and fields[12].isdecimal() and fields[19].isdecimal():
            ticks[pid] = (int(fields[19]), int(fields[11]) + int(fields[12]))
    clk = sections.get("clk").strip()
    return CpuSample(at, ticks, int(clk) if clk.isdecimal() and int(clk) > 0 else 100)


def _cpu(pid: int, now: CpuSample, before: Optional[CpuSample]) -> Union[float, Unavailable]:
    if pid not in now.ticks:
        return Unavailable("agentless mode: /proc/PID/stat not read this refresh", "the next refresh reads it")
    if before is None or pid not in before.ticks or before.ticks[pid][0] != now.ticks[pid][0]:
        return Unavailable("first sample", "CPU % needs two refreshes")
    wall = now.at - before.at
    if wall < MIN_CPU_INTERVAL_S:
        return Unavailable(f"refreshes {wall:.2f} s apart: too short for a CPU %", "")
    return round((now.ticks[pid][1] - before.ticks[pid][1]) / now.clock_ticks / wall * 100, 1)


def _rollup(pid: int, text: str, now: float) -> dict[str, object]:
    """PSS and USS (Private_Clean + Private_Dirty) from /proc/PID/smaps_rollup, in bytes."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if len(parts) == 2 and parts[1] == "kB" and parts[0].isdecimal():
            values[key.strip()] = int(parts[0]) * 1024
    if "Pss" not in values:
        lowered = text.lower()
        if "permission denied" in lowered:
            why = Unavailable(f"agentless mode: permission denied reading /proc/{pid}/smaps_rollup",
                              "fix: ssh as the process's user or as root")
        elif "no such file" in lowered:
            why = Unavailable("agentless mode: no smaps_rollup (kernel older than 4.14, or the process exited)", "")
        else:
            why = Unavailable(f"agentless mode: smaps_rollup: {text.strip()[:80] or 'not read'}", "")
        return {"pss_bytes": why, "uss_bytes": why, "pss_read_at": why}
    uss = values.get("Private_Clean", 0) + values.get("Private_Dirty", 0)
    return {"pss_bytes": values["Pss"], "uss_bytes": uss, "pss_read_at": now}


def _process(row: ProcessInfo, status_text: Optional[str], sections: Optional[Sections] = None,
             cpu_now: Optional[CpuSample] = None, cpu_before: Optional[CpuSample] = None,
             now: float = 0.0) -> ProcessInfo:
    """ps's row, completed by /proc/PID/status, smaps_rollup and stat where they were read this refresh."""
    if status_text is None:
        return dataclasses.replace(row, rss_anon_bytes=NOT_YET, rss_file_bytes=NOT_YET, rss_shmem_bytes=NOT_YET,
                                   pss_bytes=NOT_YET, uss_bytes=NOT_YET, pss_read_at=NOT_YET, cpu_percent=NOT_YET)
    extra: dict[str, object] = {}
    if sections is not None:
        extra.update(_rollup(row.pid, sections.get(f"rollup {row.pid}"), now))
    if cpu_now is not None:
        extra["cpu_percent"] = _cpu(row.pid, cpu_now, cpu_before)
    info = dataclasses.replace(row, **extra)  # type: ignore[arg-type]
    try:
        status = parse_proc_status(status_text)
    except ParseError:
        return dataclasses.replace(info, exited=True, error=Unavailable(
            f"agentless mode: /proc/{row.pid}/status: {status_text.strip()[:80] or 'unreadable'}"))
    defaults = ProcessInfo(pid=0, ppid=0, name="?")
    changes = {f: getattr(status, f) for f in _FROM_STATUS if getattr(status, f) != getattr(defaults, f)}
    return dataclasses.replace(info, **changes)


def _probe(port: int, address: str, text: str, anyone: bool) -> PortProbe:
    rc, _, said = text.strip().partition(" ")
    if text.strip() == "nobash":
        return PortProbe(port, address, "error", "agentless mode: no bash on the node for /dev/tcp")
    if rc == "rc=0":
        return PortProbe(port, address, "accepted")
    if rc == "rc=124":
        probe = PortProbe(port, address, "timed out", f"no answer within {PROBE_TIMEOUT_S} s (backlog full or filtered)")
    elif "refused" in said.lower():
        probe = PortProbe(port, address, "refused", "nothing accepts connections on this port")
    else:
        detail = said.split(": ")[-1].strip() if said else rc
        probe = PortProbe(port, address, "error", detail[:120])
    if not anyone:
        probe = PortProbe(probe.port, probe.address, probe.result, probe.detail + "; no socket listens on this port")
    return probe


def _gpus(sections: Sections, pids: set[int]) -> GpuReport:
    text, apps_text = sections.get("gpu"), sections.get("gpuapps")
    if not text.strip() or "nvidia-smi-failed" in text:
        # what nvidia-smi said, without the marker line the command adds (internal, not for a reader)
        said = " ".join(line.strip() for line in text.splitlines() if line.strip() not in ("", "nvidia-smi-failed"))
        return GpuReport(source="none", error=Unavailable(f"agentless mode: nvidia-smi: {said[:120] or 'no output'}"))
    try:
        devices = parse_query_gpu_csv(text)
        apps = parse_compute_apps_csv(apps_text) if "nvidia-smi-failed" not in apps_text else ()
    except NvidiaSmiParseError as exc:
        return GpuReport(source="nvidia-smi", error=Unavailable(f"agentless mode: unexpected nvidia-smi output: {exc}"))
    by_uuid: dict[str, list[GpuProcess]] = {}
    for uuid, process in apps:
        # no NSpid mapping without reading every process: a PID of the node's tree is taken as is
        local = process.pid if process.pid in pids else None
        by_uuid.setdefault(uuid, []).append(dataclasses.replace(process, local_pid=local))
    devices = tuple(dataclasses.replace(d, processes=tuple(by_uuid.get(d.uuid, ())) if isinstance(d.uuid, str) else ())
                    for d in devices)
    return GpuReport(source="nvidia-smi", devices=devices)


def _kernel(sections: Sections, pids: set[int], started: Mapping[int, object]) -> KernelReport:
    text = sections.get("dmesg")
    if text.startswith("dmesg-failed:"):
        return KernelReport(error=Unavailable(f"agentless mode: {text.strip()[:200]}", "ssh as root, or sysctl kernel.dmesg_restrict=0"))
    btime = sections.get("btime").split()
    boot = float(btime[1]) if len(btime) == 2 and btime[1].isdecimal() else None
    # a line logged before the process now holding its PID started was about an earlier one (PIDs wrap)
    starts = {pid: float(t) for pid, t in started.items() if isinstance(t, (int, float))}
    return KernelReport(events=tuple(e for e in parse_kernel_lines(text, boot)
                                     if e.pid in pids and logged_while_alive(e, starts.get(e.pid))))


AGENTLESS_WAITS = Unavailable("agentless mode: the wait-for graph (who waits on whom) is read in agent mode only",
                              "drop --agentless: the agent reads /proc and sock_diag on the node")


def _log(path: str, stat_text: str, body: str, now: float) -> LogTail:
    parts = stat_text.split()
    if len(parts) != 2 or not all(p.isdecimal() for p in parts):
        return LogTail(path=path, error=Unavailable(f"agentless mode: {stat_text.strip()[:120] or 'cannot stat'}"))
    size, mtime = int(parts[0]), int(parts[1])
    body = body[:-1] if body.endswith("|") else body  # the '|' sentinel keeps a missing final newline visible
    text_lines = body.split("\n")
    partial = text_lines.pop() if text_lines else ""
    if size > LOG_TAIL_BYTES and text_lines:
        text_lines = text_lines[1:]  # the first line was cut by tail -c
    classifier = LineClassifier()  # the same levels (and traceback runs) as a local LogFollower gives
    lines = tuple(LogLine(t, seen_at=now, level=classifier.level(t)) for t in text_lines)
    return LogTail(path=path, lines=lines, partial=partial, size_bytes=size,
                   seconds_since_last_byte=max(now - mtime, 0.0), last_byte_at=float(mtime))


def snapshot_clock(sections: Sections) -> float:
    """The node's own clock at the end of the script (`date +%s.%N`), else ours."""
    text = sections.get("now").strip()
    return float(text) if re.fullmatch(r"\d+(\.\d+)?", text) else time.time()


def build_snapshot(host: str, target: Target, options: CollectOptions, sections: Sections,
                   status_pids: Sequence[int], started: float, duration_ms: float,
                   cpu_before: Optional[CpuSample] = None) -> Snapshot:
    rows = subtree(ps_rows(sections), [r.pid for r in target.roots])
    read = set(status_pids)
    now = snapshot_clock(sections)
    cpu_now = cpu_sample(sections, status_pids, now) if cpu_before is not None or status_pids else None
    processes = tuple(_process(r, sections.get(f"status {r.pid}") if r.pid in read else None, sections,
                               cpu_now, cpu_before, now) for r in rows)
    try:
        system = parse_free(sections.get("free"), unit=1)
    except ParseError as exc:
        system = SystemMemory(total_bytes=Unavailable(f"agentless mode: free -b: {exc}"))
    live = [p for p in processes if not p.exited]

    def total(attr: str) -> Maybe[int]:
        values = [getattr(p, attr) for p in live]
        known = [v for v in values if isinstance(v, int)]
        return sum(known) if values and len(known) == len(values) else Unavailable("agentless mode: not read for every process")

    target_mem = TargetMemory(processes=len(live), rss_sum_bytes=total("rss_bytes"), pss_sum_bytes=total("pss_bytes"),
                              uss_sum_bytes=total("uss_bytes"), anon_sum_bytes=total("rss_anon_bytes"),
                              file_sum_bytes=total("rss_file_bytes"), shmem_sum_bytes=total("rss_shmem_bytes"))
    pids = {p.pid for p in processes}
    listening = tuple(ListeningSocket(pid, s.address, s.port, s.family)
                      for s in parse_ss_listen(sections.get("ss")) for pid in s.pids if pid in pids)
    logs = tuple(_log(path, sections.get(f"logstat {i}"), sections.get(f"log {i}"), now)
                 for i, path in enumerate(options.logs))
    gpus = _gpus(sections, pids)
    processes = join_gpus_to_processes(processes, gpus)
    return Snapshot(
        host=host, taken_at=started, interval_s=options.interval_s, target=target, processes=processes,
        memory=MemoryReport(system=system, target=target_mem, smaps_budget_ms=0.0), logs=logs,
        ports=PortReport(listening=listening, probes=tuple(
            _probe(int(options.port), a, sections.get(f"probe {a}"), any(s.port == options.port for s in listening))
            for a in ("127.0.0.1", "::1") if f"probe {a}" in sections.parts) if options.port else ()),
        gpus=gpus, kernel=_kernel(sections, {*pids, *status_pids, *(r.pid for r in target.roots)},
                                  {p.pid: p.start_time for p in processes}),
        waits_source=WaitSource(error=AGENTLESS_WAITS),
        sources=(SourceStatus("ssh", "ok", duration_ms, "agentless mode, one script per refresh"),
                 SourceStatus("mode", "ok", 0.0, BLIND_SPOTS)),
    )


def agentless_mappings_script(marker: str, pid: int, target_pids: Sequence[int]) -> str:
    """`cat /proc/PID/smaps` and the other targets' maps (for "shared by"), cut by the marker; the first
    line says whether smaps could be read and, if not, cat's own error (permission, no such process)."""
    pid = int(pid)
    lines = [f"if s=$(cat /proc/{pid}/smaps 2>&1); then echo ok; else echo \"failed $s\" | head -c 300; echo; fi",
             f"echo {marker}smaps; cat /proc/{pid}/smaps 2>/dev/null"]
    for other in dict.fromkeys(int(p) for p in target_pids):
        if other != pid:
            lines.append(f"echo; echo {marker}maps {other}; cat /proc/{other}/maps 2>/dev/null")
    lines.append(f"echo; echo {marker}end")
    return "\n".join(lines) + "\n"


def agentless_mappings(pid: int, output: str, marker: str) -> tuple[FileMapping, ...] | Unavailable:
    """Parse agentless_mappings_script's output with the same parser a local read uses."""
    head = output.partition("\n")[0]
    if head.startswith("failed"):
        lowered = head.lower()
        if "permission denied" in lowered:
            return Unavailable(f"permission denied reading /proc/{pid}/smaps on the node",
                               "fix: ssh as the process's user or as root")
        if "no such file" in lowered:
            return Unavailable(f"no such process {pid} on the node", "it has exited")
        return Unavailable(f"cannot read /proc/{pid}/smaps on the node: {head[len('failed '):].strip()[:160]}", "")
    sections = split_sections(output, marker)
    if "end" not in sections.parts:
        return Unavailable("the mappings script on the node did not finish", "")
    others = [text for name, text in sections.parts.items() if name.startswith("maps ")]
    return tuple(count_sharers(parse_smaps(sections.get("smaps")), others))

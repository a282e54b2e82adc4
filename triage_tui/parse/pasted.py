"""A mixed paste (an issue body, a chat message) → the parts triage understands, as one snapshot.

`split_paste` finds the parts line by line (ps, free, /proc/PID/status, nvidia-smi, py-spy text or
JSON, faulthandler, kernel lines, curl, a log tail); everything else is reported as ignored.
`evidence_from_paste` builds a Snapshot and a StackCapture from the parts it could parse, and says
for each part what it was used as or why it was not.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Optional

from ..model.snapshot import (
    GpuReport,
    KernelEvent,
    KernelReport,
    MemoryReport,
    PortProbe,
    PortReport,
    ProcessInfo,
    Snapshot,
    SystemMemory,
    TargetMemory,
)
from ..model.stacks import ProcessStacks
from .signal_lexicon import matches_any, scan_line
from ..model.unavailable import Unavailable, is_known
from . import curl_text, dmesg, faulthandler, free, gdb_text, kernel_stack, log_text, nvidia_smi, proc_status, ps, pyspy_text, pyspy_top
from . import system_text
from .prose_figures import ProseFigure, figures_in
from .torchrun_summary import failures
from .text_errors import ParseError

_PROMPT = re.compile(r"^\s*+(?:[\w.-]{1,64}@[\w.-]{1,64}[^\s$#]{0,200}\s{0,4})?[$#] (\S.*)$")
_FENCE = re.compile(r"^\s*+(```|~~~)")
_STATUS_KEY = re.compile(r"^[A-Za-z_()]{1,40}:\s")
# what a chat or a Markdown quote puts before the pasted text on each line (removed before reading):
# `> `, `[10:32] alice: `, `[10:32 AM] <alice> `, `10:32:05 alice: ` (a log level is never taken for a name)
_QUOTE = re.compile(r"^(?:\s{0,3}>)+ ?")
# torch.distributed prefixes each rank's stderr line (`[rank0]: Traceback ...`; torchrun --tee: `[default0]:`)
_RANK_PREFIX = re.compile(r"^\[(?:rank|default)\d{1,6}\]:")
_CHAT = re.compile(r"^\[?\d{1,2}:\d\d(?::\d\d)?(?:\s?[AaPp][Mm])?\]?\s{1,4}(?:<[\w.@ -]{1,40}>|(?!(?:INFO|WARN|WARNING|ERROR|DEBUG|"
                   r"CRITICAL|FATAL|NOTICE)\b)[A-Za-z][\w.@-]{0,39}:)\s")


@dataclass(frozen=True)
class PastePart:
    kind: str  # ps | free | proc-status | nvidia-smi | nvidia-smi-q | nvidia-smi-dmon | gpu-csv | vmstat | ss | py-spy
    #            | py-spy-json | faulthandler | gdb | pystack | kernel-stack | py-spy-top
    #            | kernel | curl | traceback | log | text | command
    first_line: int  # 1-based, inclusive
    last_line: int
    text: str
    used: bool = False
    used_as: str = ""  # what it became: "9 processes", "system memory", ...
    note: str = ""  # why it was ignored, or what failed


@dataclass(frozen=True)
class PasteEvidence:
    parts: tuple[PastePart, ...]
    snapshot: Snapshot
    stacks: tuple[ProcessStacks, ...]  # raw: the diagnosis side classifies and groups them
    signal_lines: tuple[tuple[int, str], ...] = ()  # (line number, text) of every line outside tables and logs
    prose: tuple[ProseFigure, ...] = ()  # figures quoted in sentences ("GPU util 100 % at 19 W")
    vmstat: Optional["system_text.VmstatFigures"] = None
    connecting: tuple[str, ...] = ()  # peers a socket is still trying to reach (ss / netstat SYN-SENT)


# ---------------------------------------------------------------- splitting
def _run(lines: list[str], i: int, keep: Callable[[str], bool], blank_ok: bool = False) -> int:
    j = i + 1
    while j < len(lines):
        line = lines[j]
        if not line.strip():
            nxt = next((k for k in range(j, len(lines)) if lines[k].strip()), None)
            if blank_ok and nxt is not None and keep(lines[nxt]) and not _PROMPT.match(lines[nxt]):
                j = nxt
                continue
            break
        if _FENCE.match(line) or (_PROMPT.match(line) and not _is_heading(line)) or not keep(line):
            break
        j += 1
    return j


def _nvsmi(lines: list[str], i: int) -> Optional[int]:
    window = "\n".join(lines[i:i + 3])
    if lines[i].lstrip().startswith(("+-", "| NVIDIA-SMI")) and "NVIDIA-SMI" in window:
        return _run(lines, i, lambda s: s.lstrip().startswith(("|", "+")), blank_ok=True)
    return None


def _json(lines: list[str], i: int) -> Optional[int]:
    if not lines[i].lstrip().startswith(("[", "{")):
        return None
    # a bounded window (never the whole rest of the paste for each line that starts with a bracket)
    rest = "\n".join(lines[i:i + 20_000])[:2_000_000]
    if '"frames"' not in rest[:200_000]:
        return None
    try:
        obj, end = json.JSONDecoder().raw_decode(rest.lstrip())
    except (ValueError, RecursionError):
        return None
    blob = json.dumps(obj)[:5000]
    if '"frames"' not in blob or ("thread_id" not in blob and "thread_name" not in blob):
        return None
    consumed = rest[: len(rest) - len(rest.lstrip()) + end]
    return i + consumed.count("\n") + 1


def _starts(lines: list[str], i: int) -> Optional[tuple[str, int]]:
    line = lines[i]
    s = line.strip()
    end = _nvsmi(lines, i)
    if end:
        return "nvidia-smi", end
    if system_text.is_query_start(line):
        return "nvidia-smi-q", _run(lines, i, lambda t: t.startswith((" ", "\t", "=")) or bool(system_text._Q_GPU.match(t.strip()))
                                    or ":" in t, blank_ok=True)
    if system_text.DMON_HEADER.match(s):
        return "nvidia-smi-dmon", _run(lines, i, lambda t: t.strip().startswith("#") or t.strip()[:1].isdigit())
    if system_text.VMSTAT_HEADER.match(line) or s.startswith("procs ---"):
        return "vmstat", _run(lines, i, lambda t: bool(system_text.VMSTAT_HEADER.match(t)) or t.split()[:1] != []
                              and t.split()[0].isdecimal())
    if system_text.is_socket_line(line) or s.startswith(("State ", "Netid ", "Proto Recv-Q", "Active Internet")):
        return "ss", _run(lines, i, lambda t: system_text.is_socket_line(t) or t.lstrip().startswith(("State ", "Proto ")))
    if nvidia_smi.is_query_gpu_header(line):
        return "gpu-csv", _run(lines, i, lambda t: "," in t)
    if ps.is_ps_header(line):
        return "ps", _run(lines, i, lambda t: bool(t.split()) and not ps.is_ps_header(t))
    if free.is_free_header(line):
        return "free", _run(lines, i, lambda t: t.strip().split(":")[0] in ("Mem", "Swap", "-/+ buffers/cache", "Total", "Low", "High"))
    if s.startswith(("Name:", "Umask:", "State:")) and any(x.startswith("State:") for x in lines[i:i + 6]):
        return "proc-status", _run(lines, i, lambda t: bool(_STATUS_KEY.match(t)))
    if pyspy_text.PROCESS.match(s) or pyspy_text.THREAD.match(s):
        return "py-spy", _run(lines, i, lambda t: t.startswith((" ", "\t", "Process ", "Thread ", "Python v")), blank_ok=True)
    if faulthandler.THREAD.match(s) or s.startswith("Fatal Python error") or faulthandler.TIMEOUT.match(s) \
            or faulthandler.STACK.match(s):
        return "faulthandler", _run(lines, i, _faulthandler_like, blank_ok=True)
    if gdb_text.GDB_THREAD.match(s) or (gdb_text.GDB_FRAME.match(s) and s.startswith("#0 ")) or s == gdb_text.PY_BT:
        return "gdb", _run(lines, i, _gdb_like, blank_ok=True)
    if pyspy_top.is_start(s):
        return "py-spy-top", _run(lines, i, pyspy_top.is_line, blank_ok=True)
    if kernel_stack.LINE.match(s):
        return "kernel-stack", _run(lines, i, lambda t: bool(kernel_stack.LINE.match(t.strip())))
    if gdb_text.MODULE_FRAME.match(s):
        return "gdb", _run(lines, i, lambda t: bool(gdb_text.MODULE_FRAME.match(t.strip())))
    if gdb_text.PYSTACK_THREAD.match(s):
        return "pystack", _run(lines, i, lambda t: t.startswith((" ", "\t")) or bool(gdb_text.PYSTACK_THREAD.match(t.strip())),
                               blank_ok=True)
    end = _json(lines, i)
    if end:
        return "py-spy-json", end
    if s.startswith("Traceback (most recent call last)"):
        return "traceback", _run(lines, i, _traceback_like, blank_ok=True)
    if _kernel_like(line):
        return "kernel", _run(lines, i, _kernel_like)
    if curl_text.CURL_LINE.match(line):
        return "curl", _run(lines, i, lambda t: bool(curl_text.CURL_LINE.match(t)) or t.lstrip().startswith(("{", '"')))
    if log_text.LOG_LINE.match(line) or matches_any(line):
        return "log", _run(lines, i, lambda t: not _other_start(lines, t))
    return None


def _faulthandler_like(line: str) -> bool:
    s = line.strip()
    return line.startswith((" ", "\t", "Thread 0x", "Current thread", "Fatal Python", "Extension modules", "Stack (")) \
        or bool(faulthandler.FRAME.match(s)) or bool(faulthandler.TIMEOUT.match(s))


def _gdb_like(line: str) -> bool:
    s = line.strip()
    return (s.startswith(("#", "Thread ", "File ", "[")) or line.startswith((" ", "\t")) or s == gdb_text.PY_BT
            or bool(gdb_text.GDB_THREAD.match(s)))


def _traceback_like(line: str) -> bool:
    s = line.strip()
    return line.startswith((" ", "\t")) or s.startswith(("During handling", "The above exception", "Traceback (most")) or \
        bool(_EXCEPTION.match(s))


_EXCEPTION = re.compile(r"^[\w.]{1,120}(?:Error|Exception|Interrupt|Exit|Warning)\b")


# dmesg, dmesg -T, journalctl -k, and dmesg -H / --reltime (`[  +0.000316] msg`, a minute's first line `[Jan21 10:00]`)
_KERNEL_STAMP = re.compile(r"^\s*\[\s*\+?\d+\.\d+\]|^\s*\[[A-Z][a-z]{2} ?\d{1,2} \d\d:\d\d\]|^\s*\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\]|\bkernel: ")


def _kernel_like(line: str) -> bool:
    return bool(_KERNEL_STAMP.search(line)) or dmesg.parse_kernel_line(line) is not None or "invoked oom-killer" in line


def _other_start(lines: list[str], line: str) -> bool:
    """True when `line` would start a part other than a log (so a log run stops there)."""
    found = _starts([line], 0)
    return found is not None and found[0] != "log"


_COMMANDS = frozenset({"ps", "free", "top", "htop", "dmesg", "journalctl", "nvidia-smi", "cat", "py-spy", "pystack",
                       "gdb", "curl", "ss", "netstat", "vmstat", "df", "du", "ls", "grep", "tail", "kill", "strace",
                       "python", "python3", "torchrun", "docker", "kubectl", "uptime", "lsof", "sudo", "env"})


def _is_heading(line: str) -> bool:
    """`# Title` is a Markdown heading unless its first word is a command a root prompt would run."""
    s = line.lstrip()
    if not s.startswith("#") or s.startswith("#!"):
        return False
    words = s.lstrip("#").split()
    return bool(words) and words[0] not in _COMMANDS and not words[0].startswith(("./", "/"))


def unwrap(line: str) -> str:
    """The line without what a Markdown quote or a chat client put before it."""
    if line[:1] in (">", " ") and _QUOTE.match(line):
        line = _QUOTE.sub("", line, count=1)
    if line[:1].isdigit() or line[:1] == "[":
        m = _CHAT.match(line)
        if m:
            line = line[m.end():]
        elif line.startswith(("[rank", "[default")):
            r = _RANK_PREFIX.match(line)
            if r:  # the prefix and the one space after it: the line's own indentation stays
                rest = line[r.end():]
                line = rest[1:] if rest.startswith(" ") else rest
    return line


def split_paste(text: str) -> list[PastePart]:
    """The parts of a paste, in order, recognised by their content (not by a header or a fence): a
    Markdown quote and chat prefixes are removed first, line numbers kept. Prose and unknown lines come
    back as kind "text"."""
    lines = [unwrap(ln) for ln in text.replace("\r\n", "\n").split("\n")]
    parts: list[PastePart] = []
    loose: list[int] = []

    def flush() -> None:
        if loose:
            parts.append(PastePart("text", loose[0] + 1, loose[-1] + 1, "\n".join(lines[k] for k in loose)))
            loose.clear()

    i = 0
    ps_header: Optional[str] = None  # the header a `ps ... | grep` command line printed before its pipe removed it
    while i < len(lines):
        line = lines[i]
        if not line.strip() or _FENCE.match(line):
            flush()
            i += 1
            continue
        m = _PROMPT.match(line)
        if m and _is_heading(line):
            m = None
        if m:
            flush()
            parts.append(PastePart("command", i + 1, i + 1, m.group(1).strip()))
            ps_header = ps.header_from_command(m.group(1).strip())
            i += 1
            continue
        if ps_header is not None and not ps.is_ps_header(line) and ps.is_headerless_row(ps_header, line):
            flush()
            j = i + 1
            while j < len(lines) and lines[j].strip() and ps.is_headerless_row(ps_header, lines[j]):
                j += 1
            parts.append(PastePart("ps", i + 1, j, "\n".join([ps_header] + lines[i:j]), note="header from the command line"))
            ps_header = None
            i = j
            continue
        ps_header = None
        found = _starts(lines, i)
        if found is None:
            loose.append(i)
            i += 1
            continue
        flush()
        kind, end = found
        parts.append(PastePart(kind, i + 1, end, "\n".join(lines[i:end])))
        i = end
    flush()
    return parts


# ---------------------------------------------------------------- building evidence
def _pyspy_json(text: str) -> tuple[ProcessStacks, ...]:
    from .pyspy_json import parse_pyspy_json  # the stacks part's parser
    return tuple(p for p in parse_pyspy_json(text) if p.threads)


def _gpu(text: str, table: bool) -> GpuReport:
    """The collector's nvidia-smi readers: the table, or a pasted CSV whose header names its fields."""
    if table:
        return nvidia_smi.parse_nvidia_smi_table(text)
    return nvidia_smi.parse_query_gpu_csv_with_header(text)


def _merge(old: ProcessInfo, new: ProcessInfo) -> ProcessInfo:
    """Fill `old` with every figure `new` knows (a /proc status adds the memory split to a ps row)."""
    changes = {}
    for field in ("rss_bytes", "rss_anon_bytes", "rss_file_bytes", "rss_shmem_bytes", "vms_bytes", "threads",
                  "ctx_voluntary", "ctx_involuntary", "cpu_percent", "cpu_time_s", "major_faults", "wchan"):
        value = getattr(new, field)
        if is_known(value):
            changes[field] = value
    if new.state != "?":
        changes["state"] = new.state
    if new.ppid and not old.ppid:
        changes["ppid"] = new.ppid
    if new.nspid:
        changes["nspid"] = new.nspid
    return replace(old, **changes)


def evidence_from_paste(text: str, now: float = 0.0) -> PasteEvidence:
    parts = split_paste(text)
    processes: dict[int, ProcessInfo] = {}
    system: Optional[SystemMemory] = None
    gpus: Optional[GpuReport] = None
    logs: list[str] = []
    events: list[KernelEvent] = []
    probes: list[PortProbe] = []
    stacks: list[ProcessStacks] = []
    prose: list[ProseFigure] = []
    signal_lines: list[tuple[int, str]] = []
    vmstat: Optional[system_text.VmstatFigures] = None
    connects: list[str] = []
    unit = 1024
    command = ""  # the last shell command line pasted: `cat /proc/PID/stack` names the stack's PID
    done: list[PastePart] = []
    for part in parts:
        used_as, note = "", ""
        try:
            if part.kind == "command":
                flags = [f for f in part.text.split()[1:] if f in free.UNIT_FLAGS]
                if part.text.split()[0] == "free" and flags:
                    unit = free.UNIT_FLAGS[flags[-1]]
                note = "a shell command line (context only)"
                command = part.text
            elif part.kind == "ps":
                table = ps.parse_ps(part.text)
                for p in table.processes:
                    processes[p.pid] = _merge(processes[p.pid], p) if p.pid in processes else p
                how = "ps, its header taken from the command line above" if part.note else "ps"
                used_as = f"{len(table.processes)} processes ({how})" + (f", {len(table.skipped)} lines skipped" if table.skipped else "")
            elif part.kind == "free":
                system = free.parse_free(part.text, unit)
                used_as = "system memory (free)"
            elif part.kind == "proc-status":
                p = proc_status.parse_proc_status(part.text)
                processes[p.pid] = _merge(processes[p.pid], p) if p.pid in processes else p
                used_as = f"state and memory of PID {p.pid} (/proc/PID/status)"
            elif part.kind in ("nvidia-smi", "gpu-csv"):
                gpus = _gpu(part.text, part.kind == "nvidia-smi")
                used_as = f"{len(gpus.devices)} GPUs ({part.kind})"
            elif part.kind in ("nvidia-smi-q", "nvidia-smi-dmon"):
                gpus = system_text.parse_query(part.text) if part.kind == "nvidia-smi-q" else system_text.parse_dmon(part.text)
                used_as = f"{len(gpus.devices)} GPUs ({part.kind.replace('-q', ' -q').replace('-dmon', ' dmon')})" \
                    if gpus.devices else ""
                note = "" if gpus.devices else "no GPU figures found"
            elif part.kind == "vmstat":
                vm = system_text.parse_vmstat(part.text)
                if vm is not None:
                    vmstat = vm
                    used_as = f"vmstat: {vm.runnable} runnable, {vm.blocked} blocked in D" + (
                        f", {vm.iowait_percent} % iowait" if vm.iowait_percent is not None else "")
                else:
                    note = "vmstat without a data row"
            elif part.kind == "ss":
                peers = system_text.connecting(part.text)
                connects.extend(peers)
                used_as = f"sockets (ss/netstat): {len(peers)} still connecting" + (f" to {', '.join(peers[:3])}" if peers else "")
            elif part.kind in ("py-spy", "faulthandler", "py-spy-json", "gdb", "pystack"):
                fn = {"py-spy": pyspy_text.parse_pyspy_text, "faulthandler": faulthandler.parse_faulthandler,
                      "py-spy-json": _pyspy_json, "gdb": gdb_text.parse_gdb, "pystack": gdb_text.parse_pystack}[part.kind]
                found = fn(part.text)
                stacks.extend(found)
                used_as = f"stacks of {len(found)} process(es), {sum(len(p.threads) for p in found)} threads ({part.kind})"
            elif part.kind == "py-spy-top":
                found = pyspy_top.parse_pyspy_top(part.text)
                top = found[0].threads
                used_as = (f"py-spy top: {len(top)} function(s) with own time (a flat profile, not stacks), "
                           f"first {top[0].frames[0].function}")
                stacks.extend(found)
            elif part.kind == "kernel-stack":
                found = kernel_stack.parse_kernel_stack(part.text, command)
                stacks.extend(found)
                who = f"PID {found[0].pid}" if found[0].pid else "a thread"
                used_as = f"the kernel stack of {who} (/proc/PID/stack), waiting in {found[0].threads[0].kernel_wchan}"
            elif part.kind == "kernel":
                found_events = dmesg.parse_kernel_lines(part.text)
                events.extend(found_events)
                signal_lines.extend(enumerate(part.text.split(chr(10)), part.first_line))
                signals = sorted({sig.id for ln in part.text.split(chr(10)) for sig in scan_line(ln)})
                used_as = f"kernel log, {len(found_events)} OOM-kill/segfault event(s)" + (
                    f" ({', '.join(signals)})" if signals else "")
            elif part.kind == "curl":
                found_probes = curl_text.parse_curl(part.text)
                # curl -v's reply lines (`< HTTP/1.1 200 OK`) may land in a part of their own: they answer the
                # connection the previous curl part made, so the two read as one probe that was answered
                status = next((ln for ln in part.text.splitlines() if curl_text.status_line(ln)), "")
                if status and not found_probes and probes and probes[-1].detail == "connected":
                    code = curl_text.status_line(status)
                    probes[-1] = dataclasses.replace(probes[-1], detail=f"HTTP {code}")
                    found_probes = [probes[-1]]
                else:
                    probes.extend(found_probes)
                used_as = f"{len(found_probes)} port probe(s) (curl)" if found_probes else ""
                note = "" if found_probes else "curl output without a connect result"
            elif part.kind in ("log", "traceback"):
                logs.append(part.text)
                signals = sorted({sig.id for ln in part.text.split(chr(10)) for sig in scan_line(ln)})
                what = "a Python traceback" if part.kind == "traceback" else "log lines"
                died = failures(part.text)
                if died:
                    what = "a torchrun failure summary (" + "; ".join(f.text() for f in died[:3]) + ")"
                used_as = f"{what}, {part.text.count(chr(10)) + 1} lines" + (f" ({', '.join(signals)})" if signals else "")
            else:
                numbered = list(enumerate(part.text.split(chr(10)), part.first_line))
                found_prose = figures_in(numbered)
                prose.extend(found_prose)
                signal_lines.extend(numbered)
                signals = sorted({sig.id for _, ln in numbered for sig in scan_line(ln)})
                bits = [f"{len(found_prose)} figure(s) quoted in prose ({', '.join(sorted({f.kind for f in found_prose}))})"
                        if found_prose else "", f"signal words ({', '.join(signals)})" if signals else ""]
                used_as = "; ".join(b for b in bits if b)
                note = "" if used_as else "not a format triage reads"
        except (ParseError, ValueError, KeyError, IndexError) as exc:
            note = f"could not parse: {exc}"
        done.append(replace(part, used=bool(used_as), used_as=used_as, note=note))
    return PasteEvidence(tuple(done), _snapshot(now, processes, system, gpus, logs, events, probes, done),
                         tuple(stacks), tuple(signal_lines), tuple(prose), vmstat, tuple(connects))


def _snapshot(now, processes, system, gpus, logs, events, probes, parts) -> Snapshot:
    procs = tuple(processes.values())
    memory = MemoryReport(system=system or SystemMemory(), target=_target_memory(procs))
    kinds = {p.kind for p in parts if p.used}
    kernel = KernelReport(events=tuple(events)) if "kernel" in kinds else KernelReport(
        error=Unavailable("no kernel log in the pasted text", "paste `dmesg -T | tail -50`"))
    tails = (replace(log_text.parse_log_text("\n".join(logs)), path="pasted log"),) if logs else ()
    return Snapshot(host="pasted text", taken_at=now, processes=procs, memory=memory, logs=tails,
                    ports=PortReport(probes=tuple(probes)), gpus=gpus or GpuReport(error=Unavailable("no nvidia-smi in the text")),
                    kernel=kernel)


def _target_memory(procs: tuple[ProcessInfo, ...]) -> TargetMemory:
    def total(field: str):
        values = [getattr(p, field) for p in procs if is_known(getattr(p, field))]
        return sum(values) if values else Unavailable("not in the pasted text")
    return TargetMemory(processes=len(procs), rss_sum_bytes=total("rss_bytes"), anon_sum_bytes=total("rss_anon_bytes"),
                        file_sum_bytes=total("rss_file_bytes"), shmem_sum_bytes=total("rss_shmem_bytes"),
                        pss_sum_bytes=Unavailable("PSS is not in ps or free output"))

"""The parts of a paste → one Snapshot and the raw stacks, saying for each part what it was used as.

`evidence_from_paste` runs each part's reader (the same parsers the collectors and the agentless SSH path
use) and records on the part what it became ("9 processes (ps)") or why it was not used.
"""

from __future__ import annotations

import dataclasses
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
from ..model.unavailable import Unavailable, is_known
from . import curl_text, dmesg, faulthandler, free, gdb_text, kernel_stack, log_text, nvidia_smi, proc_status, ps, pyspy_text, pyspy_top
from . import python_code, system_text
from .paste_split import PastePart, split_paste
from .interrupted_traceback import IPYTHON_CUT, failed_too, interrupted_stacks
from .prose_figures import ProseFigure, figures_in
from .prose_lexicon import told_in
from .prose_symptoms import SYMPTOMS
from .signal_lexicon import Signal, scan_line
from .text_errors import ParseError
from .torchrun_summary import failures

SYMPTOM = SYMPTOMS[0].id


@dataclass(frozen=True)
class PasteEvidence:
    parts: tuple[PastePart, ...]
    snapshot: Snapshot
    stacks: tuple[ProcessStacks, ...]  # raw: the diagnosis side classifies and groups them
    signal_lines: tuple[tuple[int, str], ...] = ()  # (line number, text) of every line outside tables and logs
    told: tuple[tuple[int, str, Signal], ...] = ()  # (line number, words, row): mechanisms told in words (prose_lexicon)
    prose: tuple[ProseFigure, ...] = ()  # figures quoted in sentences ("GPU util 100 % at 19 W")
    vmstat: Optional["system_text.VmstatFigures"] = None
    connecting: tuple[str, ...] = ()  # peers a socket is still trying to reach (ss / netstat SYN-SENT)
    code: tuple[tuple[int, tuple[str, ...]], ...] = ()  # (first line, calls on imported modules) of each script part


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
    told: list[tuple[int, str, Signal]] = []
    vmstat: Optional[system_text.VmstatFigures] = None
    connects: list[str] = []
    scripts: list[tuple[int, tuple[str, ...]]] = []
    code_names: dict[str, str] = {}  # what the pasted scripts import so far (a fence's blank lines split it in parts)
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
                signals = _signal_ids(part, told)
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
            elif part.kind == "traceback" and interrupted_stacks(part.text):
                # Ctrl-C on a hung program: where it waited, not a failure (no log line, no traceback signal)
                found = interrupted_stacks(part.text, 1 + sum(1 for p in stacks if p.source == "traceback"))
                stacks.extend(found)
                how = ("an IPython traceback shown without its exception" if all(p.name == IPYTHON_CUT for p in found)
                       else "a traceback ended by Ctrl-C (KeyboardInterrupt)")
                used_as = (f"{how}: the stack where {len(found)} process(es) waited, innermost "
                           f"{found[0].threads[0].frames[0].function}")
                if failed_too(part.text):  # another exception beside the interrupt (a worker that died): a failure too
                    logs.append(part.text)
                    signals = _signal_ids(part, told)
                    used_as += f"; and a failure ({', '.join(signals)})" if signals else "; and a failure"
            elif part.kind in ("log", "traceback"):
                logs.append(part.text)
                signals = _signal_ids(part, told)
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
                signals = _signal_ids(part, told)
                # the reporter's statement of the symptom is said apart from mechanisms' words: it ranks no cause
                symptom = [x for x in signals if x == SYMPTOM]
                signals = [x for x in signals if x != SYMPTOM]
                bits = [f"{len(found_prose)} figure(s) quoted in prose ({', '.join(sorted({f.kind for f in found_prose}))})"
                        if found_prose else "", f"signal words ({', '.join(signals)})" if signals else "",
                        f"the symptom told in words ({SYMPTOM}: seen, not why)" if symptom else "",
                        _script(part, code_names, scripts)]
                used_as = "; ".join(b for b in bits if b)
                note = "" if used_as else "not a format triage reads"
        except (ParseError, ValueError, KeyError, IndexError) as exc:
            note = f"could not parse: {exc}"
        done.append(replace(part, used=bool(used_as), used_as=used_as, note=note))
    done = _told_over_lines(done, told)
    return PasteEvidence(tuple(done), _snapshot(now, processes, system, gpus, logs, events, probes, done),
                         tuple(stacks), tuple(signal_lines), tuple(told), vmstat=vmstat, prose=tuple(prose),
                         connecting=tuple(connects), code=tuple(scripts))


def _script(part: PastePart, names: dict[str, str], code: list[tuple[int, tuple[str, ...]]]) -> str:
    """A part that is Python code (a reproducer pasted instead of its output): what it was read as, its calls on the
    modules the paste imports added to `code`."""
    lines = part.text.split(chr(10))
    if not python_code.is_code(lines, tuple(names)):
        return ""
    names.update(python_code.imported(lines))
    found = python_code.calls(lines, names)
    code.append((part.first_line, found))
    return "Python code (a script, not its output)" + (f" calling {', '.join(found[:6])}" if found else "")


def _signal_ids(part: PastePart, told: list[tuple[int, str, Signal]]) -> list[str]:
    """The lexicon's ids on the part's lines and the prose rows told in them (added to `told`), for its used_as."""
    numbered = list(enumerate(part.text.split(chr(10)), part.first_line))
    hits = told_in(numbered, paragraph=False)
    known = {sig.id for _, _, sig in told}
    told.extend(h for h in hits if h[2].id not in known)  # the first line that tells it is the one quoted
    return sorted({sig.id for _, ln in numbered for sig in scan_line(ln)} | {sig.id for _, _, sig in hits})


def _told_over_lines(parts: list[PastePart], told: list[tuple[int, str, Signal]]) -> list[PastePart]:
    """People wrap their sentences: each run of adjacent prose lines (text parts, and the lines of log parts that are
    no log record: a sentence with a signal word starts a log part) is read again as one paragraph, for prose rows no
    single line carried. A hit is added to `told` and named in the used_as of the part its words start in."""
    runs: list[list[tuple[int, str]]] = []
    for part in parts:
        if part.kind not in ("text", "log"):
            continue
        for no, line in enumerate(part.text.split(chr(10)), part.first_line):
            if part.kind == "log" and log_text.LOG_LINE.match(line) or not line.strip():
                continue
            if runs and runs[-1][-1][0] == no - 1:
                runs[-1].append((no, line))
            else:
                runs.append([(no, line)])
    out = list(parts)
    for run in runs:
        if len(run) < 2:
            continue
        for no, words, sig in told_in(run, paragraph=True):
            k = next(i for i, p in enumerate(out) if p.first_line <= no <= p.last_line)
            if sig.id in out[k].used_as:  # that part's own lines already told it
                continue
            if sig.id not in {s.id for _, _, s in told}:
                told.append((no, words, sig))
            p = out[k]
            said = f"told in words over several lines ({sig.id})"
            out[k] = replace(p, used=True, used_as=f"{p.used_as}; {said}" if p.used_as else said,
                             note="" if not p.used_as else p.note)
    return out


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

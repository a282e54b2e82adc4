"""Observations: facts derived from the history of snapshots, each with its figures and source.

Pure functions over `Snapshot`s (oldest first). Stack observations live in stack_observations.py;
log-line classification in log_signals.py. Nothing here reads the machine.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from ..model.snapshot import Observation, ProcessInfo, Snapshot
from ..model.unavailable import is_known
from .figures import fmt_bytes, fmt_s, quote
from .log_signals import classify_last_line, scan_log_lines


@dataclass(frozen=True)
class Thresholds:
    """When a fact counts. Live scenarios shrink the seconds; ticks never enter these."""

    idle_after_s: float = 10.0  # no CPU growth this long: idle
    silent_after_s: float = 30.0  # no log byte this long: silent
    idle_cpu_rate: float = 0.02  # CPU seconds per second below which a process does nothing
    busy_cpu_rate: float = 0.5  # a process using half a core or more is busy
    compiler_cpu_percent: float = 5.0
    gpu_loaded_bytes: int = 1 << 30  # a GPU holding this much memory is "loaded"
    gpu_spin_util: int = 95
    gpu_low_power_ratio: float = 0.4  # power below this share of the limit is near idle
    memory_low_ratio: float = 0.05  # MemAvailable below 5 % of RAM is pressure
    cgroup_full_ratio: float = 0.95
    illusion_ratio: float = 1.5  # RSS sum this many times PSS sum (or RAM): pages are shared
    one_look: bool = False  # pasted text: judge states and %CPU of a single look (no growth to see)


COMPILERS = frozenset({"nvcc", "ptxas", "ninja", "cicc", "gcc", "g++", "cc1", "cc1plus", "c++", "clang", "clang++", "ld"})
_WORLD_ARGS = re.compile(
    r"^--(tp-size|tp|tensor-parallel-size|tensor_parallel_size|nproc-per-node|nproc_per_node|world-size|world_size)"
    r"(?:=(\d+))?$"
)


def _obs(oid: str, text: str, source: str, at: float, pids: Sequence[int] = (), **figures: object) -> Observation:
    clean = {k: v for k, v in figures.items() if isinstance(v, (int, float, str))}
    return Observation(id=oid, text=text, source=source, at=at, figures=clean, pids=tuple(pids))


# ---------------------------------------------------------------- processes over time
def idle_seconds(history: Sequence[Snapshot], pid: int, th: Thresholds) -> Optional[float]:
    """How long `pid` has used no CPU (and read no bytes), from the history; None: not idle / unknown."""
    latest = history[-1].process(pid)
    if latest is None or not is_known(latest.cpu_time_s):
        return None
    since: Optional[float] = None
    for snap in reversed(history[:-1]):
        p = snap.process(pid)
        if p is None or not is_known(p.cpu_time_s):
            break
        span = history[-1].taken_at - snap.taken_at
        grew = latest.cpu_time_s - p.cpu_time_s  # type: ignore[operator]
        read = (latest.read_bytes - p.read_bytes) if is_known(latest.read_bytes) and is_known(p.read_bytes) else 0
        if grew > max(0.05, th.idle_cpu_rate * span) or read > 0:  # type: ignore[operator]
            break
        since = snap.taken_at
    return None if since is None else history[-1].taken_at - since


def cpu_rate(history: Sequence[Snapshot], pid: int) -> Optional[float]:
    """CPU seconds per second over the history (cores busy); falls back to the latest cpu_percent."""
    latest = history[-1].process(pid)
    if latest is None:
        return None
    for snap in history[:-1]:
        p = snap.process(pid)
        if p is not None and is_known(p.cpu_time_s) and is_known(latest.cpu_time_s):
            span = history[-1].taken_at - snap.taken_at
            if span > 0:
                return (latest.cpu_time_s - p.cpu_time_s) / span  # type: ignore[operator]
    return latest.cpu_percent / 100.0 if is_known(latest.cpu_percent) else None  # type: ignore[operator]


def expected_workers(processes: Sequence[ProcessInfo]) -> Optional[tuple[int, str, int]]:
    """(count, argument, pid) from a `--tp-size 8`-style argument in any command line of the tree."""
    for p in processes:
        args = list(p.cmdline)
        for i, arg in enumerate(args):
            m = _WORLD_ARGS.match(arg)
            if not m:
                continue
            value = m.group(2) or (args[i + 1] if i + 1 < len(args) else "")
            if value.isdigit() and int(value) > 1:
                return int(value), f"--{m.group(1)} {value}", p.pid
    return None


def _name(p: ProcessInfo) -> str:
    return os.path.basename(p.cmdline[0]) if p.cmdline else p.name


def process_observations(history: Sequence[Snapshot], th: Thresholds) -> list[Observation]:
    now = history[-1]
    at = now.taken_at
    out: list[Observation] = []
    procs = [p for p in now.processes if not p.exited]
    if not procs:
        return out
    one_look = th.one_look and len(history) == 1
    idle: dict[int, float] = {}
    busy: dict[int, float] = {}
    for p in procs:
        if p.state == "Z":
            continue
        rate = cpu_rate(history, p.pid)
        if one_look:
            if is_known(p.cpu_percent) and p.cpu_percent < 1.0 and p.state != "R":  # type: ignore[operator]
                idle[p.pid] = 0.0
        else:
            secs = idle_seconds(history, p.pid, th)
            if secs is not None:
                idle[p.pid] = secs
        if rate is not None and rate >= th.busy_cpu_rate and (one_look or p.pid not in idle):
            busy[p.pid] = rate
    alive = [p for p in procs if p.state != "Z"]
    if len(alive) >= 3:
        out.append(_obs("several-processes", f"{len(alive)} live processes in the tree", "processes", at,
                        [p.pid for p in alive], processes=len(alive)))
    idle_for = min(idle.values()) if idle else 0.0
    if alive and len(idle) == len(alive) and (one_look or idle_for >= th.idle_after_s):
        ctx = sum(_ctx_growth(history, p.pid) for p in alive)
        wake = "context switches stopped too" if ctx == 0 else f"{ctx} voluntary context switches: wakes, does nothing"
        span = "(one look: ps %CPU is a lifetime average)" if one_look else f"for {fmt_s(idle_for)}"
        out.append(_obs("all-idle", f"all {len(alive)} processes idle (no CPU-time growth) {span}; {wake}",
                        "processes", at, [p.pid for p in alive], processes=len(alive), idle_s=round(idle_for, 1),
                        ctx_growth=ctx))
    for pid, rate in busy.items():
        p = now.process(pid)
        assert p is not None
        others_idle = [q for q in alive if q.pid != pid and q.pid in idle]
        out.append(_obs("busy-process", f"PID {pid} ({_name(p)}) busy at {rate * 100:.0f} % CPU, state {p.state}",
                        "processes", at, [pid], cpu_percent=round(rate * 100, 1), sustained=int(not one_look)))
        if len(alive) >= 3 and len(others_idle) == len(alive) - 1:
            out.append(_obs("one-busy-others-idle",
                            f"PID {pid} ({_name(p)}) busy at {rate * 100:.0f} % CPU while the other {len(others_idle)} idle",
                            "processes", at, [pid], cpu_percent=round(rate * 100, 1)))
    for p in procs:
        if p.state == "Z":
            out.append(_obs("zombie", f"PID {p.pid} ({_name(p)}) is a zombie (Z): it died and its parent {p.ppid} has not reaped it",
                            "processes", at, [p.pid], ppid=p.ppid))
        elif p.state in ("T", "t"):
            why = "traced by a debugger (t)" if p.state == "t" else "stopped (T)"
            out.append(_obs("stopped-process", f"PID {p.pid} ({_name(p)}) is {why}: it runs nothing until SIGCONT",
                            "processes", at, [p.pid], state=p.state, pid_stopped=p.pid))
        elif p.state == "D":
            faults = p.major_faults_delta if is_known(p.major_faults_delta) else 0
            if one_look and is_known(p.major_faults):  # a paste: one count, no growth to see
                faults = p.major_faults
            if faults:
                what = "major page faults so far (one look)" if one_look else "new major page faults"
                out.append(_obs("d-state-faults", f"PID {p.pid} ({_name(p)}) in D (uninterruptible I/O) with "
                                f"{faults} {what}", "processes", at, [p.pid], major_faults=faults))
            else:
                out.append(_obs("d-state", f"PID {p.pid} ({_name(p)}) in D (uninterruptible I/O wait), "
                                f"wchan {p.wchan if is_known(p.wchan) else '?'}", "processes", at, [p.pid]))
        elif p.state == "R" and is_known(p.cpu_percent) and p.cpu_percent < 20 and not one_look:  # type: ignore[operator]
            inv = p.ctx_involuntary_delta if is_known(p.ctx_involuntary_delta) else 0
            if inv:
                out.append(_obs("runnable-starved", f"PID {p.pid} runnable (R) but only {p.cpu_percent:.0f} % CPU, "
                                f"{inv} involuntary switches", "processes", at, [p.pid], involuntary=inv))
    if not any(p.state in ("T", "t") for p in procs):
        out.append(_obs("none-stopped", f"no process stopped (state T) among {len(procs)}", "processes", at,
                        processes=len(procs)))
    for p in procs:
        if _name(p) in COMPILERS and is_known(p.cpu_percent) and p.cpu_percent >= th.compiler_cpu_percent:  # type: ignore[operator]
            out.append(_obs("compiler-running", f"compiler child PID {p.pid} ({_name(p)}) at {p.cpu_percent:.0f} % CPU",
                            "processes", at, [p.pid], name=_name(p)))
    reads = sum(_io_growth(history, p.pid) for p in procs)
    if reads > 0:
        out.append(_obs("io-reading", f"the tree read {fmt_bytes(reads)} since the last look", "processes", at,
                        read_bytes=reads))
    out.extend(_worker_shape(history, procs, at))
    return out


def _ctx_growth(history: Sequence[Snapshot], pid: int) -> int:
    first, last = history[0].process(pid), history[-1].process(pid)
    if first and last and is_known(first.ctx_voluntary) and is_known(last.ctx_voluntary):
        return max(0, last.ctx_voluntary - first.ctx_voluntary)  # type: ignore[operator]
    return 0


def _io_growth(history: Sequence[Snapshot], pid: int) -> int:
    last = history[-1].process(pid)
    if last is None:
        return 0
    if len(history) > 1:
        prev = history[-2].process(pid)
        if prev and is_known(prev.read_bytes) and is_known(last.read_bytes):
            return max(0, last.read_bytes - prev.read_bytes)  # type: ignore[operator]
    return last.read_bytes_delta if is_known(last.read_bytes_delta) and last.read_bytes_delta > 0 else 0  # type: ignore[operator,return-value]


def _worker_shape(history: Sequence[Snapshot], procs: Sequence[ProcessInfo], at: float) -> list[Observation]:
    out: list[Observation] = []
    gone: dict[int, tuple[str, str]] = {}
    for snap in history:
        for e in snap.exited:
            code = f"exit code {e.exit_code}" if is_known(e.exit_code) else "exit status unknown"
            gone[e.pid] = (e.name, code)
        for p in snap.processes:
            if p.exited:
                gone.setdefault(p.pid, (p.name, "exit status unknown"))
    for pid, (name, code) in sorted(gone.items()):
        signal = _signal_of(code)
        out.append(_obs("worker-exited", f"PID {pid} ({name}) exited: {code}{signal}", "processes", at, [pid],
                        exit=code))
        if "SIGKILL" in signal:
            out.append(_obs("worker-sigkilled", f"PID {pid} ({name}) was killed by SIGKILL ({code})", "processes", at,
                            [pid]))
    shape = expected_workers(procs)
    if shape:
        count, arg, root = shape
        found = [p for p in procs if p.pid != root and p.state != "Z"]
        if len(found) < count:
            out.append(_obs("workers-missing", f"{arg} in PID {root}'s command line means {count} workers; "
                            f"{len(found)} other live processes in the tree", "processes", at, [root],
                            expected=count, found=len(found)))
        else:
            out.append(_obs("workers-present", f"{arg}: {count} workers expected, {len(found)} found under PID {root}",
                            "processes", at, [root], expected=count, found=len(found)))
    zombies = [p for p in procs if p.state == "Z"]
    if not gone and not zombies and not any(o.id == "workers-missing" for o in out):
        out.append(_obs("all-alive", f"every process is alive: {len(procs)} in the tree, none exited, none a zombie",
                        "processes", at, processes=len(procs)))
    return out


def _signal_of(code: str) -> str:
    for number, name in (("137", "SIGKILL, usually the OOM killer"), ("-9", "SIGKILL, usually the OOM killer"),
                         ("135", "SIGBUS: a truncated or vanished mmap'd file"), ("-7", "SIGBUS: a truncated mmap'd file"),
                         ("139", "SIGSEGV"), ("-11", "SIGSEGV")):
        if code.endswith(" " + number):
            return f" ({name})"
    return ""


# ---------------------------------------------------------------- logs
def log_observations(history: Sequence[Snapshot], th: Thresholds) -> list[Observation]:
    now = history[-1]
    out: list[Observation] = []
    for tail in now.logs:
        if tail.error is not None:
            continue
        last = tail.partial.strip() or (tail.lines[-1].text if tail.lines else "")
        kind = classify_last_line(last, tail.lines[-1].level if tail.lines and not tail.partial.strip() else "info")
        silent = tail.seconds_since_last_byte
        if is_known(silent) and silent >= th.silent_after_s:  # type: ignore[operator]
            after = {"progress-done": "a progress bar at 100 %", "traceback": "a traceback",
                     "timeout": "a timeout message", "progress": "an unfinished progress bar"}.get(kind, "")
            text = f"log {tail.source} silent for {fmt_s(silent)}; last line {quote(last)}"  # type: ignore[arg-type]
            out.append(_obs("log-silent", text + (f" ({after})" if after else ""), "logs", now.taken_at,
                            silent_s=round(silent, 1), last_line=last[:200], last_kind=kind))  # type: ignore[arg-type]
            if kind == "progress-done":
                out.append(_obs("log-silent-after-load", f"log silent {fmt_s(silent)} since {quote(last, 60)}: "  # type: ignore[arg-type]
                                "loading finished, the next phase never reported", "logs", now.taken_at))
        elif is_known(silent):
            out.append(_obs("log-active", f"log {tail.source} wrote {fmt_s(silent)} ago: {quote(last)}", "logs",  # type: ignore[arg-type]
                            now.taken_at, silent_s=round(silent, 1)))  # type: ignore[arg-type]
            if kind == "progress" and _progress_moving(history, tail.path):
                out.append(_obs("log-progress", f"progress advancing in {tail.source}: {quote(last)}", "logs", now.taken_at))
        out.extend(_line_signals(tail.lines, tail.source, now.taken_at))
    return out


def _line_signals(lines: Sequence, source: str, at: float) -> list[Observation]:
    out: list[Observation] = []
    for oid, text, line in scan_log_lines([ln.text for ln in lines]):
        out.append(_obs(oid, f"{text} in {source}: {quote(line)}", "logs", at, line=line[:200]))
    return out


def _progress_moving(history: Sequence[Snapshot], path: str) -> bool:
    seen: set[str] = set()
    for snap in history[-4:]:
        for tail in snap.logs:
            if tail.path == path:
                seen.add(tail.partial.strip() or (tail.lines[-1].text if tail.lines else ""))
    return len(seen) > 1 or len(history) == 1


# ---------------------------------------------------------------- ports, gpus, memory, kernel
def port_observations(history: Sequence[Snapshot]) -> list[Observation]:
    now = history[-1]
    probes = now.ports.probes
    out: list[Observation] = []
    if probes:
        ok = [p for p in probes if p.result == "accepted"]
        where = ", ".join(f"{p.address}:{p.port} {p.result}" for p in probes)
        if ok:
            out.append(_obs("port-accepting", f"port {ok[0].port} accepts connections ({where})", "ports", now.taken_at,
                            port=ok[0].port))
        else:
            out.append(_obs("port-refused", f"port {probes[0].port} not answering: {where}", "ports", now.taken_at,
                            port=probes[0].port))
    return out


def gpu_observations(history: Sequence[Snapshot], th: Thresholds) -> list[Observation]:
    now = history[-1]
    out: list[Observation] = []
    devices = [d for d in now.gpus.devices if d.error is None and not d.lost]
    loaded = [d for d in devices if is_known(d.memory_used_bytes) and d.memory_used_bytes >= th.gpu_loaded_bytes]  # type: ignore[operator]
    if loaded:
        flat = [d for d in loaded if _util_always(history, d.index, lambda u: u == 0)]
        if len(flat) == len(loaded):
            used = ", ".join(sorted({fmt_bytes(d.memory_used_bytes) for d in loaded}))  # type: ignore[arg-type]
            out.append(_obs("gpu-loaded-idle", f"{len(loaded)} GPUs hold {used} each at 0 % utilisation "
                            f"over {len(history)} look(s): the GPUs wait for the host", "gpus", now.taken_at,
                            gpus=len(loaded)))
    spin = []
    for d in devices:
        if not (is_known(d.utilization_gpu_percent) and d.utilization_gpu_percent >= th.gpu_spin_util):  # type: ignore[operator]
            continue
        if is_known(d.power_draw_w) and is_known(d.power_limit_w) and d.power_limit_w:
            ratio = d.power_draw_w / d.power_limit_w  # type: ignore[operator]
            if ratio < th.gpu_low_power_ratio:
                spin.append((d, ratio))
            else:
                out.append(_obs("gpu-computing", f"GPU {d.index} at {d.utilization_gpu_percent} % with "
                                f"{d.power_draw_w:.0f} W of {d.power_limit_w:.0f} W: real compute", "gpus", now.taken_at))
    if spin:
        d, ratio = spin[0]
        out.append(_obs("gpu-spin", f"{len(spin)} GPU(s) pinned at {d.utilization_gpu_percent} % utilisation at "
                        f"{d.power_draw_w:.0f} W of {d.power_limit_w:.0f} W ({ratio * 100:.0f} %): a spin-wait, "  # type: ignore[str-format]
                        "not compute", "gpus", now.taken_at, gpus=len(spin)))
    return out


def _util_always(history: Sequence[Snapshot], index: int, test) -> bool:
    values = [d.utilization_gpu_percent for s in history[-10:] for d in s.gpus.devices if d.index == index]
    known = [v for v in values if is_known(v)]
    return bool(known) and all(test(v) for v in known)


def memory_observations(history: Sequence[Snapshot], th: Thresholds) -> list[Observation]:
    now = history[-1]
    at = now.taken_at
    sysm, tgt, cg = now.memory.system, now.memory.target, now.memory.cgroup
    out: list[Observation] = []
    total = sysm.total_bytes if is_known(sysm.total_bytes) else None
    avail = sysm.available_bytes if is_known(sysm.available_bytes) else None
    rss = tgt.rss_sum_bytes if is_known(tgt.rss_sum_bytes) else None
    pss = tgt.pss_sum_bytes if is_known(tgt.pss_sum_bytes) and tgt.pss_covered else None
    if total and avail is not None:
        if avail < th.memory_low_ratio * total:
            out.append(_obs("memory-low", f"only {fmt_bytes(avail)} available of {fmt_bytes(total)} RAM "
                            f"({avail / total * 100:.1f} %)", "memory", at, available=avail, total=total))
        else:
            used = f", used {fmt_bytes(sysm.used_bytes)}" if is_known(sysm.used_bytes) else ""  # type: ignore[arg-type]
            out.append(_obs("memory-ample", f"{fmt_bytes(avail)} available of {fmt_bytes(total)} RAM{used}: "
                            "no memory pressure", "memory", at, available=avail, total=total))
    if rss and (pss or total):
        parts = []
        if pss and rss >= th.illusion_ratio * pss:
            parts.append(f"PSS sum {fmt_bytes(pss)}")
        if total and rss > total:
            parts.append(f"{rss / total:.1f}× the machine's {fmt_bytes(total)} RAM")
        file_b = tgt.file_sum_bytes if is_known(tgt.file_sum_bytes) else 0
        anon_b = tgt.anon_sum_bytes if is_known(tgt.anon_sum_bytes) else 0
        if parts:
            shared = f"; file-backed {fmt_bytes(file_b)} vs anonymous {fmt_bytes(anon_b)}" if file_b or anon_b else ""  # type: ignore[arg-type]
            out.append(_obs("rss-illusion", f"RSS summed over {tgt.processes or '?'} processes is {fmt_bytes(rss)}, "
                            f"{', '.join(parts)}{shared}: shared pages counted once per process", "memory", at,
                            rss_sum=rss, pss_sum=pss or 0, total=total or 0))
    anon = [s.memory.target.anon_sum_bytes for s in history[-6:] if is_known(s.memory.target.anon_sum_bytes)]
    if len(anon) >= 3 and all(b > a for a, b in zip(anon, anon[1:], strict=False)) and anon[-1] - anon[0] > 64 << 20:  # type: ignore[operator]
        out.append(_obs("anon-growing", f"anonymous memory of the tree grew {fmt_bytes(anon[-1] - anon[0])} "  # type: ignore[operator]
                        f"over {len(anon)} looks", "memory", at))
    if is_known(cg.current_bytes) and is_known(cg.max_bytes) and cg.max_bytes:
        if cg.current_bytes >= th.cgroup_full_ratio * cg.max_bytes:  # type: ignore[operator]
            out.append(_obs("cgroup-at-limit", f"cgroup {cg.path} at {fmt_bytes(cg.current_bytes)} of its "  # type: ignore[arg-type]
                            f"{fmt_bytes(cg.max_bytes)} limit", "memory", at))  # type: ignore[arg-type]
    kills = [s.memory.cgroup.oom_kills for s in history if is_known(s.memory.cgroup.oom_kills)]
    if kills and kills[-1] > 0:  # type: ignore[operator]
        out.append(_obs("oom-kill", f"cgroup {cg.path} counts {kills[-1]} OOM kill(s)", "memory", at, kills=kills[-1]))  # type: ignore[arg-type]
    return out


def kernel_observations(history: Sequence[Snapshot]) -> list[Observation]:
    now = history[-1]
    out: list[Observation] = []
    seen: set[str] = set()
    for snap in history:
        for ev in snap.kernel.events:
            if ev.text in seen:
                continue
            seen.add(ev.text)
            pid = (ev.pid,) if ev.pid else ()
            if ev.kind == "oom-kill":
                out.append(_obs("oom-kill", f"kernel OOM killer: {quote(ev.text, 100)}", "kernel", now.taken_at, pid))
            elif ev.kind == "segfault":
                out.append(_obs("segfault", f"kernel: {quote(ev.text, 100)}", "kernel", now.taken_at, pid))
    if now.kernel.error is None and not seen:
        out.append(_obs("no-oom-kill", "no OOM-kill line in the kernel log", "kernel", now.taken_at))
    return out


def observe_snapshots(history: Sequence[Snapshot], th: Thresholds = Thresholds()) -> list[Observation]:
    """Every non-stack observation the history supports, newest snapshot last."""
    if not history:
        return []
    return (process_observations(history, th) + log_observations(history, th) + port_observations(history)
            + gpu_observations(history, th) + memory_observations(history, th) + kernel_observations(history))

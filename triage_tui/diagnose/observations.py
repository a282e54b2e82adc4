"""Observations: facts derived from the history of snapshots, each with its figures and source.

Pure functions over `Snapshot`s (oldest first). Stack observations live in stack_observations.py;
log-line classification in log_signals.py. Nothing here reads the machine.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Optional

from ..model.diagnosis import Observation
from ..model.snapshot import ProcessInfo, Snapshot
from ..model.text_format import clock
from ..model.unavailable import is_known
from .figures import fmt_bytes, fmt_s, quote
from .log_signals import classify_last_line, progress_percent, scan_log_lines, step_counter
from .roles import COMPILERS, helper_role, is_compiler_name, replacements
from .resource_observations import (
    gpu_observations,
    kernel_observations,
    memory_observations,
    port_observations,
    served_observations,
)
from .thresholds import Thresholds
from .vocabulary import register

_WORLD_ARGS = re.compile(
    r"^--(tp-size|tp|tensor-parallel-size|tensor_parallel_size|nproc-per-node|nproc_per_node|world-size|world_size)"
    r"(?:=(\d+))?$"
)


def _obs(oid: str, text: str, source: str, at: float, pids: Sequence[int] = (), **figures: object) -> Observation:
    clean = {k: v for k, v in figures.items() if isinstance(v, (int, float, str))}
    return Observation(id=register(oid), text=text, source=source, at=at, figures=clean, pids=tuple(pids))


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
        grew = latest.cpu_time_s - p.cpu_time_s
        read = (latest.read_bytes - p.read_bytes) if is_known(latest.read_bytes) and is_known(p.read_bytes) else 0
        if grew > max(0.05, th.idle_cpu_rate * span) or read > 0:
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
                return (latest.cpu_time_s - p.cpu_time_s) / span
    return latest.cpu_percent / 100.0 if is_known(latest.cpu_percent) else None


def expected_workers(processes: Sequence[ProcessInfo]) -> Optional[tuple[int, str, int]]:
    """(count, argument, pid) from a `--tp-size 8`-style argument in any command line of the tree."""
    for p in processes:
        found = _world_arg(tuple(p.cmdline))
        if found is not None:
            return found[0], found[1], p.pid
    return None


@lru_cache(maxsize=65536)  # room for a 10,000-process tree of distinct command lines
def _world_arg(cmdline: tuple[str, ...]) -> Optional[tuple[int, str]]:
    """The `--tp-size 8`-style argument of one argv, worked out once per argv (asked every tick)."""
    args = list(cmdline)
    for i, arg in enumerate(args):
        m = _WORLD_ARGS.match(arg)
        if not m:
            continue
        value = m.group(2) or (args[i + 1] if i + 1 < len(args) else "")
        if value.isdecimal() and int(value) > 1:
            return int(value), f"--{m.group(1)} {value}"
    return None


def _name(p: ProcessInfo) -> str:
    return os.path.basename(p.cmdline[0]) if p.cmdline else p.name


def process_observations(history: Sequence[Snapshot], th: Thresholds,
                         idle_of: Optional[Mapping[int, Optional[float]]] = None) -> list[Observation]:
    """`idle_of`: idle_seconds per PID of the latest snapshot, when the caller keeps them up to
    date (the engine's IdleRuns); else they are computed by walking the history."""
    now = history[-1]
    at = now.taken_at
    out: list[Observation] = []
    procs = [p for p in now.processes if not p.exited]
    if not procs:
        return _target_gone(history, at)
    one_look = th.one_look and len(history) == 1
    idle: dict[int, float] = {}
    busy: dict[int, float] = {}
    for p in procs:
        if p.state == "Z":
            continue
        rate = cpu_rate(history, p.pid)
        if one_look:
            if is_known(p.cpu_percent) and p.cpu_percent < 1.0 and p.state != "R":
                idle[p.pid] = 0.0
        else:
            secs = idle_of.get(p.pid) if idle_of is not None else idle_seconds(history, p.pid, th)
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
        growths = [_ctx_growth(history, p.pid) for p in alive]
        ctx = None if any(g is None for g in growths) else sum(g for g in growths if g is not None)
        # a sentence about context switches only when they were read for every process: never a 0 for "unknown"
        wake = "" if one_look or ctx is None else "; context switches stopped too" if ctx == 0 else \
            f"; {ctx} voluntary context switches: wakes, does nothing"
        span = "(one look: ps %CPU is a lifetime average)" if one_look else f"for {fmt_s(idle_for)}"
        who = "the only process is" if len(alive) == 1 else f"all {len(alive)} processes"
        out.append(_obs("all-idle", f"{who} idle (no CPU-time growth) {span}{wake}",
                        "processes", at, [p.pid for p in alive], processes=len(alive), idle_s=round(idle_for, 1),
                        ctx_growth=ctx))
    for pid, rate in busy.items():
        busy_p = now.process(pid)
        assert busy_p is not None
        others_idle = [q for q in alive if q.pid != pid and q.pid in idle]
        out.append(_obs("busy-process", f"PID {pid} ({_name(busy_p)}) busy at {rate * 100:.0f} % CPU, state {busy_p.state}",
                        "processes", at, [pid], cpu_percent=round(rate * 100, 1), sustained=int(not one_look)))
        if len(alive) >= 3 and len(others_idle) == len(alive) - 1:
            out.append(_obs("one-busy-others-idle",
                            f"PID {pid} ({_name(p)}) busy at {rate * 100:.0f} % CPU while the other {len(others_idle)} idle",
                            "processes", at, [pid], cpu_percent=round(rate * 100, 1)))
    for p in procs:
        if p.state == "Z":
            how = _wait_status(p.exit_status) if is_known(p.exit_status) else ""
            out.append(_obs("zombie", f"PID {p.pid} ({_name(p)}) is a zombie (Z): it died{how} and its parent {p.ppid} "
                            "has not reaped it", "processes", at, [p.pid], ppid=p.ppid))
            if is_known(p.exit_status) and p.exit_status & 0x7F == 9:
                out.append(_obs("worker-sigkilled", f"PID {p.pid} ({_name(p)}) was killed by SIGKILL (zombie's exit "
                                "status)", "processes", at, [p.pid]))
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
        elif p.state == "R" and is_known(p.cpu_percent) and p.cpu_percent < 20 and not one_look \
                and (cpu_rate(history, p.pid) or 0.0) < 0.2:
            # over the whole watch, not the last interval alone (a py-spy capture pauses it for that long)
            inv = p.ctx_involuntary_delta if is_known(p.ctx_involuntary_delta) else 0
            if inv:
                out.append(_obs("runnable-starved", f"PID {p.pid} runnable (R) but only {p.cpu_percent:.0f} % CPU, "
                                f"{inv} involuntary switches", "processes", at, [p.pid], involuntary=inv))
    if not any(p.state in ("T", "t") for p in procs):
        out.append(_obs("none-stopped", f"no process stopped (state T) among {len(procs)}", "processes", at,
                        processes=len(procs)))
    for p in procs:
        if _name(p) in COMPILERS and is_known(p.cpu_percent) and p.cpu_percent >= th.compiler_cpu_percent:
            out.append(_obs("compiler-running", f"compiler child PID {p.pid} ({_name(p)}) at {p.cpu_percent:.0f} % CPU",
                            "processes", at, [p.pid], name=_name(p)))
    reads = sum(_io_growth(history, p.pid) for p in procs)
    if reads > 0:
        out.append(_obs("io-reading", f"the tree read {fmt_bytes(reads)} since the last look", "processes", at,
                        read_bytes=reads))
    out.extend(_worker_shape(history, procs, at))
    out.extend(_kernel_view(procs, at))
    if len(history) == 1 and not th.one_look:
        out.extend(_first_look(procs, now, at))
    return out


def _peers(procs: Sequence[ProcessInfo]) -> list[ProcessInfo]:
    """The processes that are compared: alive, not helpers, not replacements (a newcomer differs because it is
    new), not the parent of another (a launcher)."""
    late = {r.pid for r in replacements(procs)}
    alive = [p for p in procs if p.state not in ("Z", "X") and not helper_role(p) and p.pid not in late]
    parents = {p.ppid for p in alive}
    leaves = [p for p in alive if p.pid not in parents]
    return leaves


def _kernel_view(procs: Sequence[ProcessInfo], at: float) -> list[Observation]:
    """Peers grouped by what the kernel says they sleep in (state, wait channel of the main thread), from the
    first refresh and without pausing anyone: one that differs from all the others is named before any py-spy."""
    peers = [p for p in _peers(procs) if is_known(p.wchan)]
    if len(peers) < 3:
        return []
    groups: dict[tuple[str, str], list[ProcessInfo]] = {}
    for p in peers:
        groups.setdefault((p.state, str(p.wchan) or "-"), []).append(p)
    if len(groups) != 2:
        return []
    (big_key, big), (odd_key, odd) = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    if len(odd) != 1 or len(big) < 2:
        return []
    p = odd[0]
    return [_obs("kernel-odd-rank", f"PID {p.pid} ({_name(p)}) differs in the kernel's view: state {odd_key[0]} in "
                 f"{odd_key[1]}, while the other {len(big)} are {big_key[0]} in {big_key[1]}", "processes", at, [p.pid],
                 kernel_pid=p.pid, wchan=odd_key[1], others=len(big), others_wchan=big_key[1])]


def _first_look(procs: Sequence[ProcessInfo], now: Snapshot, at: float) -> list[Observation]:
    """What one look shows before any watching: CPU time against age, state and wait channel, and how long
    ago each log was last written (its mtime): a hang older than triage is visible at once."""
    out: list[Observation] = []
    for p in procs[:8]:
        if p.state == "Z" or not is_known(p.cpu_time_s) or not is_known(p.start_time):
            continue
        age = max(0.0, at - p.start_time)
        where = f"state {p.state}" + (f" in {p.wchan}" if is_known(p.wchan) and p.wchan else "")
        cpu = f"{p.cpu_time_s:.1f} s" if p.cpu_time_s < 60 else fmt_s(p.cpu_time_s)
        out.append(_obs("first-look", f"PID {p.pid} ({_name(p)}): {cpu} of CPU in {fmt_s(age)} of "
                        f"life, {where}", "processes", at, [p.pid], cpu_s=round(p.cpu_time_s, 2), age_s=round(age, 1)))
    for tail in now.logs:
        if tail.error is None and is_known(tail.seconds_since_last_byte) and (tail.lines or tail.partial.strip()):
            out.append(_obs("first-look", f"log {tail.source} last written {fmt_s(tail.seconds_since_last_byte)} before "
                            "triage's first look (its mtime)", "logs", at))
    return out


def _ctx_growth(history: Sequence[Snapshot], pid: int) -> Optional[int]:
    """Voluntary context switches of `pid` over the history; None when they were not read."""
    first, last = history[0].process(pid), history[-1].process(pid)
    if first and last and is_known(first.ctx_voluntary) and is_known(last.ctx_voluntary):
        return max(0, last.ctx_voluntary - first.ctx_voluntary)
    return None


def _io_growth(history: Sequence[Snapshot], pid: int) -> int:
    last = history[-1].process(pid)
    if last is None:
        return 0
    if len(history) > 1:
        prev = history[-2].process(pid)
        if prev and is_known(prev.read_bytes) and is_known(last.read_bytes):
            return max(0, last.read_bytes - prev.read_bytes)
    return last.read_bytes_delta if is_known(last.read_bytes_delta) and last.read_bytes_delta > 0 else 0


def _worker_shape(history: Sequence[Snapshot], procs: Sequence[ProcessInfo], at: float) -> list[Observation]:
    out: list[Observation] = []
    gone: dict[int, tuple[str, str]] = {}
    for snap in history:  # a compiler child that exits is a compile step that finished, not a dead worker
        for e in snap.exited:
            if is_compiler_name(e.name) or (e.cmdline and is_compiler_name(e.cmdline[0])):
                continue
            code = f"exit code {e.exit_code}" if is_known(e.exit_code) else "exit status unknown"
            gone[e.pid] = (e.name, code)
        for p in snap.exited_rows:
            if is_compiler_name(p.name) or (p.cmdline and is_compiler_name(p.cmdline[0])):
                continue
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
    out.extend(_recycled(history, procs, at))
    replaced = replacements(procs)
    for r in replaced:
        late = next(p for p in procs if p.pid == r.pid)
        spread = f"within {fmt_s(r.siblings_spread_s)} of each other" if r.siblings_spread_s >= 0.01 else "together"
        out.append(_obs("worker-replaced", f"PID {r.pid} ({_name(late)}) started {fmt_s(r.late_by_s)} after its "
                        f"{len(r.siblings)} siblings (PIDs {', '.join(map(str, r.siblings))}: same parent {r.ppid}, same "
                        f"command line), which started {spread} and are still there: a replacement, so one of them "
                        "most likely died (start times from /proc/PID/stat)", "processes", at, [r.pid],
                        replacement_pid=r.pid, late_by_s=round(r.late_by_s, 2), siblings=len(r.siblings)))
    zombies = [p for p in procs if p.state == "Z"]
    if not gone and not zombies and not replaced and not any(o.id == "workers-missing" for o in out):
        out.append(_obs("all-alive", f"every process is alive: {len(procs)} in the tree, none exited, none a zombie",
                        "processes", at, processes=len(procs)))
    return out


def _target_gone(history: Sequence[Snapshot], at: float) -> list[Observation]:
    """Every process of the target has exited (it was seen alive before): a fact, with what is known
    of each exit. Nothing seen alive yet: no fact at all (the target may not have started)."""
    if not any(p for snap in history for p in snap.processes if not p.exited):
        return []
    out = _worker_shape(history, [], at)
    roots = [r.pid for r in history[-1].target.roots]
    alive_before = next(snap for snap in reversed(history) if any(not p.exited for p in snap.processes))
    tree = {p.pid for p in alive_before.processes}
    roots += [p.pid for p in alive_before.processes if p.ppid not in tree]  # the tops of the tree last seen
    exits = {e.pid: e for snap in history for e in snap.exited}
    last_alive = max((snap.taken_at for snap in history if any(not p.exited for p in snap.processes)), default=at)
    root = next((exits[pid] for pid in roots if pid in exits), None)
    how, clean = "unknown", False
    if root is None:
        what = "no exit status was seen for the root"
    else:
        code = root.exit_code
        if isinstance(code, int):
            how, clean = f"exit code {code}", code == 0
        else:  # never a silent 0: the reason the status is not known
            how = f"exit status unknown ({code.reason})"
        what = f"root PID {root.pid} ({root.name}) exited: {how}{_signal_of(how)}"
    out.append(_obs("target-gone", f"every process of the target has exited (last seen alive {clock(last_alive)}): "
                    f"{what}", "processes", at, [e.pid for e in exits.values()],
                    last_alive=last_alive, root_exit=how, gone_what=what))
    if clean and root is not None:
        out.append(_obs("target-exited-ok", "the root exited with code 0: the target ended by itself", "processes", at,
                        [root.pid]))
    return out


def _recycled(history: Sequence[Snapshot], procs: Sequence[ProcessInfo], at: float) -> list[Observation]:
    """Workers of one role that exited during the watch while as many of that role were born in it: a pool
    retiring and replacing its workers (max_tasks_per_child, gunicorn's max_requests), not one death."""
    def role(name: str, cmdline: Sequence[str]) -> tuple[str, str]:
        return (name, re.sub(r"\d+", "#", " ".join(cmdline)))

    start = history[0].taken_at
    gone: dict[tuple[str, str], set[int]] = {}
    for snap in history:
        for e in snap.exited:
            if e.last_seen >= start:
                gone.setdefault(role(e.name, e.cmdline), set()).add(e.pid)
    if not gone:
        return []
    first = {p.pid for p in history[0].processes}
    born: dict[tuple[str, str], set[int]] = {}
    for snap in history[1:]:
        for p in snap.processes:
            if p.pid not in first:
                born.setdefault(role(p.name, p.cmdline), set()).add(p.pid)
    alive = {role(p.name, p.cmdline) for p in procs if p.state not in ("Z", "X")}
    out: list[Observation] = []
    for key, pids in gone.items():
        new = born.get(key, set()) - pids
        new_all = born.get(key, set())
        if len(pids) >= 2 and len(new_all) >= 2 and key in alive:
            out.append(_obs("workers-recycled", f"{len(pids)} processes named {key[0]} of one command line exited "
                            f"during the watch and {len(new_all)} of the same started in it ({len(new)} still there): "
                            "a pool retiring and replacing its workers", "processes", at, sorted(new)[:8],
                            exited=len(pids), started=len(new_all)))
    return out[:1]


def _wait_status(status: int) -> str:
    """A wait() status in words: ` (exit code 3)`, ` (killed by signal 9, SIGKILL)`."""
    import signal as _signal

    sig = status & 0x7F
    if sig == 0:
        return f" (exit code {(status >> 8) & 0xFF}, read from /proc/PID/stat)"
    try:
        name = _signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    core = ", core dumped" if status & 0x80 else ""
    return f" (killed by signal {sig}, {name}{core}, read from /proc/PID/stat)"


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
    start = history[0].taken_at
    watched = now.taken_at - start
    for tail in now.logs:
        if tail.error is not None or (not tail.lines and not tail.partial.strip()):
            continue  # an empty file says nothing: neither activity nor silence
        last = tail.partial.strip() or (tail.lines[-1].text if tail.lines else "")
        kind = classify_last_line(last, tail.lines[-1].level if tail.lines and not tail.partial.strip() else "info")
        silent = tail.seconds_since_last_byte
        # written during the watch (an old line, or an empty file, is no activity); silent for the whole of
        # a watch long enough to judge counts as silent even before the silence threshold
        written_at = tail.last_byte_at
        grew = bool(last) and is_known(written_at) and written_at > start
        quiet_watch = watched >= th.idle_after_s and is_known(silent) and silent >= watched
        if is_known(silent) and kind == "progress-done" and (
                silent >= min(th.silent_after_s, th.idle_after_s) or quiet_watch):
            # a finished bar followed by silence says "the next phase never reported" sooner than plain silence
            out.append(_obs("log-silent-after-load", f"log silent {fmt_s(silent)} since {quote(last, 60)}: "
                            "loading finished, the next phase never reported", "logs", now.taken_at))
        if is_known(silent) and (silent >= th.silent_after_s or quiet_watch):
            after = {"progress-done": "a progress bar at 100 %", "traceback": "a traceback",
                     "timeout": "a timeout message", "progress": "an unfinished progress bar"}.get(kind, "")
            text = f"log {tail.source} silent for {fmt_s(silent)}; last line {quote(last)}"
            out.append(_obs("log-silent", text + (f" ({after})" if after else ""), "logs", now.taken_at,
                            silent_s=round(silent, 1), last_line=last[:200], last_kind=kind))
        elif not is_known(silent) and kind == "progress-done":  # a paste: no timing, but where it ends says much
            out.append(_obs("log-ends-after-load", f"the log ends at {quote(last, 60)}: loading finished, nothing after",
                            "logs", now.taken_at))
        elif not is_known(silent) and _progress_in_lines(tail.lines):  # a paste: no timing, but the bar moved
            out.append(_obs("log-progress", f"progress advancing in {tail.source}: {quote(last)}", "logs", now.taken_at))
        elif is_known(silent) and (grew or th.one_look):
            out.append(_obs("log-active", f"log {tail.source} wrote {fmt_s(silent)} ago, during the watch: "
                            f"{quote(last)}", "logs", now.taken_at, silent_s=round(silent, 1)))
            steps = _steps_advanced(history, tail.path)
            if kind == "progress" and _progress_moving(history, tail.path):
                out.append(_obs("log-progress", f"progress advancing in {tail.source}: {quote(last)}", "logs", now.taken_at))
            elif steps is not None:
                word, first, latest = steps
                out.append(_obs("log-steps-advancing", f"{word} counter advancing in {tail.source} during the watch: "
                                f"{word} {first} → {latest}; last line {quote(last)}", "logs", now.taken_at,
                                counter=word, counter_from=first, counter_to=latest))
        out.extend(_line_signals(tail.lines, tail.source, now.taken_at))
    return out


def _line_signals(lines: Sequence, source: str, at: float) -> list[Observation]:
    out: list[Observation] = []
    for oid, text, line in scan_log_lines([ln.text for ln in lines]):
        out.append(_obs(oid, f"{text} in {source}: {quote(line)}", "logs", at, line=line[:200]))
    return out


def _progress_in_lines(lines: Sequence) -> bool:
    """The tail's progress bars rise and the last is short of 100 %."""
    values = [v for v in (progress_percent(ln.text.split("\r")[-1]) for ln in lines[-20:]) if v is not None]
    return len(values) >= 2 and values[-1] < 100 and values[-1] > values[0]


def _progress_moving(history: Sequence[Snapshot], path: str) -> bool:
    seen: set[str] = set()
    for snap in history[-4:]:
        for tail in snap.logs:
            if tail.path == path:
                seen.add(tail.partial.strip() or (tail.lines[-1].text if tail.lines else ""))
    return len(seen) > 1 or len(history) == 1


def _steps_advanced(history: Sequence[Snapshot], path: str) -> Optional[tuple[str, int, int]]:
    """(word, first, last) when the log's loop counter rose between the first and the last look of the watch."""
    counters = []
    for snap in history:
        for tail in snap.logs:
            if tail.path == path and tail.lines:
                found = step_counter(ln.text for ln in tail.lines[-20:])
                if found is not None:
                    counters.append(found)
    if len(counters) < 2 or counters[0][0] != counters[-1][0] or counters[-1][1] <= counters[0][1]:
        return None
    return counters[-1][0], counters[0][1], counters[-1][1]


def observe_snapshots(history: Sequence[Snapshot], th: Thresholds = Thresholds(),
                      idle_of: Optional[Mapping[int, Optional[float]]] = None) -> list[Observation]:
    """Every non-stack observation the history supports, newest snapshot last."""
    if not history:
        return []
    out = (process_observations(history, th, idle_of) + log_observations(history, th) + port_observations(history)
           + served_observations(history) + gpu_observations(history, th) + memory_observations(history, th) + kernel_observations(history))
    out = _idle_means_nothing_advances(out, history[-1])
    return out + _joined(out, history[-1].taken_at) + _progress_seen(out, history, th) + _not_judged(history, th)


def _not_judged(history: Sequence[Snapshot], th: Thresholds) -> list[Observation]:
    """Say what a watch this short cannot judge yet, instead of letting silence read as health."""
    span = history[-1].taken_at - history[0].taken_at
    if th.one_look or span >= th.idle_after_s:
        return []
    return [_obs("not-judged-yet", f"watched {fmt_s(span)} so far: idle needs {fmt_s(th.idle_after_s)} of watching "
                 "and progress needs two looks; the first-look figures stand alone until then", "processes",
                 history[-1].taken_at, watched_s=round(span, 1))]


def _idle_means_nothing_advances(observations: list[Observation], now: Snapshot) -> list[Observation]:
    """Idle is "nothing advances", not "no CPU": a loader that reads a little and moves its bar in its
    log uses almost no CPU and is not idle. all-idle is withdrawn while a log wrote within its idle span."""
    idle = next((o for o in observations if o.id == "all-idle"), None)
    if idle is None:
        return observations
    if any(o.id == "requests-served" for o in observations):  # a server answering requests at low CPU
        return [o for o in observations if o is not idle]
    span = idle.figures.get("idle_s", 0.0)
    for tail in now.logs:
        wrote = tail.seconds_since_last_byte
        if tail.error is None and (tail.lines or tail.partial.strip()) and is_known(wrote) \
                and isinstance(span, (int, float)) and wrote < span and (tail.partial.strip() or tail.lines):
            return [o for o in observations if o is not idle]
    return observations


def _progress_seen(observations: Sequence[Observation], history: Sequence[Snapshot], th: Thresholds) -> list[Observation]:
    """Positive evidence of work during the watch: the tree's CPU time grew AND its log or its reads
    advanced. CPU alone is no progress (a spin, a poller); a log alone may be a heartbeat of a stuck job."""
    if len(history) < 2:
        return []
    ids = {o.id for o in observations}
    served = next((o for o in observations if o.id == "requests-served"), None)
    if served is not None:  # clients were answered: work done, however little CPU it took
        return [_obs("progress-seen", f"progress during the {fmt_s(history[-1].taken_at - history[0].taken_at)} "
                     f"watch: {served.text}", "ports", history[-1].taken_at)]
    advancing = [o for o in observations if o.id in ("log-active", "log-progress", "log-steps-advancing", "io-reading")]
    if not advancing or "all-idle" in ids:
        return []
    first, last = history[0], history[-1]
    # a loop's own step counter rising is work done, whatever the CPU: a job that sleeps between steps (or waits
    # on a GPU) shows little CPU and still moves
    steps = next((o for o in advancing if o.id == "log-steps-advancing"), None)
    if steps is not None:
        return [_obs("progress-seen", f"progress during the {fmt_s(last.taken_at - first.taken_at)} watch: "
                     f"{steps.text}", "logs", last.taken_at)]
    grew = 0.0
    for p in last.processes:
        q = first.process(p.pid)
        if q is not None and is_known(p.cpu_time_s) and is_known(q.cpu_time_s):
            grew += max(0.0, p.cpu_time_s - q.cpu_time_s)
        elif q is None and is_known(p.cpu_time_s):
            grew += p.cpu_time_s  # born during the watch: all its CPU was spent in it
    span = last.taken_at - first.taken_at
    if span > 0 and grew <= max(0.1, th.idle_cpu_rate * span):
        grew += _cpu_of_the_gone(history)  # workers that came and went (a pool recycling them) worked too
    if span <= 0 or grew <= max(0.1, th.idle_cpu_rate * span):
        return []
    return [_obs("progress-seen", f"progress during the {fmt_s(span)} watch: {fmt_s(grew)} of CPU and "
                 f"{advancing[0].text}", "processes", last.taken_at, cpu_s=round(grew, 2))]


def _cpu_of_the_gone(history: Sequence[Snapshot]) -> float:
    """CPU seconds spent during the watch by processes that are gone by its last look: from their first look
    in the watch (0 when born in it) to their last."""
    last_pids = {p.pid for p in history[-1].processes}
    first: dict[int, float] = {}
    latest: dict[int, float] = {}
    for index, snap in enumerate(history[:-1]):
        for p in snap.processes:
            if p.pid in last_pids or not is_known(p.cpu_time_s):
                continue
            first.setdefault(p.pid, p.cpu_time_s if index == 0 else 0.0)
            latest[p.pid] = p.cpu_time_s
    return sum(max(0.0, latest[pid] - first[pid]) for pid in latest)


def _joined(observations: Sequence[Observation], at: float) -> list[Observation]:
    """Facts that take two sources: a worker gone AND a kernel OOM-kill line naming that very PID."""
    gone = {pid for o in observations if o.id == "worker-exited" for pid in o.pids}
    killed = [o for o in observations if o.id == "oom-kill" and set(o.pids) & gone]
    return [_obs("worker-oom-killed", f"the OOM killer killed PID {k.pids[0]}, the worker that vanished", "kernel", at,
                 k.pids) for k in killed[:1]]

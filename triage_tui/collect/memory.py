"""Memory: the system (`free -b`), the target's cgroup, and budgeted PSS/USS per process.

- `collect_system_memory` replaces `free -b` (same arithmetic as procps-ng 4: used = total -
  MemAvailable; buff/cache = Buffers + Cached + SReclaimable; older procps used total - free -
  buff/cache, which we fall back to when MemAvailable is missing).
- `collect_cgroup_memory` replaces `cat memory.current memory.max` (v2) or
  `memory.usage_in_bytes memory.limit_in_bytes` (v1) for the cgroup in /proc/PID/cgroup.
- `SmapsReader` replaces `cat /proc/PID/smaps_rollup` per process. That read walks the target's
  page tables under its mm lock, so its cost grows with the mapping (hundreds of GB of mmap'd
  weights): each read is timed, a per-tick budget bounds the total, big or slow processes are
  refreshed less often, and all of it runs on a background thread so no caller waits on it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from ..model.snapshot import CgroupMemory, ProcessInfo, SystemMemory, TargetMemory
from ..model.unavailable import Maybe, Unavailable, is_known, unavailable_from_error
from ..parse.procfs import parse_kb_table
from .proc_table import read_seq_text, read_text

V1_NO_LIMIT = 2**62  # v1 reports "no limit" as PAGE_COUNTER_MAX pages (~2^63 bytes, page-rounded)


def system_memory_from_meminfo(table: dict[str, int]) -> SystemMemory:
    """SystemMemory from parsed /proc/meminfo (pure: also used on a remote node's text)."""
    def get(key: str) -> Maybe[int]:
        return table[key] if key in table else Unavailable(f"no {key} in /proc/meminfo")

    total, free = table.get("MemTotal"), table.get("MemFree")
    buffers, cached, reclaimable = table.get("Buffers", 0), table.get("Cached", 0), table.get("SReclaimable", 0)
    buff_cache = buffers + cached + reclaimable
    used: Maybe[int] = Unavailable("MemTotal/MemFree missing from /proc/meminfo")
    available = table.get("MemAvailable")
    if total is not None and available is not None:
        used = total - available  # procps-ng >= 4.0 `free`: used = total - available
    elif total is not None and free is not None:
        used = total - free - buff_cache
        if used < 0:  # procps: fall back to total - free when caches exceed it (containers)
            used = total - free
    swap_total, swap_free = table.get("SwapTotal"), table.get("SwapFree")
    return SystemMemory(
        total_bytes=get("MemTotal"),
        used_bytes=used,
        free_bytes=get("MemFree"),
        available_bytes=get("MemAvailable"),
        buff_cache_bytes=buff_cache,
        shared_bytes=get("Shmem"),
        swap_total_bytes=get("SwapTotal"),
        swap_used_bytes=(swap_total - swap_free) if swap_total is not None and swap_free is not None
        else Unavailable("no SwapTotal/SwapFree in /proc/meminfo"),
    )


def collect_system_memory(path: str = "/proc/meminfo") -> SystemMemory:
    """What `free -b` prints."""
    try:
        return system_memory_from_meminfo(parse_kb_table(read_text(path)))
    except OSError as exc:
        reason = unavailable_from_error(exc, "/proc/meminfo")
        return SystemMemory(*([reason] * 8))


# ---------------------------------------------------------------- cgroup
def _cgroup_mounts(mountinfo: str) -> tuple[Optional[tuple[str, str]], Optional[tuple[str, str]]]:
    """((root, mountpoint) of the v1 memory hierarchy, (root, mountpoint) of cgroup2)."""
    v1 = v2 = None
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, mountpoint, fstype, options = fields[3], fields[4], tail[0], tail[2]
        if fstype == "cgroup" and "memory" in options.split(",") and v1 is None:
            v1 = (root, mountpoint)
        elif fstype == "cgroup2" and v2 is None:
            v2 = (root, mountpoint)
    return v1, v2


def _join(mount: tuple[str, str], cg_path: str) -> str:
    root, mountpoint = mount
    relative = cg_path
    if root != "/" and (cg_path == root or cg_path.startswith(root + "/")):
        relative = cg_path[len(root):]  # the mount shows a sub-tree (a container's own cgroup)
    candidate = os.path.join(mountpoint, relative.lstrip("/"))
    return candidate if os.path.isdir(candidate) else mountpoint


def _read_int(path: str) -> int:
    return int(read_text(path).strip())


def collect_cgroup_memory(pid: int) -> CgroupMemory:
    """The memory cgroup PID is in: usage, limit (None when unlimited) and OOM kills so far."""
    try:
        lines = read_text(f"/proc/{pid}/cgroup").splitlines()
        mountinfo = read_seq_text("/proc/self/mountinfo")
    except OSError as exc:
        reason = unavailable_from_error(exc, "/proc/PID/cgroup")
        return CgroupMemory(path=reason, version=reason, current_bytes=reason, max_bytes=reason, oom_kills=reason)
    v1_path = v2_path = None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if "memory" in parts[1].split(","):
            v1_path = parts[2]
        elif parts[0] == "0" and parts[1] == "":
            v2_path = parts[2]
    v1_mount, v2_mount = _cgroup_mounts(mountinfo)
    try:
        if v1_path is not None and v1_mount is not None:
            directory = _join(v1_mount, v1_path)
            limit = _read_int(f"{directory}/memory.limit_in_bytes")
            oom: Maybe[int] = Unavailable("no oom_kill in memory.oom_control", "kernel older than 4.13")
            try:
                for line in read_text(f"{directory}/memory.oom_control").splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and value.strip().isdecimal():
                        oom = int(value)
            except OSError:
                pass
            return CgroupMemory(path=directory, version=1, current_bytes=_read_int(f"{directory}/memory.usage_in_bytes"),
                                max_bytes=None if limit >= V1_NO_LIMIT else limit, oom_kills=oom)
        if v2_path is not None and v2_mount is not None:
            directory = _join(v2_mount, v2_path)
            if not os.path.exists(f"{directory}/memory.current"):
                none = Unavailable("no memory controller in this cgroup", "the root cgroup has no memory.current")
                return CgroupMemory(path=directory, version=2, current_bytes=none, max_bytes=none, oom_kills=none)
            raw_max = read_text(f"{directory}/memory.max").strip()
            events = {}
            for line in read_text(f"{directory}/memory.events").splitlines():
                key, _, value = line.partition(" ")
                events[key] = value
            oom_kills = int(events["oom_kill"]) if events.get("oom_kill", "").isdecimal() else Unavailable(
                "no oom_kill in memory.events")
            return CgroupMemory(path=directory, version=2, current_bytes=_read_int(f"{directory}/memory.current"),
                                max_bytes=None if raw_max == "max" else int(raw_max), oom_kills=oom_kills)
    except (OSError, ValueError) as exc:
        reason = unavailable_from_error(exc, "cgroup memory files")
        return CgroupMemory(path=reason, version=reason, current_bytes=reason, max_bytes=reason, oom_kills=reason)
    none = Unavailable("no memory cgroup found", "mount cgroup2 or the v1 memory controller")
    return CgroupMemory(path=none, version=none, current_bytes=none, max_bytes=none, oom_kills=none)


# ---------------------------------------------------------------- smaps_rollup, budgeted
@dataclass(frozen=True)
class SmapsFigure:
    """One smaps_rollup read: PSS, USS (Private_Clean + Private_Dirty), swap, when and at what cost."""

    pid: int
    read_at: float  # epoch
    cost_ms: float
    pss_bytes: object
    uss_bytes: object
    swap_bytes: object


_ROLLUP_KEYS = ("\nPss:", "\nPrivate_Clean:", "\nPrivate_Dirty:", "\nSwap:")


def _rollup_figures(text: str) -> Optional[tuple[int, int, int, int]]:
    """Pss, Private_Clean, Private_Dirty and Swap of smaps_rollup text, in bytes, found by their keys alone (the
    kernel prints each once, as "Key:   123 kB"); None when one is missing or not so printed (then the whole
    table is parsed). The four of ~23 lines a figure needs: ~4 against ~34 us for parse_kb_table, which was
    most of Python's side of the 1,000 reads of a watch's first seconds (BENCHMARKS.md, the tenth pass)."""
    out = []
    for key in _ROLLUP_KEYS:
        at = text.find(key)
        if at < 0:
            return None
        end = text.find("\n", at + 1)
        parts = text[at + len(key):end if end >= 0 else len(text)].split()
        if len(parts) != 2 or parts[1] != "kB" or not parts[0].isdigit():
            return None
        out.append(int(parts[0]) * 1024)
    return out[0], out[1], out[2], out[3]


def smaps_figure_from_text(pid: int, text: str, read_at: float, cost_ms: float) -> SmapsFigure:
    figures = _rollup_figures(text)
    if figures is not None:
        pss, private_clean, private_dirty, swap = figures
        return SmapsFigure(pid, read_at, cost_ms, pss, private_clean + private_dirty, swap)
    table = parse_kb_table(text)
    if "Pss" not in table:
        empty = Unavailable("smaps_rollup is empty", "a zombie or kernel thread has no memory map")
        return SmapsFigure(pid, read_at, cost_ms, empty, empty, empty)
    uss = table.get("Private_Clean", 0) + table.get("Private_Dirty", 0)
    return SmapsFigure(pid, read_at, cost_ms, table["Pss"], uss, table.get("Swap", 0))


def read_smaps_rollup(pid: int) -> SmapsFigure:
    started = time.perf_counter()
    read_at = time.time()
    try:
        text = read_text(f"/proc/{pid}/smaps_rollup")
    except OSError as exc:
        reason = unavailable_from_error(exc, "smaps_rollup")
        if isinstance(exc, PermissionError):
            reason = Unavailable("smaps_rollup: permission denied",
                                 "needs ptrace read access: run as root or as the target's user")
        return SmapsFigure(pid, read_at, (time.perf_counter() - started) * 1000, reason, reason, reason)
    return smaps_figure_from_text(pid, text, read_at, (time.perf_counter() - started) * 1000)


class SmapsReader:
    """Reads smaps_rollup on a background thread within a per-tick time budget.

    `submit(rss_by_pid, budget_ms, interval_s)` hands this tick's work over and returns at once;
    `figures()` returns the latest figure per PID (read on an earlier tick, with its time).
    Scheduling: never-read PIDs first, then the stalest due ones; a PID is due again after
    interval × max(1, RSS / 1 GiB, 4 × last cost / budget), so big or slow processes are read
    less often. A PID whose RSS has not moved since its last read waits STEADY_REFRESH_S: its PSS
    changes then only as the processes it shares pages with come and go, and re-reading 1,000
    idle workers every tick was most of a refresh's CPU (the figure's age says how old it is).
    One that also has not run since its figure was read (`quiet`: the process collector's proof),
    in a tree whose set of processes has not changed since, waits QUIET_REFRESH_S: it mapped and
    touched nothing, and no sharer in the tree came or went (a sharer outside it still may: hence
    a limit, and the age). 1,000 idle workers re-read every 30 s were ~20 ms of CPU a second.
    A tick stops starting reads once the budget is spent, and skips a read whose last cost would
    overrun what is left (it goes first next tick); the first read of a tick always runs, so a
    read dearer than the whole budget still happens, once per tick at most.
    """

    BIG_RSS = 2**30
    MAX_REFRESH_S = 120.0
    STEADY_REFRESH_S = 30.0
    QUIET_REFRESH_S = 300.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._figures: dict[int, SmapsFigure] = {}
        self._due_at: dict[int, float] = {}
        self._rss_at_read: dict[int, int] = {}
        self._quiet_since_read: set[int] = set()  # PIDs that have not run since their figure was read
        self._tree: frozenset[int] = frozenset()  # the PIDs of the last batch
        self._pending: Optional[tuple[dict[int, int], float, float, frozenset[int]]] = None
        self.reads = 0  # smaps_rollup reads since start, for the tests
        self._busy = False
        self._closed = False
        self.spent_ms = 0.0  # time spent in reads during the last completed batch
        self.reading: Optional[tuple[int, float]] = None  # (PID, monotonic start) of the read in flight
        self._thread = threading.Thread(target=self._run, name="triage-smaps", daemon=True)
        self._thread.start()

    @classmethod
    def refresh_period_s(cls, rss_bytes: int, cost_ms: float, budget_ms: float, interval_s: float) -> float:
        """How long a figure stays good: one tick, stretched by RSS (per GiB) and by read cost."""
        factor = max(1.0, rss_bytes / cls.BIG_RSS, 4 * cost_ms / max(budget_ms, 1e-6))
        return min(cls.MAX_REFRESH_S, interval_s * factor)

    def submit(self, rss_by_pid: dict[int, int], budget_ms: float = 100.0, interval_s: float = 2.0,
               quiet: frozenset[int] = frozenset()) -> None:
        """`quiet`: PIDs that provably have not run since the last submit (see the class doc)."""
        with self._wake:
            pending = self._pending
            if pending is not None:  # a batch not started yet: a PID is quiet only if quiet in both
                quiet = quiet & pending[3]
            self._pending = (dict(rss_by_pid), budget_ms, interval_s, frozenset(quiet))
            self._wake.notify_all()

    def figures(self) -> dict[int, SmapsFigure]:
        with self._lock:
            return dict(self._figures)

    def wait_idle(self, timeout_s: float = 10.0) -> bool:
        """Block until the submitted work is done (for one-shot reports and tests)."""
        deadline = time.monotonic() + timeout_s
        with self._wake:
            while self._pending is not None or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._wake.wait(left)
        return True

    def blocked_read(self, longer_than_s: float = 5.0) -> Optional[tuple[int, float]]:
        """(PID, seconds) when one smaps_rollup read has been stuck longer than `longer_than_s`."""
        reading = self.reading
        if reading is None:
            return None
        held = time.monotonic() - reading[1]
        return (reading[0], held) if held > longer_than_s else None

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify_all()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._pending is None and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                work, self._pending = self._pending, None
                self._busy = True
            assert work is not None  # the wait above ends on work or on close
            try:
                self._batch(*work)
            finally:
                with self._wake:
                    self._busy = False
                    self._wake.notify_all()

    def _steady(self, pid: int, rss: int, wall: float) -> bool:
        """RSS unchanged since the last read, and that read younger than STEADY_REFRESH_S (or
        QUIET_REFRESH_S for a process that has not run since, in the same tree)."""
        if rss <= 0 or self._rss_at_read.get(pid) != rss:
            return False
        age = wall - self._figures[pid].read_at
        return age < (self.QUIET_REFRESH_S if pid in self._quiet_since_read else self.STEADY_REFRESH_S)

    def _batch(self, rss_by_pid: dict[int, int], budget_ms: float, interval_s: float,
               quiet: frozenset[int] = frozenset()) -> None:
        now = time.monotonic()
        with self._lock:
            tree = frozenset(rss_by_pid)
            if tree != self._tree:  # a sharer came or went: every PSS in the tree may have moved
                self._quiet_since_read.clear()
                self._tree = tree
            self._quiet_since_read &= quiet  # one that ran is no longer quiet
            for gone in set(self._figures) - set(rss_by_pid):
                del self._figures[gone]
                self._due_at.pop(gone, None)
                self._rss_at_read.pop(gone, None)
                self._quiet_since_read.discard(gone)
            never = [p for p in rss_by_pid if p not in self._figures]
            wall = time.time()
            due = sorted((p for p in rss_by_pid if p in self._figures and self._due_at.get(p, 0) <= now
                          and not self._steady(p, rss_by_pid[p], wall)),
                         key=lambda p: self._figures[p].read_at)
        spent = 0.0
        for pid in never + due:
            if spent >= budget_ms or self._closed:
                break
            known = self._figures.get(pid)
            if spent > 0 and known is not None and known.cost_ms > budget_ms - spent:
                continue  # would overrun: a cheaper one may fit; this one is stalest next tick
            self.reading = (pid, time.monotonic())
            figure = read_smaps_rollup(pid)  # may block on the target's mm lock: that is why it is here
            self.reading = None
            self.reads += 1
            spent += figure.cost_ms
            period = self.refresh_period_s(rss_by_pid.get(pid, 0), figure.cost_ms, budget_ms, interval_s)
            with self._lock:
                self._figures[pid] = figure
                self._rss_at_read[pid] = rss_by_pid.get(pid, 0)
                self._quiet_since_read.add(pid)  # from now on: quiet until it runs
                # half a tick early, so a period of one tick means "every tick" despite jitter
                self._due_at[pid] = time.monotonic() + period - interval_s / 2
        self.spent_ms = spent


def target_memory(processes: Sequence[ProcessInfo]) -> TargetMemory:
    """Sums over the tree. RSS sums count shared pages once per process; PSS sums do not."""
    live = [p for p in processes if not p.exited]

    def total(attr: str, reason: str) -> Maybe[int]:
        values: list[Maybe[int]] = [getattr(p, attr) for p in live]
        known = [v for v in values if is_known(v)]
        return sum(known) if known else Unavailable(reason)

    pss_known = [p.pss_bytes for p in live if is_known(p.pss_bytes)]
    return TargetMemory(
        processes=len(live),
        rss_sum_bytes=total("rss_bytes", "no RSS readable"),
        pss_sum_bytes=sum(pss_known) if pss_known else Unavailable("no PSS read yet"),
        uss_sum_bytes=total("uss_bytes", "no USS read yet"),
        anon_sum_bytes=total("rss_anon_bytes", "no RssAnon readable"),
        file_sum_bytes=total("rss_file_bytes", "no RssFile readable"),
        shmem_sum_bytes=total("rss_shmem_bytes", "no RssShmem readable"),
        pss_covered=len(pss_known),
    )

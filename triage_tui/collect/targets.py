"""TARGET resolution: PID, name:REGEX, :PORT (or nothing: pick candidates) → roots; roots → tree.

Replaces `pgrep -f REGEX`, `ss -ltnp 'sport = :PORT'` and `pstree -p PID`. The target is always a
whole subtree under its roots, whatever the children call themselves: the reference incident's
workers renamed themselves, so a name filter alone would hide them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Optional

from ..model.options import TargetError
from ..model.snapshot import Target, TargetRoot
from ..parse.target_spec import read_target_spec
from .ports import listening_tcp_sockets, pids_holding_inodes, socket_inodes
from .proc_table import CLOCK_TICKS, PAGE_SIZE, ProcTable, read_cmdline, read_proc_table

MAX_AUTO_TREES = 2  # besides GPU holders: the biggest tree by memory and the busiest by CPU time


def _own_lineage(table: ProcTable) -> set[int]:
    """Triage itself and its ancestors (the shell, tmux, sshd): never a target. Its children are
    allowed: `triage demo` watches the incident it started."""
    me = os.getpid()
    return {me, *table.ancestors(me)}


def _topmost(pids: Sequence[int], table: ProcTable) -> list[int]:
    """Keep only matches none of whose ancestors also matched (a regex that hits a launcher and
    its children yields the launcher once)."""
    chosen = set(pids)
    return sorted(pid for pid in chosen if not any(a in chosen for a in table.ancestors(pid)))


def _topmost_holder(pid: int, inodes: set[int], table: ProcTable, excluded: set[int]) -> int:
    """The highest of `pid` and its ancestors that holds one of `inodes` too. The first holder is found in PID order,
    which is not the tree's: once PIDs wrap a forked child can have a lower PID than its parent (a launcher at 32759
    whose stopped child got 301, seen in CI), and the children of a server hold its listening socket too."""
    top = pid
    for above in table.ancestors(pid):
        if above in excluded:
            break  # triage itself and its ancestors are never a target
        try:
            if socket_inodes(above) & inodes:
                top = above
        except OSError:
            continue  # gone, or not ours to read: the ones above can still hold it
    return top


def _thread_group_of(pid: int) -> Optional[int]:
    """The Tgid line of /proc/PID/status (the process a thread ID belongs to); None when unreadable."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("Tgid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _resolve_pid(pid: int, table: ProcTable) -> list[TargetRoot]:
    if pid not in table.stats and not os.path.exists(f"/proc/{pid}"):
        raise TargetError(f"no process with PID {pid}")
    tgid = _thread_group_of(pid)
    if tgid is not None and tgid != pid:  # /proc/TID exists though `ls /proc` does not list it
        raise TargetError(f"{pid} is a thread of PID {tgid}, not a process: give {tgid}")
    return [TargetRoot(pid, f"PID {pid}")]


def _resolve_regex(spec: str, pattern: str, table: ProcTable, excluded: set[int]) -> list[TargetRoot]:
    regex = re.compile(pattern)  # read_target_spec has checked that it compiles
    matches = []
    for pid, stat in table.stats.items():
        if pid in excluded or table.is_kernel_thread(pid):
            continue
        if regex.search(stat.comm) or regex.search(" ".join(read_cmdline(pid))):
            matches.append(pid)
    roots = _topmost(matches, table)
    if not roots:
        raise TargetError(f"target {spec!r} matches no process (searched command lines and names)")
    return [TargetRoot(pid, f"command line matches {pattern!r}") for pid in roots]


def _resolve_port(spec: str, port: int, table: ProcTable, excluded: set[int]) -> list[TargetRoot]:
    inodes = {s.inode for s in listening_tcp_sockets() if s.port == port}
    if inodes:
        holders = pids_holding_inodes(inodes, (p for p in table.stats if p not in excluded))
        if holders:
            roots = _topmost([_topmost_holder(pid, inodes, table, excluded) for pid in holders.values()], table)
            return [TargetRoot(pid, f"listens on :{port}") for pid in roots]
    asks = re.compile(rf"(?:^|\s)--port(?:=|\s+){port}(?:\s|$)")
    matches = [pid for pid in table.stats
               if pid not in excluded and not table.is_kernel_thread(pid)
               and asks.search(" ".join(read_cmdline(pid)))]
    roots = _topmost(matches, table)
    if not roots:
        raise TargetError(f"nothing listens on port {port} and no command line asks for --port {port}")
    return [TargetRoot(pid, f"command line asks for --port {port} (nothing listens on it)") for pid in roots]


def _tree_sums(root: int, table: ProcTable) -> tuple[int, int]:
    """(RSS bytes, CPU ticks) summed over the subtree: a rough cost for ranking candidates."""
    rss = ticks = 0
    for pid in table.subtree(root):
        stat = table.stats[pid]
        rss += stat.rss_pages * PAGE_SIZE
        ticks += stat.utime + stat.stime
    return rss, ticks


def _group_root(pid: int, table: ProcTable, excluded: set[int]) -> int:
    """Climb to the top of PID's process group (a job launched from a shell is one group;
    multiprocessing workers inherit it), staying below triage's own lineage."""
    current = pid
    while True:
        parent = table.parent(current)
        if not parent or parent <= 1 or parent in excluded or parent not in table.stats:
            return current
        if table.stats[parent].pgrp != table.stats[current].pgrp:
            return current
        current = parent


def _auto_pick(table: ProcTable, excluded: set[int], gpu_pids: Sequence[int]) -> list[TargetRoot]:
    roots: list[TargetRoot] = []
    taken: set[int] = set()
    gpu_roots = _topmost([p for p in gpu_pids if p in table.stats and p not in excluded], table)
    for pid in gpu_roots:
        roots.append(TargetRoot(pid, "holds a GPU"))
        taken.update(table.subtree(pid))
    own_group = table.stats[os.getpid()].pgrp if os.getpid() in table.stats else -1
    candidates: dict[int, tuple[int, int]] = {}
    for pid, stat in table.stats.items():
        if (pid in excluded or pid in taken or pid == 1 or table.is_kernel_thread(pid)
                or stat.pgrp == own_group or stat.state == "Z"):
            continue
        root = _group_root(pid, table, excluded)
        if root not in candidates and root not in taken:
            candidates[root] = _tree_sums(root, table)
    if candidates:
        by_memory = max(candidates, key=lambda r: candidates[r][0])
        rss = candidates[by_memory][0]
        roots.append(TargetRoot(by_memory, f"tree with the most memory (RSS sum {rss / 2**20:.0f} MiB)"))
        rest = {r: v for r, v in candidates.items() if r != by_memory}
        if rest and len(roots) - len(gpu_roots) < MAX_AUTO_TREES:
            by_cpu = max(rest, key=lambda r: rest[r][1])
            if rest[by_cpu][1] > 0:
                roots.append(TargetRoot(by_cpu, f"tree with the most CPU time ({rest[by_cpu][1] / CLOCK_TICKS:.0f} s)"))
    if not roots:
        raise TargetError("no candidate processes to watch: give a TARGET (PID, name:REGEX or :PORT)")
    return roots


def _pids_only(specs: Sequence[str]) -> bool:
    try:
        return bool(specs) and all(read_target_spec(spec)[0] == "pid" for spec in specs)
    except TargetError:  # a malformed spec: resolve_targets raises it with its one line
        return False


def resolve_targets(
    specs: Sequence[str],
    port: Optional[int] = None,
    gpu_pids: Sequence[int] = (),
    table: Optional[ProcTable] = None,
) -> Target:
    """Resolve TARGET specs into roots. Raises TargetError with one line for the user.

    No specs: with `port`, the process behind that port; else candidates (GPU holders, then the
    trees using most memory and most CPU), with `auto_picked=True` and the reason in each root.
    """
    if table is None and _pids_only(specs):
        # PIDs alone are each checked in /proc itself: no pass over the machine's every process (~20 ms a
        # thousand processes), which the app's opening paid before every pane held data (#18)
        table = ProcTable()
    table = table if table is not None else read_proc_table()
    excluded = _own_lineage(table)
    roots: list[TargetRoot] = []
    if not specs and port is not None:
        try:
            roots = _resolve_port(f":{port}", port, table, excluded)
        except TargetError:
            roots = []
        if roots:
            return Target(specs=(), roots=tuple(roots))
    if not specs:
        return Target(specs=(), roots=tuple(_auto_pick(table, excluded, gpu_pids)), auto_picked=True)
    for spec in specs:
        kind, value = read_target_spec(spec)  # a malformed spec: TargetSpecError, a usage error
        if kind == "pid":
            found = _resolve_pid(int(value), table)
        elif kind == "name":
            found = _resolve_regex(spec, str(value), table, excluded)
        else:
            found = _resolve_port(spec, int(value), table, excluded)
        for root in found:
            if all(root.pid != r.pid for r in roots):
                roots.append(root)
    return Target(specs=tuple(specs), roots=tuple(roots))


def tree_pids(target: Target, table: Optional[ProcTable] = None) -> list[int]:
    """The roots and their whole subtrees, each PID once, parents before children."""
    table = table if table is not None else read_proc_table()
    out: list[int] = []
    seen: set[int] = set()
    for root in target.roots:
        for pid in table.subtree(root.pid):
            if pid not in seen:
                seen.add(pid)
                out.append(pid)
    return out

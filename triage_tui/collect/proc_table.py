"""One fast pass over /proc: every process's stat line and the parent→children map.

Replaces `ps -eo pid,ppid,stat,comm,time,nlwp` for the whole machine. It reads /proc/PID/stat
directly (one open+read per process, no psutil objects) because it runs every tick over every
process on the node: a refresh of 1,000 processes must stay in the tens of milliseconds.

Given the previous pass, a stat line that is byte for byte the one read then is not parsed again:
its ProcStat is the previous one, the same object. On an idle tree almost every line is unchanged
(8 of 1,075 moved in a second here), so the pass costs the reads, not the parses, and a collector
can tell an unchanged line by identity (`table.stats[pid] is previous.stats[pid]`).

A collector that watches a tree (`skip_known`) needs the stat lines of the tree (`watch`) and of any process
new since the last pass (a tree process's new child is a new PID), not those of the rest of the machine: a
process outside the tree that was there last pass cannot have become part of it (it would have to be a child
of a tree process, and a child is born with a new PID; an orphan is re-parented up, never into another tree).
Such a process is read once every RESCAN_TICKS passes (staggered by PID) and is otherwise not in the table,
so nothing stale of it is ever shown; what reads a process outside the tree reads it itself. The rescans bound
the one case the listing cannot tell: a PID freed and taken again by a new child of the tree within a tick
(after the PID counter wrapped) is found within RESCAN_TICKS passes. On this project's VM the rest of the
machine was ~1,100 of 2,100 processes: their open/read/close was most of a 15-20 ms pass.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Optional

from ..parse.procfs import ProcStat, parse_stat
from .held_files import HeldProcFiles

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


_CHUNK = 65536
RESCAN_TICKS = 10  # a process outside the tree is read once in this many passes (skip_known)
PF_KTHREAD = 0x00200000  # include/linux/sched.h


def read_bytes(path: str) -> bytes:
    """Read a small /proc file whole with raw os.open/os.read: a buffered file object costs about
    twice as much, and this runs thousands of times per tick. Raises OSError (FileNotFoundError
    when the process is gone). Only for files the kernel writes in one go (stat, status, io, cmdline,
    cgroup files): a short read ends it. Files of many records use read_seq_text."""
    fd = os.open(path, os.O_RDONLY)
    try:
        data = os.read(fd, _CHUNK)
        if len(data) < _CHUNK:
            return data
        parts = [data]
        while True:
            more = os.read(fd, _CHUNK)
            if not more:
                return b"".join(parts)
            parts.append(more)
    finally:
        os.close(fd)


def read_seq_text(path: str) -> str:
    """A /proc file of many records (mountinfo, maps, net/tcp): the kernel's seq_file hands these out about a
    page per read(), so a short read is not the end; read until read() returns nothing."""
    fd = os.open(path, os.O_RDONLY)
    try:
        parts: list[bytes] = []
        while True:
            more = os.read(fd, _CHUNK)
            if not more:
                return b"".join(parts).decode("utf-8", "replace")
            parts.append(more)
    finally:
        os.close(fd)


def read_text(path: str) -> str:
    """read_bytes, decoded (undecodable bytes replaced: comm and paths are not always UTF-8)."""
    return read_bytes(path).decode("utf-8", "replace")


def boot_time() -> float:
    """Epoch seconds of boot (btime in /proc/stat); start times in stat are ticks after it."""
    try:
        for line in read_text("/proc/stat").splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except OSError:
        pass
    return 0.0


def read_cmdline(pid: int) -> tuple[str, ...]:
    """argv of PID (empty for zombies, kernel threads, or when it cannot be read)."""
    try:
        raw = read_bytes(f"/proc/{pid}/cmdline")
    except OSError:
        return ()
    return tuple(part.decode("utf-8", "replace") for part in raw.rstrip(b"\0").split(b"\0") if part) if raw else ()


@dataclass(frozen=True)
class ProcTable:
    """Every process visible in /proc at one moment (filled once by read_proc_table, then only read)."""

    stats: dict[int, ProcStat] = field(default_factory=dict)
    children: dict[int, list[int]] = field(default_factory=dict)
    lines: dict[int, bytes] = field(default_factory=dict)  # the raw stat line of each PID in `stats`
    parsed: list[int] = field(default_factory=list)  # PIDs whose line was parsed (new or changed) this pass
    listed: set[int] = field(default_factory=set)  # every PID /proc listed in this pass, read or not
    tick: int = 0  # passes since the first (for the staggered rescans)
    # schedstat run counts read by the pass (proc_tree.py: single-threaded tree processes), for the rows
    run_counts: dict[int, int] = field(default_factory=dict)
    # statm lines read by the pass (proc_tree.py: tree processes that did not run), and the PIDs whose statm moved
    # though they did not run (their RSS changed under them: the rows read their status again)
    statm_lines: dict[int, bytes] = field(default_factory=dict)
    rss_moved: set[int] = field(default_factory=set)

    def index_children(self) -> None:
        """Fill `children` from the stat lines' parent PIDs, each list in PID order (once, after a pass)."""
        for stat in self.stats.values():
            self.children.setdefault(stat.ppid, []).append(stat.pid)
        for kids in self.children.values():
            kids.sort()

    def share_children(self, previous: ProcTable) -> bool:
        """Take `previous`'s children map when this pass holds the very ProcStats of the same PIDs (no line was
        parsed: no parent PID can differ); then it is the same object, which says "the same tree" to the caller.
        False (nothing done) otherwise."""
        if self.parsed or self.children or len(self.stats) != len(previous.stats):
            return False
        object.__setattr__(self, "children", previous.children)  # filled once, then only read (see the class)
        return True

    def parent(self, pid: int) -> Optional[int]:
        stat = self.stats.get(pid)
        return stat.ppid if stat else None

    def ancestors(self, pid: int) -> list[int]:
        """PIDs above `pid`, nearest first (stops at PID 0 or a loop)."""
        chain: list[int] = []
        seen = {pid}
        current = self.parent(pid)
        while current and current not in seen:
            chain.append(current)
            seen.add(current)
            current = self.parent(current)
        return chain

    def subtree(self, root: int) -> list[int]:
        """`root` and everything below it, parents before children."""
        if root not in self.stats:
            return []
        out: list[int] = []
        seen: set[int] = set()
        stack = [root]
        while stack:
            pid = stack.pop()
            if pid in seen:
                continue
            seen.add(pid)
            out.append(pid)
            stack.extend(reversed(self.children.get(pid, ())))
        return out

    def is_kernel_thread(self, pid: int) -> bool:
        """By the kernel's own PF_KTHREAD flag: "PID 2 and its children" holds only in the initial PID
        namespace — in a container or a PID namespace, PID 2 is an ordinary process (often the server)."""
        stat = self.stats.get(pid)
        return stat is not None and bool(stat.flags & PF_KTHREAD)


def read_proc_table(proc: str = "/proc", previous: Optional[ProcTable] = None,
                    held: Optional[HeldProcFiles] = None, watch: Collection[int] = (),
                    skip_known: bool = False) -> ProcTable:
    """Read /proc/*/stat once. A process that exits during the pass is simply not in the table.
    `previous`: the last pass; an unchanged line keeps its ProcStat (see the module doc). `held`, `watch`:
    the stat files of the PIDs in `watch` (last tick's tree) are read through fds kept open across ticks
    (held_files.py), each for the process the previous pass saw under that PID. `skip_known`: a PID listed in
    `previous` and not in `watch` is read only on its rescan pass (see the module doc)."""
    table = ProcTable(tick=previous.tick + 1 if previous is not None else 0)
    stats, lines, parsed, listed, tick = table.stats, table.lines, table.parsed, table.listed, table.tick
    old_lines = previous.lines if previous is not None else {}
    old_stats = previous.stats if previous is not None else {}
    known: Collection[int] = previous.listed if skip_known and previous is not None else ()
    for name in os.listdir(proc):
        if not name.isdecimal():
            continue
        pid = int(name)
        listed.add(pid)
        if pid in known and pid not in watch and (pid + tick) % RESCAN_TICKS:
            continue  # outside the tree since the last pass: it cannot have joined it (module doc)
        old = old_stats.get(pid) if held is not None and pid in watch else None
        try:
            raw = held.read(pid, old.starttime, "stat") if old is not None and held is not None \
                else read_bytes(f"{proc}/{name}/stat")
        except OSError:
            continue  # gone between listdir and open, or unreadable: not part of this table
        if old_lines.get(pid) == raw:
            stats[pid] = old_stats[pid]
            lines[pid] = raw
            continue
        stat = parse_stat(raw.decode("utf-8", "replace"))
        if stat is not None:
            if old is not None and held is not None and stat.starttime != old.starttime:
                held.forget((pid, "stat"))  # a new process under the PID: held next tick under its own start
            stats[stat.pid] = stat
            lines[stat.pid] = raw
            parsed.append(stat.pid)
    table.index_children()
    return table

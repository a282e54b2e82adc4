"""The target's processes found by following its tree down from the roots, not by listing the machine.

Replaces `pstree -p PID` done as `ls /proc` plus every process's stat line: the kernel keeps each thread's
children, and /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN, Linux 3.5+) prints them. A pass reads the
stat line of every process of last tick's tree (held fds, held_files.py) and of the roots; the children of a
process are read again only when it may have new ones:

- it is new to the tree (or its PID now names another process: a new start time), or its number of threads
  changed: the children of all of its threads;
- its stat line changed or, single-threaded, its schedstat run count moved: it ran, and only a process that
  runs can fork (the count is read here once and handed to the process collector, which needs it anyway).
  Then the children of its main thread (of a single-threaded process, all of them): a busy process of 60
  threads would otherwise cost 60 reads every pass. Unless fewer PIDs were created on the node since the
  pass before last than processes ran (new_pids.py): then only the processes those new PIDs name as their
  parent have their children read (of every thread, up to THREADS_PER_TURN threads; of the main thread
  beyond), whether they ran or not; a process that ran and is no new PID's parent did not fork;
- its turn in a slow rotation: the children of all of its threads, once in REWALK_TICKS passes (staggered by
  PID), less often for a process of many threads (once in REWALK_TICKS per THREADS_PER_TURN threads, so that
  the rotation costs at most ~16 files per process per 10 passes). That bounds what the signals above miss: a
  child started from a non-main thread of a process that did not change its thread count (found within
  REWALK_TICKS passes for up to 16 threads), or a child the kernel's list did not show yet (the file is
  documented as racy while children come and go).

Which processes are in the tree is then decided as the machine-wide pass decided it: from each stat line's
parent PID, the roots and everything below them (ProcTable.subtree). So a process whose parent exits and
which the kernel re-parents to PID 1 or a subreaper outside the tree (a double fork, a daemon) leaves the
tree at the next pass, exactly as before; one re-parented to a subreaper inside the tree stays (its new
parent is read every pass). Every process of last tick's tree is read again, so no re-parenting needs a walk.

What cannot be followed: a kernel without CONFIG_PROC_CHILDREN, or children files that cannot be read
(a hardened /proc). Then `follow` returns None with the reason in `fallback`, and the caller reads the
machine-wide pass instead (proc_table.read_proc_table) and says so in its source status. Pure Python 3.8,
standard library only (the agent bundle).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from typing import Optional

from ..parse.procfs import ProcStat, parse_stat
from .held_files import HeldProcFiles
from .new_pids import NewPids
from .proc_table import ProcTable, read_bytes, read_seq_text

_CHUNK = 4096  # a stat or schedstat line is a few hundred bytes (held_files.py reads the same)
REWALK_TICKS = 10  # every tree process's children are read at least once in this many passes
CHILDREN_FILE = "children"  # the file's name under /proc/PID/task/TID (a test points it elsewhere)


THREADS_PER_TURN = 16  # a process of more threads has its turn less often: once in REWALK_TICKS per 16 threads


def _threads_to_read(stat: ProcStat) -> int:
    """A new PID names this process its parent: the children of every thread (one of them forked), but of the
    main thread only for a process of more than THREADS_PER_TURN threads (the rotation reads the others)."""
    return stat.num_threads if stat.num_threads <= THREADS_PER_TURN else 1


def _on_turn(pid: int, tick: int, threads: int) -> bool:
    """Whether this pass reads the children of every thread of `pid` on the rotation (staggered by PID). A
    process of many threads costs a children file per thread, so its turn comes less often: the rotation reads
    at most ~THREADS_PER_TURN files per process per REWALK_TICKS passes, whatever the threads."""
    return (pid + tick) % (REWALK_TICKS * (1 + (max(threads, 1) - 1) // THREADS_PER_TURN)) == 0


class Unfollowable(Exception):
    """The children files cannot be read on this node: the machine-wide pass must be used."""


class TreeFollower:
    """Reads the tree below a target's roots, pass after pass (see the module doc)."""

    def __init__(self, proc: str = "/proc") -> None:
        self.proc = proc
        self.fallback = ""  # why the tree is not followed ("" while it is): the machine-wide pass is read
        self.walked = 0  # processes whose children were read, since start (for the tests and the benchmarks)
        self.new_pids = NewPids(proc)

    def follow(self, roots: Sequence[int], tree: Collection[int], previous: Optional[ProcTable],
               held: Optional[HeldProcFiles]) -> Optional[ProcTable]:
        """This pass's table of the tree below `roots`: the stat lines of the roots, of `tree` (last tick's
        tree) and of every child found by a walk; `previous` the last pass (its unchanged lines keep their
        ProcStat objects, as read_proc_table keeps them). None when the tree cannot be followed here."""
        if self.fallback:
            return None
        table = ProcTable(tick=previous.tick + 1 if previous is not None else 0)
        old_lines = previous.lines if previous is not None else {}
        old_stats = previous.stats if previous is not None else {}
        old_counts = previous.run_counts if previous is not None else {}
        todo = [*roots, *(pid for pid in tree if pid not in roots)]
        seen: set[int] = set()
        self.new_pids.start_pass()  # before any children file is read: a fork after this is in the next window
        try:
            self._walk(todo, seen, table, old_lines, old_stats, old_counts, held, frozenset(roots),
                       previous.statm_lines if previous is not None else None)
        except Unfollowable:
            return None
        if previous is None or not table.share_children(previous):
            table.index_children()
        return table

    def _walk(self, todo: list[int], seen: set[int], table: ProcTable, old_lines: Mapping[int, bytes],
              old_stats: Mapping[int, ProcStat], old_counts: Mapping[int, int], held: Optional[HeldProcFiles],
              roots: Collection[int] = (), old_statm: Optional[Mapping[int, bytes]] = None) -> None:
        """Last tick's tree first, through the held fds and nothing else while a process is as it was (one
        `pread` of each file, no call per read: the loop every tick runs over the whole tree); then everything
        else (new, changed, gone, not held, the roots, the children a walk found) the general way.

        A single-threaded process whose schedstat run count did not move has not run since the last pass: of
        the figures its stat line gives, only its RSS can have moved (reclaim, a truncated file it maps, the OOM
        reaper: the kernel's doing, not its own) and its parent PID (its parent exited). So its statm line (the
        mm's exact page counts, cheaper for the kernel to write than stat) is read instead of the stat line; the
        same statm as last pass keeps last pass's stat line and ProcStat, and its parent is checked after the
        walk (a parent that is not as it was: the stat line is read after all). A statm that moved marks the
        process in `table.rss_moved` (its status is read again, whatever its stat line says: stat's RSS is an
        approximate counter)."""
        stats, lines, run_counts, tick = table.stats, table.lines, table.run_counts, table.tick
        statm_lines, rss_moved = table.statm_lines, table.rss_moved
        old_statm = old_statm if old_statm is not None else {}
        fds = held.fds if held is not None else {}
        pread = os.pread
        general: list[int] = []
        fresh: dict[int, bytes] = {}  # stat lines read here that changed: not read a second time below
        fresh_counts: dict[int, int] = {}  # and their run counts
        carried: list[int] = []  # not run, the same statm: last pass's stat line kept (their parents checked below)
        ran: list[int] = []  # it ran (may have forked): its children are read after the walk, or the new PIDs'
        preads = 0
        for pid in todo:
            old = old_stats.get(pid)
            held_stat = fds.get((pid, "stat"))
            if old is None or held_stat is None or held_stat[1] != old.starttime:
                general.append(pid)
                continue
            count = None
            single = old.num_threads == 1 and old.state != "Z"
            if single:
                held_count = fds.get((pid, "schedstat"))
                if held_count is None or held_count[1] != old.starttime:
                    general.append(pid)
                    continue
                try:
                    count = int(pread(held_count[0], _CHUNK, 0).split()[2])
                except (OSError, ValueError, IndexError):
                    general.append(pid)
                    continue
                preads += 1
                if count and count == old_counts.get(pid) and pid not in roots:
                    before_m = old_statm.get(pid)
                    held_m = fds.get((pid, "statm"))
                    if before_m is not None and held_m is not None and held_m[1] == old.starttime:
                        try:
                            statm = pread(held_m[0], _CHUNK, 0)
                        except OSError:
                            statm = b""
                        preads += 1
                        if statm == before_m:
                            seen.add(pid)
                            stats[pid] = old
                            lines[pid] = old_lines[pid]
                            run_counts[pid] = count
                            statm_lines[pid] = statm
                            carried.append(pid)
                            if _on_turn(pid, tick, 1):
                                general.extend(self._children(pid, 1))
                            continue
                        if statm:
                            statm_lines[pid] = statm
                            rss_moved.add(pid)  # its pages moved while it slept: its status is read again
            try:
                raw = pread(held_stat[0], _CHUNK, 0)
            except OSError:
                raw = b""
            if not raw or raw != old_lines.get(pid):
                general.append(pid)  # changed or gone: parsed below (a gone one read again, to say why)
                if raw:
                    fresh[pid] = raw
                    preads += 1
                    if count is not None:
                        fresh_counts[pid] = count
                continue
            preads += 1
            if count is not None:
                run_counts[pid] = count
                if count == old_counts.get(pid) and pid not in statm_lines and pid not in roots and held is not None:
                    self._statm(pid, old.starttime, held, statm_lines)  # not run: next pass compares its statm
            seen.add(pid)
            stats[pid] = old
            lines[pid] = raw
            if _on_turn(pid, tick, old.num_threads):
                general.extend(self._children(pid, old.num_threads))
            elif count is not None and count != old_counts.get(pid):
                ran.append(pid)
        if held is not None:
            held.preads += preads
        self._walk_generally(general, seen, table, old_lines, old_stats, old_counts, held, fresh, fresh_counts, ran)
        forked: Optional[set[int]] = None
        read: set[int] = set()
        while ran:  # the processes that ran: their children, or (fewer new PIDs) the new PIDs' parents'
            if forked is None:
                forked = self.new_pids.parents(at_most=len(ran))
            if forked is None:
                todo = [child for pid in ran for child in self._children(pid, 1)]
            else:
                todo = [child for pid in sorted(forked - read) if pid in table.stats
                        for child in self._children(pid, _threads_to_read(table.stats[pid]))]
                read |= forked
            ran = []
            self._walk_generally(todo, seen, table, old_lines, old_stats, old_counts, held, ran=ran)
        self._check_parents(carried, table, old_lines, old_stats, held)

    @staticmethod
    def _statm(pid: int, starttime: int, held: HeldProcFiles, out: dict[int, bytes]) -> None:
        """The statm line of a process that did not run, for the next pass to compare (held only while fds
        can be: beyond the bound, its stat line is read every pass instead)."""
        if (pid, "statm") not in held.fds and len(held) >= held.limit:
            return
        try:
            out[pid] = held.read(pid, starttime, "statm")
        except OSError:
            pass

    def _check_parents(self, carried: list[int], table: ProcTable, old_lines: Mapping[int, bytes],
                       old_stats: Mapping[int, ProcStat], held: Optional[HeldProcFiles]) -> None:
        """A process carried without its stat line keeps last pass's parent PID: true while that parent is still
        the process it was (the same ProcStat this pass: it did not exit, so nobody was re-parented). Otherwise
        its stat line is read now (a parent that exits re-parents its children, which need not run)."""
        stats, lines, parsed = table.stats, table.lines, table.parsed
        for pid in carried:
            old = old_stats[pid]
            if stats.get(old.ppid) is old_stats.get(old.ppid, stats):  # the parent as it was
                continue
            try:
                raw = held.read(pid, old.starttime, "stat") if held is not None else read_bytes(f"{self.proc}/{pid}/stat")
            except OSError:
                raw = b""
            stat = parse_stat(raw.decode("utf-8", "replace")) if raw and raw != old_lines.get(pid) else old
            if not raw or stat is None or stat.pid != pid or stat.starttime != old.starttime:
                for kept in (stats, lines, table.run_counts, table.statm_lines):
                    kept.pop(pid, None)  # gone (or another process under the PID): not in this table
                continue
            if stat is not old:
                stats[pid], lines[pid] = stat, raw
                parsed.append(pid)

    def _walk_generally(self, todo: list[int], seen: set[int], table: ProcTable, old_lines: Mapping[int, bytes],
                        old_stats: Mapping[int, ProcStat], old_counts: Mapping[int, int],
                        held: Optional[HeldProcFiles], fresh: Optional[dict[int, bytes]] = None,
                        fresh_counts: Optional[dict[int, int]] = None, ran: Optional[list[int]] = None) -> None:
        """The general way, to the end of `todo` and of every child found; a process that ran only joins `ran`
        (its children are the caller's to read, or not), or with `ran` None has its main thread's read here."""
        stats, lines, parsed, run_counts, tick = table.stats, table.lines, table.parsed, table.run_counts, table.tick
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            old = old_stats.get(pid)
            raw = fresh.pop(pid, b"") if fresh else b""
            try:
                if not raw:
                    raw = held.read(pid, old.starttime, "stat") if old is not None and held is not None \
                        else read_bytes(f"{self.proc}/{pid}/stat")
            except OSError:
                continue  # gone, or unreadable: not part of this table (as in the machine-wide pass)
            changed = old_lines.get(pid) != raw
            if changed:
                stat = parse_stat(raw.decode("utf-8", "replace"))
                if stat is None or stat.pid != pid:
                    continue
                if old is not None and stat.starttime != old.starttime:
                    if held is not None:
                        held.forget((pid, "stat"))  # a new process under the PID: held next pass under its own start
                    old = None
                parsed.append(pid)
            else:
                stat = old_stats[pid]
            stats[pid] = stat
            lines[pid] = raw
            count = fresh_counts.pop(pid, None) if fresh_counts and old is not None else None
            if count is not None and stat.num_threads == 1 and stat.state != "Z":
                run_counts[pid] = count  # read just before its stat line, in the loop above
            elif stat.num_threads == 1 and stat.state != "Z" and held is not None:
                try:
                    count = int(held.read(pid, stat.starttime, "schedstat").split()[2])
                    run_counts[pid] = count
                except (OSError, ValueError, IndexError):
                    count = None
            else:
                count = None
            if old is None or stat.num_threads != old.num_threads or _on_turn(pid, tick, stat.num_threads):
                todo.extend(self._children(pid, stat.num_threads))  # every thread's
            elif changed or (count is not None and count != old_counts.get(pid)):
                if ran is not None:
                    ran.append(pid)
                else:
                    todo.extend(self._children(pid, 1))  # the main thread's (a process's only thread, mostly)

    def _children(self, pid: int, threads: int) -> list[int]:
        """The children of every thread of `pid` (a process started from a thread is that thread's child); with
        `threads` 1, of its main thread only (the task whose TID is the PID).
        Raises Unfollowable (and sets `fallback`) when a live process's children file cannot be read."""
        self.walked += 1
        base = f"{self.proc}/{pid}/task"
        tids: Sequence[str] = [str(pid)]
        if threads != 1:
            try:
                tids = [t for t in os.listdir(base) if t.isdecimal()]
            except OSError:
                return []  # gone since its stat line was read
        out: list[int] = []
        for tid in tids:
            try:
                raw = read_seq_text(f"{base}/{tid}/{CHILDREN_FILE}")  # a page per read(): read to the end
            except PermissionError as exc:
                self._unfollowable(f"{base}/{tid}/{CHILDREN_FILE}: {exc.strerror or 'permission denied'}")
            except OSError:
                if os.path.exists(f"{base}/{tid}/stat"):  # the thread is there and its children file is not
                    self._unfollowable(f"{base}/{tid}/{CHILDREN_FILE} absent (a kernel without CONFIG_PROC_CHILDREN)")
                continue  # the thread ended between the listing and the read
            out.extend(int(part) for part in raw.split())
        return out

    def _unfollowable(self, why: str) -> None:
        self.fallback = f"machine-wide /proc pass: {why}"
        raise Unfollowable(self.fallback)

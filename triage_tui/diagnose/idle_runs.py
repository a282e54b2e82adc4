"""How long each process has been idle, kept up to date one snapshot at a time.

`observations.idle_seconds` walks the whole history back for one PID; the engine asks it for every
process of the tree every tick, so with a 300-snapshot history and 1,000 processes a tick walked
300,000 rows. IdleRuns gives the same answers from runs: per PID, consecutive snapshots in which
its CPU time and bytes read did not change. Within a run, walking back only makes the idle test
easier (the same growth against a threshold that grows with the span), so only the newest member
of each run needs the test, and an idle process has one run whatever the history's length.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Optional

from ..model.snapshot import ProcessInfo, Snapshot
from ..model.unavailable import is_known
from .observations import Thresholds


@dataclass
class _Run:
    first_at: float  # taken_at of its oldest snapshot still in the history
    last_at: float  # taken_at of its newest snapshot
    cpu: float
    read: Optional[int]  # None: not known in these snapshots (then reads do not count)


class IdleRuns:
    """Mirror of a history (the snapshots before the latest) as runs per PID; see module doc.

    The history's oldest snapshot caps the first run of each PID (`_floor`): the walk stops there. Only a PID of
    several runs can lose one to the trimming (every PID's newest run reaches the snapshot added last), so a
    trim looks at those alone, not at every PID of the tree."""

    def __init__(self) -> None:
        self._runs: dict[int, deque[_Run]] = {}
        self.last_at: Optional[float] = None
        self._last_rows: tuple[ProcessInfo, ...] = ()  # the tuple of rows of the snapshot added last
        self._trimmed_at: Optional[float] = None
        self._floor = float("-inf")  # taken_at of the history's oldest snapshot: no run begins before it
        self._several: set[int] = set()  # PIDs of more than one run
        self._whole = False  # every PID of the last snapshot added still has its runs (none trimmed away)
        # the first run of each idle PID, when every PID of `_quiet_rows` (the rows added last) was answered from
        # its one run: the same rows answer the same again, only capped at a later floor (see idle_since_times)
        self._quiet: Optional[dict[int, _Run]] = None
        self._quiet_rows: tuple[ProcessInfo, ...] = ()
        self.answered_quietly = False  # the last idle_since_times came from `_quiet` (nothing but the floor moved)

    def reset(self) -> None:
        self._runs.clear()
        self.last_at = None
        self._last_rows = ()
        self._trimmed_at = None
        self._floor = float("-inf")
        self._several.clear()
        self._whole = False
        self._quiet, self._quiet_rows = None, ()

    def trim(self, oldest_at: float) -> None:
        """Forget what lies before the history's oldest snapshot (taken at `oldest_at`)."""
        if oldest_at == self._trimmed_at:
            return  # the same oldest snapshot as at the last trim, and every run added since is newer
        self._trimmed_at = oldest_at
        if self.last_at is not None and oldest_at > self.last_at:  # the whole mirrored history is gone
            self._runs.clear()
            self._several.clear()
            self._whole = False
            self._quiet, self._quiet_rows = None, ()
        self._floor = max(self._floor, oldest_at)  # the first run goes on through the oldest snapshot kept
        for pid in list(self._several):
            runs = self._runs.get(pid)
            while runs and runs[0].last_at < oldest_at:
                runs.popleft()
            if runs is None or len(runs) < 2:
                self._several.discard(pid)  # its newest run is never trimmed: it ends at the last snapshot added

    def _first(self, run: _Run) -> float:
        return run.first_at if run.first_at > self._floor else self._floor

    def add(self, snapshot: Snapshot) -> None:
        """Append a snapshot (after its own idle figures were taken)."""
        at = snapshot.taken_at
        if snapshot.processes is self._last_rows and snapshot.processes and self._whole:
            # last snapshot's very tuple (a quiet tree): the same PIDs with the same CPU time and bytes read, so
            # each PID's newest run goes on through this snapshot, as the walk below would conclude
            for runs in self._runs.values():
                runs[-1].last_at = at
            self.last_at = at
            return
        self._last_rows, self._whole = snapshot.processes, True
        self._quiet, self._quiet_rows = None, ()
        present: set[int] = set()
        for p in snapshot.processes:
            if p.pid in present:
                continue  # Snapshot.process() answers with a PID's first row
            present.add(p.pid)
            if not is_known(p.cpu_time_s):
                self._runs.pop(p.pid, None)  # the walk back stops at a row without CPU time
                self._several.discard(p.pid)
                continue
            read = p.read_bytes if is_known(p.read_bytes) else None
            runs = self._runs.setdefault(p.pid, deque())
            if runs and runs[-1].cpu == p.cpu_time_s and runs[-1].read == read:
                runs[-1].last_at = at
            else:
                runs.append(_Run(at, at, p.cpu_time_s, read))
                if len(runs) > 1:
                    self._several.add(p.pid)
        for pid in [pid for pid in self._runs if pid not in present]:
            del self._runs[pid]  # absent from a snapshot: the walk back stops there
            self._several.discard(pid)
        self.last_at = at

    def idle_since(self, latest: Optional[ProcessInfo], latest_at: float, th: Thresholds) -> Optional[float]:
        """What observations.idle_since_at answers for `latest` over the runs added so far."""
        if latest is None or not is_known(latest.cpu_time_s):
            return None
        since: Optional[float] = None
        runs = self._runs.get(latest.pid, ())
        for i in range(len(runs) - 1, -1, -1):
            run = runs[i]
            span = latest_at - run.last_at
            grew = latest.cpu_time_s - run.cpu
            read = latest.read_bytes - run.read if is_known(latest.read_bytes) and run.read is not None else 0
            if grew > max(0.05, th.idle_cpu_rate * span) or read > 0:
                break
            since = run.first_at if i else self._first(run)
        return since

    def idle_seconds(self, latest: Optional[ProcessInfo], latest_at: float, th: Thresholds) -> Optional[float]:
        """What observations.idle_seconds answers for `latest` over the runs added so far."""
        since = self.idle_since(latest, latest_at, th)
        return None if since is None else latest_at - since

    def idle_since_times(self, snapshot: Snapshot, th: Thresholds) -> dict[int, float]:
        """Since when each PID of `snapshot` (its first row, as Snapshot.process answers) is idle, for the idle
        ones, in one pass: a quiet PID with one run whose CPU time and bytes read are the row's is idle since that
        run began, which is what the walk answers for it, without the walk. The rows added last asked again (a
        quiet tree) give the same runs' beginnings, capped at the history's start: no pass over the rows."""
        quiet = self._quiet
        if quiet is not None and snapshot.processes is self._quiet_rows and self._whole:
            self.answered_quietly = True
            floor = self._floor
            return {pid: run.first_at if run.first_at > floor else floor for pid, run in quiet.items()}
        self.answered_quietly = False
        runs_of = self._runs
        out: dict[int, float] = {}
        seen: set[int] = set()
        first_runs: Optional[dict[int, _Run]] = {}
        for p in snapshot.processes:
            pid = p.pid
            if pid in seen:
                continue
            seen.add(pid)
            runs = runs_of.get(pid)
            cpu = p.cpu_time_s
            if runs is not None and len(runs) == 1 and isinstance(cpu, float) and runs[0].cpu == cpu:
                run = runs[0]
                read = p.read_bytes
                if run.read is None or not isinstance(read, int) or read <= run.read:
                    out[pid] = self._first(run)
                    if first_runs is not None:
                        first_runs[pid] = run
                    continue
            since = self.idle_since(p, snapshot.taken_at, th)
            if since is not None:
                out[pid] = since
                first_runs = None  # answered by a walk over several runs: it may move with time alone
            elif is_known(cpu):
                first_runs = None  # not idle now, though its rows stay: it may be idle later with time alone
        if snapshot.processes is self._last_rows and self._whole:  # the runs already hold these very rows
            self._quiet, self._quiet_rows = first_runs, snapshot.processes
        return out

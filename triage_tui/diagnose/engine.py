"""The diagnosis engine: pure functions from snapshots (and stack captures) to hypotheses.

`DiagnosisEngine.update` is what the Incident loop calls each tick; `diagnose_once` runs the same
rules over evidence built from pasted text (one look, no history).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Optional

from ..model.diagnosis import Diagnosis, Hypothesis, Observation
from ..model.snapshot import Snapshot
from ..model.stacks import StackCapture
from ..model.text_format import clock
from .hypotheses import Kept, evaluate
from .idle_runs import IdleRuns
from .observations import Thresholds, idle_since_at, observe_snapshots
from .stack_observations import stack_observations
from .wait_graph import wait_observations


class DiagnosisEngine:
    """Keeps the history it needs and updates incrementally, one snapshot at a time.

    History is bounded by count and by age: the longest rule looks back `window_s` seconds.
    """

    def __init__(self, thresholds: Thresholds = Thresholds(), window_s: float = 900.0, max_history: int = 300) -> None:
        self.thresholds = thresholds
        self.window_s = window_s
        self.history: deque[Snapshot] = deque(maxlen=max_history)
        self.changelog: list[str] = []
        self._status: dict[str, str] = {}
        self._stacks: Optional[StackCapture] = None
        self._previous_stacks: Optional[StackCapture] = None
        self._idle = IdleRuns()
        self._idle_stale = False
        self._idle_since: dict[int, float] = {}  # the last Diagnosis's idle_since (shared while unchanged)
        self._observations: tuple[Observation, ...] = ()  # the last Diagnosis's: their unchanged parts are shared
        self._hypotheses: tuple[Hypothesis, ...] = ()
        self._kept: Kept = {}  # each hypothesis and what it was scored from: scored again only when that moved

    def _idle_figures(self, snapshot: Snapshot) -> Optional[dict[int, float]]:
        """Since when each idle process of `snapshot` idles, from the runs, then `snapshot` joins them.
        The runs are rebuilt from the history when they cannot simply be extended (first update,
        time went backwards); None (walk the history instead) while its times are not increasing."""
        if self._idle_stale or self._idle.last_at is None or snapshot.taken_at <= self._idle.last_at:
            self._idle.reset()
            times = [s.taken_at for s in self.history]
            if any(later <= earlier for earlier, later in pairwise(times)):
                self._idle_stale = True
                return None
            for earlier in list(self.history)[:-1]:
                self._idle.add(earlier)
            self._idle_stale = False
        self._idle.trim(self.history[0].taken_at)
        figures = self._idle.idle_since_times(snapshot, self.thresholds)
        self._idle.add(snapshot)
        return figures

    def update(self, snapshot: Snapshot, stacks: Optional[StackCapture] = None) -> Diagnosis:
        self.history.append(snapshot)
        while len(self.history) > 1 and snapshot.taken_at - self.history[0].taken_at > self.window_s:
            self.history.popleft()
        if stacks is not None and stacks is not self._stacks:
            if self._stacks is None or stacks.taken_at > self._stacks.taken_at:
                self._previous_stacks, self._stacks = self._stacks, stacks
        at = snapshot.taken_at
        since_of = self._idle_figures(snapshot)
        quiet = since_of is not None and self._idle.answered_quietly
        if since_of is None:
            history = list(self.history)
            since_of = {p.pid: s for p in snapshot.processes
                        if (s := idle_since_at(history, p.pid, self.thresholds)) is not None}
        idle_of = {pid: at - since for pid, since in since_of.items()}
        observations = shared_observations(
            observe(list(self.history), self._stacks, self.thresholds, self._previous_stacks, idle_of), self._observations)
        hypotheses = shared_hypotheses(evaluate(observations, self._kept), self._hypotheses)
        self._observations, self._hypotheses = observations, hypotheses
        changes = tuple(self._changes(at, hypotheses))
        self.changelog.extend(changes)
        if quiet:
            # the very rows of the last update, answered from the same runs (only the history's start moved): since
            # when each process idles is what the last update said (carried_idle_since's own reasoning), so the
            # last dict, without a pass over the tree
            idle_since = self._idle_since
        else:
            idle_since = carried_idle_since(idle_periods(since_of), self._idle_since, self.history[0].taken_at)
            if idle_since == self._idle_since:
                # the same figures as last tick (a quiet tree: since when each process idles does not move):
                # the same dict, so a long timeline holds one copy and the recorder's diff is an identity check
                # (a new dict of 1,000 floats a tick was ~100 KB a refresh, kept for each of 2,000 Moments)
                idle_since = self._idle_since
        self._idle_since = idle_since
        return Diagnosis(observations, hypotheses, changes, idle_since, self.thresholds.idle_after_s)

    def _changes(self, at: float, hypotheses: Sequence[Hypothesis]) -> list[str]:
        """One line per hypothesis whose status moved: `12:01:07 deadlock possible → likely: why`."""
        out = []
        for h in hypotheses:
            before = self._status.get(h.id)
            self._status[h.id] = h.status
            if before == h.status or (before is None and h.status == "unlikely"):
                continue
            why = h.against[0] if h.status == "ruled out" and h.against else "; ".join(h.for_[:2]) or "no evidence left"
            arrow = f"{before} → {h.status}" if before else f"→ {h.status}"
            out.append(f"{clock(at)} {h.id} {arrow}: {why}")
        return out


def idle_periods(since_of: Mapping[int, Optional[float]]) -> dict[int, float]:
    """Since when each process has done nothing by the engine's rule (no CPU-time growth beyond the
    idle rate, no bytes read), to the millisecond: the time of the look its idle run began at (capped at the
    history's start); processes that just worked are left out. The Processes pane shows these, and marks idle
    those idle for Diagnosis.idle_after_s or more: the rule all-idle uses."""
    return {pid: round(since, 3) for pid, since in since_of.items() if since is not None}


def carried_idle_since(idle_since: dict[int, float], before: Mapping[int, float], oldest_at: float) -> dict[int, float]:
    """`idle_since` with the figures the history's trimming moved kept where they were.

    A process idle through the whole history is "idle since" its oldest snapshot; once the history is
    full that snapshot is dropped every tick, so the figure would move with it, a new dict of every
    process a tick (~100 KB at 1,000 processes, held by every Moment after the first 300 s; and a delta
    of every row in the record). It was idle at the last update since `before[pid]`, and it has stayed
    idle through the history that reaches back past that update: idle since then, as the last Diagnosis
    said (the figure the history alone would give is only where the history now begins)."""
    oldest = round(oldest_at, 3)
    carried: Optional[dict[int, float]] = None
    for pid, since in idle_since.items():
        if since <= oldest + 0.002:  # capped at the history's start (rounded as idle_periods rounds)
            earlier = before.get(pid)
            if earlier is not None and earlier < since:
                if carried is None:
                    carried = dict(idle_since)
                carried[pid] = earlier
    return carried if carried is not None else idle_since


def shared_observations(observations: Sequence[Observation], before: Sequence[Observation]) -> tuple[Observation, ...]:
    """The observations, each holding the last update's PIDs, figures and text where they are the same.

    Every tick's observations are new (their `at` moves), but on a quiet tree what they say is not:
    "1,000 live processes" holds a tuple of 1,000 PIDs (8 KB), two such a tick, held by every Moment of
    the timeline. The same id in the same order is matched (an id may occur more than once)."""
    by_key: dict[tuple[str, int], Observation] = {}
    seen: dict[str, int] = {}
    for o in before:
        n = seen.get(o.id, 0)
        seen[o.id] = n + 1
        by_key[(o.id, n)] = o
    seen.clear()
    out = []
    for o in observations:
        n = seen.get(o.id, 0)
        seen[o.id] = n + 1
        old = by_key.get((o.id, n))
        if old is not None and (old.pids is not o.pids or old.figures is not o.figures or old.text is not o.text):
            pids = old.pids if old.pids == o.pids else o.pids
            figures = old.figures if old.figures == o.figures else o.figures
            text = old.text if old.text == o.text else o.text
            if pids is not o.pids or figures is not o.figures or text is not o.text:
                o = dataclasses.replace(o, pids=pids, figures=figures, text=text)
        out.append(o)
    return tuple(out)


def shared_hypotheses(hypotheses: Sequence[Hypothesis], before: Sequence[Hypothesis]) -> tuple[Hypothesis, ...]:
    """The hypotheses, each the last update's object where it is equal to it (most are, tick after tick:
    21 hypotheses and their evidence rows were ~7 KB a tick kept by every Moment)."""
    by_id = {h.id: h for h in before}
    out = tuple(old if (old := by_id.get(h.id)) is not None and old == h else h for h in hypotheses)
    # all of them the last update's, in its order: its very tuple (a face tells an unchanged verdict by identity)
    return tuple(before) if len(out) == len(before) and all(a is b for a, b in zip(out, before)) else out


def observe(history: Sequence[Snapshot], stacks: Optional[StackCapture] = None,
            thresholds: Thresholds = Thresholds(), previous_stacks: Optional[StackCapture] = None,
            idle_of: Optional[Mapping[int, Optional[float]]] = None) -> list[Observation]:
    """All observations: the snapshots' history plus the latest stack capture."""
    out = observe_snapshots(history, thresholds, idle_of) + wait_observations(history)
    if stacks is not None:
        out += stack_observations(stacks, history[-1] if history else None, previous_stacks,
                                  live=not thresholds.one_look)
    return out


def diagnose_once(snapshot: Snapshot, stacks: Optional[StackCapture] = None,
                  thresholds: Thresholds = Thresholds()) -> Diagnosis:
    """The same rules over one look (pasted text): no growth can be seen, only states and figures."""
    observations = observe([snapshot], stacks, dataclasses.replace(thresholds, one_look=True))
    return Diagnosis(tuple(observations), evaluate(observations), ())

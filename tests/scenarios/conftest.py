"""The live-scenario harness: spawn a real program with a ready handshake, watch it with the real collectors
through `Incident(LocalHost(), ...)`, tick until the expected hypothesis is on top or the tick budget runs out."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

from triage_tui.collect.logs import LogsCollector
from triage_tui.diagnose.engine import DiagnosisEngine
from triage_tui.diagnose.observations import Thresholds
from triage_tui.host.base import CollectOptions, StackOptions
from triage_tui.host.local import LocalHost
from triage_tui.incident import Incident, wants_auto_stacks
from triage_tui.model.moment import Moment

PROGRAMS = str(Path(__file__).with_name("programs.py"))
INTERVAL_S = 0.4  # between ticks; the bound on each scenario is a number of ticks, not seconds
THRESHOLDS = Thresholds(idle_after_s=1.0, silent_after_s=1.0)
READY_TIMEOUT_S = 60.0
RESULTS: dict[str, tuple[str, list[str], int]] = {}  # scenario -> (expected, ranking at the end, ticks used)


@dataclass
class Spawned:
    proc: subprocess.Popen
    ready: list[str]  # the words after "ready"
    lines: list[str] = field(default_factory=list)

    def readline(self, timeout_s: float = READY_TIMEOUT_S) -> str:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        assert ready, "the program did not answer"
        return self.proc.stdout.readline().decode().strip()


@pytest.fixture
def spawn() -> Iterator[Callable[..., Spawned]]:
    started: list[subprocess.Popen] = []

    def _spawn(*args: str, stderr: Optional[int | object] = None) -> Spawned:
        proc = subprocess.Popen([sys.executable, PROGRAMS, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=stderr, start_new_session=True)
        started.append(proc)
        spawned = Spawned(proc, [])
        line = spawned.readline()
        assert line.startswith("ready"), line
        spawned.ready = line.split()[1:]
        return spawned

    yield _spawn
    for proc in started:  # the whole session: the program and every child it made
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)


@dataclass
class Outcome:
    expected: str
    ranking: list[str]
    ticks: int
    last: Moment
    incident: Incident

    @property
    def top(self) -> str:
        return self.ranking[0]

    def hypothesis(self, hid: str):
        return next(h for h in self.last.diagnosis.hypotheses if h.id == hid)


def watch(name: str, pids: list[int], expected: str, max_ticks: int, logs: tuple[str, ...] = (),
          port: Optional[int] = None, stacks_when_idle: bool = False, before_tick: Optional[Callable[[int], None]] = None,
          hold_ticks: int = 1, until: Optional[Callable[[Moment], bool]] = None) -> Outcome:
    """Tick until `expected` has been on top for `hold_ticks` ticks in a row (and `until` holds), at most
    `max_ticks`."""
    host = LocalHost(logs=LogsCollector())
    incident = Incident(host, host.resolve([str(p) for p in pids]), CollectOptions(logs=logs, port=port,
                        interval_s=INTERVAL_S), engine=DiagnosisEngine(THRESHOLDS))
    captured = False
    held = 0
    try:
        for tick in range(1, max_ticks + 1):
            if before_tick is not None:
                before_tick(tick)
            snap = incident.tick()
            if stacks_when_idle and not captured and wants_auto_stacks(snap):
                incident.capture_stacks(options=StackOptions(timeout_s=20.0))
                captured = True
                snap = incident.tick()
            ranking = [h.id for h in snap.diagnosis.hypotheses]
            held = held + 1 if ranking[0] == expected and (until is None or until(snap)) else 0
            if held >= hold_ticks:
                break
            time.sleep(INTERVAL_S)
    finally:
        host.close()
    RESULTS[name] = (expected, ranking, tick)
    return Outcome(expected, ranking, tick, snap, incident)


def pytest_terminal_summary(terminalreporter) -> None:
    """The suite's accuracy, for the README: top-1 and top-2 over the scenarios that ran."""
    if not RESULTS:
        return
    top1 = sum(r[1][0] == r[0] for r in RESULTS.values())
    top2 = sum(r[0] in r[1][:2] for r in RESULTS.values())
    terminalreporter.write_line(f"live scenarios: top-1 {top1}/{len(RESULTS)}, top-2 {top2}/{len(RESULTS)}")
    terminalreporter.write_line("; ".join(f"{n}: {r[1][0]} after {r[2]} ticks" for n, r in sorted(RESULTS.items())))

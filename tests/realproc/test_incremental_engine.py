"""The engine in proportion to change gives what a full computation gives: on a real tree whose rows change
(workers that wake, one that dies and is replaced) and whose quiet rows are handed on as the same objects,
every tick's observations equal those worked out from scratch over the same history (no idle runs, no kept
answers, no per-argv caches)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from triage_tui.diagnose import roles, same_rows
from triage_tui.diagnose.engine import DiagnosisEngine, idle_periods, observe
from triage_tui.diagnose.process_observations import idle_since_at
from triage_tui.diagnose.thresholds import Thresholds
from triage_tui.host.base import CollectOptions
from triage_tui.host.local import LocalHost

# Forks 3 sleepers and 2 wakers (a little work every 50 ms); one sleeper exits when the test says (a line on
# stdin, once the test has seen it alive) and the launcher forks its replacement: quiet rows, changing rows, a
# death and a late sibling in one tree.
TREE = r'''
import os, signal, sys, time
def sleeper(mortal):
    if mortal:
        sys.stdin.readline()
        os._exit(3)
    signal.pause()
def waker():
    while True:
        sum(range(2000))
        time.sleep(0.05)
kids = []
for mortal in (False, False, True):
    pid = os.fork()
    if pid == 0:
        sleeper(mortal)
    kids.append(pid)
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        waker()
    kids.append(pid)
sys.stdout.write("ready\n"); sys.stdout.flush()
os.wait()
if os.fork() == 0:
    sleeper(False)
signal.pause()
'''


def test_every_tick_equals_a_full_computation_on_a_real_changing_tree() -> None:
    proc = subprocess.Popen([sys.executable, "-c", TREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    host = LocalHost()
    th = Thresholds(idle_after_s=0.5)
    engine = DiagnosisEngine(th)
    try:
        assert proc.stdin is not None and proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        target = host.resolve([str(proc.pid)])
        shared = changed = 0
        seen: set[str] = set()
        for tick in range(12):
            if tick == 3:  # seen alive for three ticks, it dies now: after a set time, a busy machine's first
                proc.stdin.write("die\n")  # tick could come too late to see it alive
                proc.stdin.flush()
            snapshot = host.collect(target, CollectOptions(interval_s=0.25))
            previous = engine.history[-1] if engine.history else None
            if previous is not None:
                before = {p.pid: p for p in previous.processes}
                shared += sum(1 for p in snapshot.processes if before.get(p.pid) is p)
                changed += sum(1 for p in snapshot.processes if before.get(p.pid) is not p)
            diagnosis = engine.update(snapshot)
            roles._last_replacements = roles._last_shape = ((), ())  # from scratch: nothing kept from the last call
            roles._blanked.cache_clear()
            same_rows.forget()
            history = list(engine.history)
            scratch = observe(history, None, th)  # idle figures by walking the history
            assert list(diagnosis.observations) == scratch
            walked = {p.pid: idle_since_at(history, p.pid, th) for p in snapshot.processes}
            assert diagnosis.idle_since == idle_periods(walked)  # the idle runs' answers
            seen |= {o.id for o in diagnosis.observations}
            time.sleep(0.25)
        assert shared > 0 and changed > 0  # both paths were taken: rows handed on, rows re-read
        assert {"worker-exited", "worker-replaced"} <= seen, seen  # the death and the late sibling were compared
    finally:
        host.close()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()

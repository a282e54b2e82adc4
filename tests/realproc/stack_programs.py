"""Stuck programs for the stack-capture tests, each started with a ready handshake.

A program prints one JSON line on stdout when every process and thread it starts is about to block; the
test reads that line, then waits for the kernel to report each of those threads asleep (state S) — the
handshake cannot say "blocked" itself, since the print necessarily comes just before the blocking call.
Each program runs in its own session so the fixture kills its whole group, whatever happens in the test.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# N workers on a barrier of N parties; the last rank never arrives: it waits elsewhere.
BARRIER_WORKERS = r'''
import json, multiprocessing as mp, os, sys, threading

def helper_loop(stop):
    stop.wait()                      # a helper thread present in every worker: never odd

def elsewhere(ready):
    ready.put(os.getpid())
    threading.Event().wait()         # the rank that is not at the barrier

def worker(rank, n, barrier, ready):
    threading.Thread(target=helper_loop, args=(threading.Event(),), name="helper", daemon=True).start()
    if rank == n - 1:
        elsewhere(ready)
    ready.put(os.getpid())
    barrier.wait()

n = int(sys.argv[1])
ctx = mp.get_context("fork")
barrier, ready = ctx.Barrier(n), ctx.Queue()
procs = [ctx.Process(target=worker, args=(r, n, barrier, ready), daemon=True) for r in range(n)]
for p in procs:
    p.start()
for _ in procs:
    ready.get()
print(json.dumps({"launcher": os.getpid(), "workers": [p.pid for p in procs]}), flush=True)
for p in procs:
    p.join()
'''

DEADLOCK = r'''
import json, os, threading
lock_a, lock_b = threading.Lock(), threading.Lock()
both_hold = threading.Barrier(3)
tids = {}

def first():
    tids["first"] = threading.get_native_id()
    with lock_a:
        both_hold.wait()
        with lock_b:
            pass

def second():
    tids["second"] = threading.get_native_id()
    lock_b.acquire()
    both_hold.wait()
    lock_a.acquire()

threads = [threading.Thread(target=first, name="first"), threading.Thread(target=second, name="second")]
for t in threads:
    t.start()
both_hold.wait()
print(json.dumps({"pid": os.getpid(), "tids": tids}), flush=True)
for t in threads:
    t.join()
'''

BUSY = r'''
import json, os
print(json.dumps({"pid": os.getpid()}), flush=True)
x = 0
while True:
    x += 1
'''

ASLEEP = r'''
import json, os, time
print(json.dumps({"pid": os.getpid()}), flush=True)
time.sleep(100000)
'''

# Exits as soon as anything is written to the FIFO named in argv[1] (the fake py-spy does that).
EXITS_ON_SIGNAL_FROM_FIFO = r'''
import json, os, sys
fifo = sys.argv[1]
print(json.dumps({"pid": os.getpid()}), flush=True)
with open(fifo) as f:
    f.read(1)
'''


@contextmanager
def started(program: str, *args: str, name: str = "stuck.py") -> Iterator[tuple[subprocess.Popen[str], dict[str, Any]]]:
    """Run `program` (written to a file `name`: py-spy shows source lines only for real files) in its own
    session; yield (process, its ready line). Kills the whole group afterwards."""
    folder = tempfile.mkdtemp(prefix="triage-stacks-")
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(program)
    proc = subprocess.Popen(
        [sys.executable, path, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line:
            err = proc.stderr.read() if proc.stderr else ""
            raise RuntimeError(f"program did not get ready: {err[-2000:]}")
        yield proc, json.loads(line)
    finally:
        kill_group(proc)
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def started_binary(argv: list[str]) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(argv, start_new_session=True)
    try:
        yield proc
    finally:
        kill_group(proc)


def kill_group(proc: subprocess.Popen) -> None:  # type: ignore[type-arg]
    try:
        os.killpg(proc.pid, signal.SIGCONT)  # a stopped member would not die of SIGTERM; SIGKILL always works
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def thread_state(pid: int, tid: int) -> str:
    try:
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return ""


def wait_blocked(pid: int, tids: list[int] | None = None, deadline_s: float = 30.0) -> None:
    """Poll until the kernel reports these threads (default: the main thread) asleep in S. A condition
    poll, not a sleep for readiness: it returns as soon as the threads block."""
    tids = tids or [pid]
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if all(thread_state(pid, tid) == "S" for tid in tids):
            return
        time.sleep(0.005)
    raise AssertionError(f"threads {tids} of PID {pid} never blocked: {[thread_state(pid, t) for t in tids]}")


def wait_all_blocked(pid: int, deadline_s: float = 30.0) -> None:
    """wait_blocked for every thread of `pid` (a helper thread or a queue's feeder thread is still on its way to
    its wait when the main thread blocks: a stack caught then differs from its siblings')."""
    wait_blocked(pid, sorted(int(t) for t in os.listdir(f"/proc/{pid}/task")), deadline_s)


def fake_pyspy(tmp_path: Any, body: str) -> str:
    """A py-spy stand-in: a bash script with `body`; `$REAL` is the real py-spy, `$PID` the target."""
    from triage_tui.collect.stacks import find_pyspy

    real = find_pyspy()
    path = tmp_path / "py-spy"
    path.write_text(f'#!/bin/bash\nREAL="{real}"\nPID="$3"\n{body}\n')
    path.chmod(0o755)
    return str(path)

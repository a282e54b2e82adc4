"""Real process trees for the collector tests, each started with a ready handshake.

Each tree is one launcher in its own session (so the test can kill the whole process group);
the launcher prints one JSON line on stdout once every child is in its final state, and the
test reads that line instead of sleeping.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

INCIDENT_TREE = r'''
import ctypes, json, mmap, multiprocessing as mp, os, signal, socket, sys, time

tag, weights, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(8)          # inherited by every forked child: all of them hold the inode

def rename(name):
    ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)   # PR_SET_NAME, as setproctitle does for comm

def worker(rank, barrier, ready):
    rename(f"sched_tp{rank}")
    with open(weights, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        total = sum(m[i] for i in range(0, len(m), mmap.PAGESIZE))   # touch every page
    ready.put(rank)
    barrier.wait()          # parties = workers + 1: nobody else ever arrives

def busy(ready):
    rename("busy_child")
    ready.put("busy")
    while True:
        pass

ctx = mp.get_context("fork")
barrier, ready = ctx.Barrier(workers + 1), ctx.Queue()
procs = [ctx.Process(target=worker, args=(r, barrier, ready), daemon=True) for r in range(workers)]
procs.append(ctx.Process(target=busy, args=(ready,), daemon=True))
for p in procs:
    p.start()
for _ in procs:
    ready.get()

zombie = os.fork()
if zombie == 0:
    os._exit(7)
os.waitid(os.P_PID, zombie, os.WEXITED | os.WNOWAIT)   # it has exited; left unreaped on purpose

stopped = os.fork()
if stopped == 0:
    rename("stopped_child")
    while True:
        signal.pause()
os.kill(stopped, signal.SIGSTOP)
os.waitpid(stopped, os.WUNTRACED)

print(json.dumps({"launcher": os.getpid(), "port": listener.getsockname()[1],
                  "workers": [p.pid for p in procs[:-1]], "busy": procs[-1].pid,
                  "zombie": zombie, "stopped": stopped}), flush=True)
signal.pause()
'''

PORT_ARG_TREE = r'''
import json, os, signal, sys, time
child = os.fork()
if child == 0:
    while True:
        signal.pause()
print(json.dumps({"launcher": os.getpid(), "child": child}), flush=True)
signal.pause()
'''

SLEEPERS = r'''
import json, os, signal, sys
kids = []
for _ in range(int(sys.argv[1])):
    pid = os.fork()
    if pid == 0:
        while True:
            signal.pause()
    kids.append(pid)
print(json.dumps({"launcher": os.getpid(), "children": kids}), flush=True)
signal.pause()
'''


@contextmanager
def started(code: str, *args: str) -> Iterator[tuple[subprocess.Popen, dict[str, Any]]]:
    """Run `code` in a new session; yield (process, the JSON of its ready line); kill the group after."""
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line:
            raise RuntimeError(f"tree did not start (exit {proc.wait()})")
        yield proc, json.loads(line)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        if proc.stdout:
            proc.stdout.close()

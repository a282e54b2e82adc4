"""Real stuck programs for the wait-for graph tests, each printing one JSON line of PIDs when set up.

Every program runs in its own session (the test kills the whole group after) and blocks for real:
a read on a pipe, a recv on a socket, a wait4, a multiprocessing Barrier, an epoll loop. The test then
waits, by polling /proc (never by a fixed delay), until each named thread sits in the system call
it must be in, and only then reads the waits.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from triage_tui.collect.proc_table import read_text
from triage_tui.parse.syscalls import parse_syscall

# R reads pipe P whose write ends only W1 and W2 hold; W1 and W2 read pipe Q whose write end only R holds.
PIPE_RING = r'''
import json, os, sys, time
p_r, p_w = os.pipe()
q_r, q_w = os.pipe()
def child(read_fd, closes):
    pid = os.fork()
    if pid == 0:
        for fd in closes:
            os.close(fd)
        os.read(read_fd, 1)
        os._exit(0)
    return pid
reader = child(p_r, [p_w, q_r])
w1 = child(q_r, [p_r, q_w])
w2 = child(q_r, [p_r, q_w])
for fd in (p_r, p_w, q_r, q_w):
    os.close(fd)
print(json.dumps({"launcher": os.getpid(), "reader": reader, "writers": [w1, w2]}), flush=True)
os.waitpid(reader, 0)
'''

# A child blocks reading an eventfd it inherited; only its parent (asleep) holds the same eventfd.
EVENTFD = r'''
import json, os, time
efd = os.eventfd(0)
child = os.fork()
if child == 0:
    os.read(efd, 8)
    os._exit(0)
other = os.eventfd(0)  # another eventfd the parent holds: not the one the child waits on
print(json.dumps({"parent": os.getpid(), "child": child, "efd": efd, "other": other}), flush=True)
time.sleep(600)
'''

# A and B each read a pipe only the other holds the write end of: a two-process deadlock.
PIPE_CYCLE = r'''
import json, os, time
a_r, a_w = os.pipe()
b_r, b_w = os.pipe()
a = os.fork()
if a == 0:
    os.close(a_w); os.close(b_r)
    os.read(a_r, 1)
    os._exit(0)
b = os.fork()
if b == 0:
    os.close(b_w); os.close(a_r)
    os.read(b_r, 1)
    os._exit(0)
for fd in (a_r, a_w, b_r, b_w):
    os.close(fd)
print(json.dumps({"launcher": os.getpid(), "a": a, "b": b}), flush=True)
while True:
    time.sleep(3600)
'''

# A parent and its child on the two ends of a unix socketpair; the child recv()s, the parent sleeps.
SOCKETPAIR = r'''
import json, os, socket, time
mine, theirs = socket.socketpair()
kid = os.fork()
if kid == 0:
    mine.close()
    theirs.recv(1)
    os._exit(0)
theirs.close()
print(json.dumps({"parent": os.getpid(), "child": kid}), flush=True)
while True:
    time.sleep(3600)
'''

# A listener that never accepts, and a client blocked reading the connection the kernel queued for it.
TCP_NOT_ACCEPTED = r'''
import json, os, socket, time
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(8)
port = listener.getsockname()[1]
kid = os.fork()
if kid == 0:
    listener.close()
    conn = socket.create_connection(("127.0.0.1", port))
    conn.recv(1)
    os._exit(0)
print(json.dumps({"listener": os.getpid(), "client": kid, "port": port}), flush=True)
while True:
    time.sleep(3600)
'''

# A server that accepts and then never answers, and a client blocked reading the reply.
TCP_NO_ANSWER = r'''
import json, os, socket, sys, time
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(8)
port = listener.getsockname()[1]
server = os.fork()
if server == 0:
    conn, _ = listener.accept()
    while True:
        time.sleep(3600)
listener.close()
client = os.fork()
if client == 0:
    conn = socket.create_connection(("127.0.0.1", port))
    conn.sendall(b"GET / HTTP/1.0\r\n\r\n")
    conn.recv(1)
    os._exit(0)
print(json.dumps({"launcher": os.getpid(), "server": server, "client": client, "port": port}), flush=True)
os.waitpid(client, 0)
'''

# A parent in wait4 on a child that stopped itself (SIGSTOP to its own PID).
WAIT_STOPPED = r'''
import json, os, signal, sys
kid = os.fork()
if kid == 0:
    os.kill(os.getpid(), signal.SIGSTOP)
    os._exit(0)
print(json.dumps({"parent": os.getpid(), "child": kid}), flush=True)
os.waitpid(kid, 0)
'''

# Two processes in a multiprocessing Barrier of three: the third party never comes.
BARRIER = r'''
import json, multiprocessing as mp, os, time
def party(barrier):
    barrier.wait()
ctx = mp.get_context("fork")
barrier = ctx.Barrier(3)
procs = [ctx.Process(target=party, args=(barrier,), daemon=True) for _ in range(2)]
for p in procs:
    p.start()
print(json.dumps({"launcher": os.getpid(), "parties": [p.pid for p in procs]}), flush=True)
while True:
    time.sleep(3600)
'''

# Two parties in a Barrier of three; the third process maps it too and dies when told (a line on stdin).
BARRIER_PARTY_DIES = r'''
import json, multiprocessing as mp, os, sys, time
def party(barrier):
    barrier.wait()
def doomed(barrier, fd):
    os.read(fd, 1)
    os._exit(3)
ctx = mp.get_context("fork")
barrier = ctx.Barrier(3)
r, w = os.pipe()
procs = [ctx.Process(target=party, args=(barrier,), daemon=True) for _ in range(2)]
procs.append(ctx.Process(target=doomed, args=(barrier, r), daemon=True))
for p in procs:
    p.start()
print(json.dumps({"launcher": os.getpid(), "parties": [p.pid for p in procs[:2]], "doomed": procs[2].pid}),
      flush=True)
sys.stdin.readline()
os.write(w, b"x")
procs[2].join()
print("gone", flush=True)
while True:
    time.sleep(3600)
'''

# An epoll loop (selectors.EpollSelector) watching a unix socket whose other end the parent holds.
EPOLL_LOOP = r'''
import json, os, selectors, socket, time
mine, theirs = socket.socketpair()
kid = os.fork()
if kid == 0:
    mine.close()
    sel = selectors.EpollSelector()
    sel.register(theirs, selectors.EVENT_READ)
    while True:
        sel.select()
        theirs.recv(1)
theirs.close()
print(json.dumps({"parent": os.getpid(), "child": kid}), flush=True)
while True:
    time.sleep(3600)
'''


@contextmanager
def started(program: str, *args: str) -> Iterator[dict[str, Any]]:
    """Run `program`, yield its JSON ready line; kill its whole session after."""
    proc = subprocess.Popen([sys.executable, "-c", program, *args], stdout=subprocess.PIPE, stdin=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"wait program exited before it was ready (code {proc.wait()})")
        info = json.loads(line)
        info["_proc"] = proc
        yield info
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def main_syscall(pid: int) -> str:
    try:
        call = parse_syscall(read_text(f"/proc/{pid}/syscall"))
    except OSError:
        return ""
    return call.name if call is not None else ""


def settle_in(pids: Sequence[int], names: Sequence[str], timeout_s: float = 60.0) -> None:
    """Poll /proc until every PID's main thread is blocked in one of `names` (a condition, not a delay)."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = {pid: main_syscall(pid) for pid in pids}
        if all(name in names for name in got.values()):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"never all blocked in {names}: {got}")
        time.sleep(0.01)

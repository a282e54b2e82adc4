"""Small real programs, each stuck (or not) in one way. Run as `python programs.py NAME [ARGS]`.

Each prints `ready ...` on stdout (flushed) once it is in the state the test wants to watch;
the test waits for that line, never for a duration.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import time


def ready(*extra: object) -> None:
    print("ready", *extra, flush=True)


def deadlock() -> None:
    """Two threads take two locks in opposite orders: each holds one and waits for the other forever."""
    lock_a, lock_b = threading.Lock(), threading.Lock()
    both_hold = threading.Barrier(3)

    def first_a() -> None:
        with lock_a:
            both_hold.wait()
            with lock_b:
                pass

    def first_b() -> None:
        with lock_b:
            both_hold.wait()
            with lock_a:
                pass

    threads = [threading.Thread(target=first_a, name="writer"), threading.Thread(target=first_b, name="flusher")]
    for t in threads:
        t.start()
    both_hold.wait()
    ready()
    for t in threads:
        t.join()


def workers(fifo: str) -> None:
    """A launcher with three workers that wait on each other; worker 2 dies when the test writes to `fifo`."""
    procs = [subprocess.Popen([sys.executable, __file__, "worker", str(rank), fifo], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE) for rank in range(3)]
    for p in procs:
        assert p.stdout is not None
        p.stdout.readline()
    ready(*(p.pid for p in procs))
    code = procs[2].wait()
    print(f"ERROR worker pid {procs[2].pid} died, exit code: {code}", file=sys.stderr, flush=True)
    signal.pause()


def worker(rank: str, fifo: str) -> None:
    print("up", flush=True)
    if rank == "2":
        with open(fifo) as fh:  # blocks until the test opens the FIFO for writing
            fh.read()
        os._exit(3)
    sys.stdin.read()  # waits for a message from the dead peer that never comes


def zombie() -> None:
    """A parent whose child exits and is never reaped."""
    child = subprocess.Popen([sys.executable, "-c", "print('bye', flush=True)"], stdout=subprocess.PIPE)
    assert child.stdout is not None
    child.stdout.read()  # EOF: the child has exited (it is a zombie until someone waits)
    while True:
        try:
            os.kill(child.pid, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{child.pid}/stat") as fh:
            if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
    ready(child.pid)
    signal.pause()


def stopped() -> None:
    """A process that stops itself (as a debugger or a dead profiler would leave it)."""
    ready(os.getpid())
    os.kill(os.getpid(), signal.SIGSTOP)
    signal.pause()


def busy() -> None:
    ready()
    n = 0
    while True:
        n += 1


def loading(weights: str, log: str) -> None:
    """Reads a large file in chunks, hashing it, logging a progress bar after each chunk."""
    size = os.path.getsize(weights)
    chunk = max(1, size // 400)
    with open(log, "a", buffering=1) as out:
        out.write("INFO Load weight begin\n")
        ready()
        while True:  # reread until killed: the load never ends during the test
            done = 0
            with open(weights, "rb") as fh:
                while block := fh.read(chunk):
                    hashlib.sha256(block).digest()
                    done += len(block)
                    pct = min(99, done * 100 // size)
                    out.write(f"Loading safetensors checkpoint shards: {pct:3d}% | {done // chunk}/400 [00:01<00:01]\n")
                    time.sleep(0.01)


def rendezvous(port: str, log: str) -> None:
    """A rank that retries connecting to a master store that never answers (like TCPStore's connect loop)."""
    with open(log, "a", buffering=1) as out:
        ready()

        def _create_c10d_store() -> socket.socket:
            while True:
                try:
                    return socket.create_connection(("127.0.0.1", int(port)), timeout=1.0)
                except OSError as exc:
                    out.write(f"[W socket.cpp:663] [c10d] The client socket has failed to connect to "
                              f"127.0.0.1:{port} ({exc}); waiting for the TCPStore master\n")
                    time.sleep(2.0)

        def init_process_group() -> None:
            _create_c10d_store()

        init_process_group()


def hog(mb: str) -> None:
    """Waits for `go` on stdin (the test moves it into a small cgroup first), then allocates until killed."""
    ready(os.getpid())
    sys.stdin.readline()
    hoard = []
    for _ in range(int(mb)):
        hoard.append(bytearray(1 << 20))
        hoard[-1][::4096] = b"x" * len(hoard[-1][::4096])
    print("survived", flush=True)
    signal.pause()


def oom_parent(mb: str, log: str) -> None:
    child = subprocess.Popen([sys.executable, __file__, "hog", mb], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdin is not None
    child.stdout.readline()
    ready(child.pid)
    sys.stdin.readline()  # the test has put the child in its cgroup
    child.stdin.write(b"go\n")
    child.stdin.flush()
    code = child.wait()
    with open(log, "a", buffering=1) as out:
        out.write(f"ERROR worker pid {child.pid} died, exit code: {code}\n")
    print("child-exited", code, flush=True)
    signal.pause()


def server() -> None:
    """A healthy HTTP server on an ephemeral port."""

    class Quiet(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    ready(httpd.server_address[1])
    httpd.serve_forever()


if __name__ == "__main__":
    name, *args = sys.argv[1:]
    {"deadlock": deadlock, "workers": workers, "worker": worker, "zombie": zombie, "stopped": stopped,
     "busy": busy, "loading": loading, "rendezvous": rendezvous, "hog": hog, "oom_parent": oom_parent,
     "server": server}[name](*args)

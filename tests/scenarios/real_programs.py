"""Stuck programs built on real libraries (torch.distributed gloo on CPU, DDP, DataLoader, uvicorn + FastAPI,
tqdm, multiprocessing, concurrent.futures, ctypes, logging). Run as `python real_programs.py NAME [ARGS]`.

Each scenario, once it is in the state the test wants to watch, appends one line per process that got there to
the file named by $TRIAGE_READY (the test waits for that many lines, never for a duration). Everything a
scenario writes goes under the directory the test gives it; ports come from bind(0) on 127.0.0.1.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def mark(what: str) -> None:
    """Tell the test this process has reached its state (one line, appended atomically)."""
    path = os.environ.get("TRIAGE_READY")
    if path:
        with open(path, "a") as fh:
            fh.write(f"{os.getpid()} {what}\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def park() -> None:
    """The launcher's wait: it never reaps its children (a dead one stays a zombie, as under many launchers
    that only poll a pipe), and it stays until the test's session is killed."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    while True:
        signal.pause()


# ------------------------------------------------------------------ a plain launcher for gloo ranks
def launch(kind: str, world: str, logdir: str, started: str = "") -> None:
    """Start `world` ranks (or only the ranks listed in `started`) with MASTER_ADDR/MASTER_PORT in their
    environment, each with stdout/stderr in its own log file, the way a custom launcher does."""
    port = free_port()
    ranks = [int(r) for r in started.split(",")] if started else list(range(int(world)))
    for rank in ranks:
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=world,
                   LOCAL_RANK=str(rank))
        log = open(os.path.join(logdir, f"rank{rank}.log"), "ab")
        subprocess.Popen([sys.executable, __file__, "rank", kind], env=env, stdout=log, stderr=log,
                         stdin=subprocess.DEVNULL)
        log.close()
    mark("launcher")
    park()


def _init():
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method="env://")
    return torch, dist


def rank(kind: str) -> None:
    """One rank of a gloo job. `kind` says how this job goes wrong."""
    me, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    print(f"rank {me}/{world} starting", flush=True)
    if kind == "missing":  # a rank the launcher never started: the others wait in the rendezvous
        import torch.distributed  # noqa: F401 - imported before the mark: the wait, not the import, is watched

        mark("rendezvous")
        _init()
        print("init done (never printed)", flush=True)
        return
    torch, dist = _init()
    t = torch.ones(4)
    dist.all_reduce(t)  # the first step goes through: init and the transport are fine
    print(f"rank {me}: step 0 done", flush=True)
    last = me == world - 1
    if kind == "skip":
        if last:  # this rank skips the all_reduce and goes on to the next collective
            mark("broadcast")
            dist.broadcast(t, src=0)
        else:
            mark("all_reduce")
            dist.all_reduce(t)
    elif kind == "frozen":
        if me == 1:
            mark("frozen")
            load_next_batch()
        else:
            mark("all_reduce")
            dist.all_reduce(t)
    elif kind == "spin":
        if me == 1:
            mark("spin")
            wait_for_flag()
        else:
            mark("all_reduce")
            dist.all_reduce(t)
    elif kind == "killed":
        if last:
            mark("killed")
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.5)
        mark("all_reduce")
        try:
            dist.all_reduce(t)
        except Exception as exc:  # gloo noticed the dead peer: log it and wait, as a server rank would
            print(f"rank {me}: all_reduce failed: {exc}", flush=True)
            threading.Event().wait()
    elif kind == "training":
        for step in range(1, 10**9):
            dist.all_reduce(t)
            time.sleep(0.2)
            print(f"rank {me}: step {step} loss {1.0 / step:.4f}", flush=True)
            if step == 3:
                mark("training")
    elif kind == "ddp":
        ddp_steps(torch, dist, me, world)
    print("unreachable", flush=True)


def load_next_batch() -> None:
    """A data step that never returns (a reader waiting on a queue nobody fills)."""
    threading.Event().wait()


def wait_for_flag() -> None:
    """A spin-wait on a flag nobody sets."""
    flag = {"set": False}
    while not flag["set"]:
        pass


def ddp_steps(torch, dist, me: int, world: int) -> None:
    """DDP with uneven inputs: the last rank runs out of batches and goes to the end-of-epoch barrier
    while the others are in the gradient all_reduce of their next backward."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = 2 if me == world - 1 else 3
    for step in range(batches):
        if step == 2:
            mark("backward")
        loss = model(torch.randn(8, 64)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"rank {me}: step {step} loss {loss.item():.4f}", flush=True)
    mark("barrier")
    dist.barrier()


# ------------------------------------------------------------------ torch DataLoader
def dataloader(logdir: str) -> None:
    """A trainer whose prefetch thread iterates a DataLoader; one worker process is SIGKILLed. The prefetch
    thread dies with DataLoader's error (on stderr); the training loop waits for the next batch forever."""
    import queue

    import torch
    from torch.utils.data import DataLoader, Dataset

    class Shards(Dataset):
        def __len__(self) -> int:
            return 10**6

        def __getitem__(self, i: int):
            if i == 200:
                os.kill(os.getpid(), signal.SIGKILL)
            return [float(i)] * 16

    batches: queue.Queue = queue.Queue(maxsize=4)

    def prefetch() -> None:
        # batches as lists (pickled through the queue, not tensors shared by fd): the error seen is the death
        for batch in DataLoader(Shards(), batch_size=4, num_workers=2, collate_fn=list):
            batches.put(batch)

    def report_and_mark(args) -> None:  # the default hook's traceback on stderr, then tell the test
        threading.__excepthook__(args)
        sys.stderr.flush()
        mark("dead")

    threading.excepthook = report_and_mark
    threading.Thread(target=prefetch, name="prefetch", daemon=True).start()
    step = 0
    while True:
        try:
            batch = batches.get(timeout=30)
        except queue.Empty:
            continue
        step += 1
        print(f"step {step} batch mean {torch.tensor(batch).mean().item():.1f}", flush=True)



# ------------------------------------------------------------------ uvicorn + FastAPI
def uvicorn_server(app: str, logdir: str) -> None:
    """`python -m uvicorn asgi_apps:APP --port N` with its output in a file (as under a service manager)."""
    port = free_port()
    log = open(os.path.join(logdir, "server.log"), "ab")
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", f"asgi_apps:{app}", "--app-dir", HERE,
                             "--host", "127.0.0.1", "--port", str(port)], stdout=log, stderr=log,
                            stdin=subprocess.DEVNULL, env=dict(os.environ))
    print(f"ready {proc.pid} {port}", flush=True)
    proc.wait()


# ------------------------------------------------------------------ tqdm
def tqdm_loader(weights: str, logdir: str, finish: str = "") -> None:
    """Reads a large file in chunks with a tqdm bar written to a log file this process opened itself.
    finish: read once to 100 % and then wait for a next phase that never starts."""
    from tqdm import tqdm

    size = os.path.getsize(weights)
    chunk = max(1, size // 200)
    with open(os.path.join(logdir, "loader.log"), "a") as log:
        print("INFO loading checkpoint", file=log, flush=True)
        passes = 0
        while True:
            with open(weights, "rb") as fh, tqdm(total=size, unit="B", unit_scale=True, desc="Loading shards",
                                                 file=log, mininterval=0, miniters=1) as bar:
                while block := fh.read(chunk):
                    bar.update(len(block))
                    log.flush()
                    if bar.n >= size // 10 and passes == 0 and not finish:
                        passes = 1
                        mark("loading")
                    if not finish:
                        time.sleep(0.3)
            if finish:
                log.flush()
                mark("loaded")
                threading.Event().wait()  # the next phase (bind the port) never starts


def loaded_job(weights: str, logdir: str) -> None:
    """A launcher with three workers that each load the weights with a tqdm bar to their own log, then meet
    at a barrier; worker 1 never gets there (it waits for a warm-up reply that never comes)."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(3)
    workers = [ctx.Process(target=_loaded_worker, args=(i, weights, logdir, barrier), name=f"worker{i}")
               for i in range(3)]
    for w in workers:
        w.start()
    mark("launcher")
    for w in workers:
        w.join()


def _loaded_worker(i: int, weights: str, logdir: str, barrier) -> None:
    from tqdm import tqdm

    size = os.path.getsize(weights)
    with open(os.path.join(logdir, f"worker{i}.log"), "a") as log:
        with open(weights, "rb") as fh, tqdm(total=size, desc=f"worker {i} loading", file=log, unit="B") as bar:
            while block := fh.read(1 << 20):
                bar.update(len(block))
        log.flush()
        if i == 1:
            mark("warmup")
            warm_up()
        mark("barrier")
        barrier.wait()


def warm_up() -> None:
    r, _w = os.pipe()
    os.read(r, 1)  # a reply from a helper that was never started


# ------------------------------------------------------------------ multiprocessing.Pool
def pool_lost_task(logdir: str) -> None:
    """Pool.map where one task's worker is SIGKILLed: the pool starts a replacement and map waits forever for
    the lost result (multiprocessing never reports it)."""
    import multiprocessing as mp

    with mp.get_context("fork").Pool(3) as pool:
        mark("pool")
        pool.map(_pool_task, range(12), chunksize=1)


def _pool_task(x: int) -> int:
    if x == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.1)
    return x * x


# ------------------------------------------------------------------ a fork-inherited held lock
def fork_lock(logdir: str) -> None:
    """A process forks a worker while another thread holds a module-level cache lock: the child inherits the
    lock held (no thread in the child will ever release it) and blocks on it forever; the parent waits for
    the child. (logging re-initialises its own locks after fork since 3.x, so the lock is the program's.)"""
    import multiprocessing as mp

    held = threading.Event()

    def refresh_cache() -> None:
        with CACHE_LOCK:  # a slow refresh holds the lock for a while
            held.set()
            time.sleep(2.0)

    threading.Thread(target=refresh_cache, name="cache-refresh").start()
    held.wait()
    child = mp.get_context("fork").Process(target=_forked_worker, name="forked-writer")
    child.start()
    mark("parent")
    child.join()


CACHE_LOCK = threading.Lock()


def _forked_worker() -> None:
    mark("child")
    with CACHE_LOCK:  # inherited held: the thread that holds it does not exist in this process
        print("never printed", flush=True)


# ------------------------------------------------------------------ concurrent.futures (fresh held-out)
def executor_segfault(logdir: str) -> None:
    """A batch scorer: a feeder thread maps chunks over a ProcessPoolExecutor and hands results to the main
    loop through a queue. One chunk crashes in native code (a NULL read through ctypes: SIGSEGV, which the
    kernel logs). The executor breaks (BrokenProcessPool), the feeder thread dies with the traceback on
    stderr, and the main loop waits for results that never come."""
    import concurrent.futures
    import queue

    results: queue.Queue = queue.Queue()

    def feed() -> None:
        with concurrent.futures.ProcessPoolExecutor(max_workers=3) as pool:
            for chunk, score in enumerate(pool.map(_score_chunk, range(40))):
                results.put((chunk, score))

    def report_and_mark(args) -> None:
        threading.__excepthook__(args)
        sys.stderr.flush()
        mark("broken")

    threading.excepthook = report_and_mark
    threading.Thread(target=feed, name="feeder", daemon=True).start()
    while True:
        try:
            chunk, score = results.get(timeout=30)
        except queue.Empty:
            continue
        print(f"chunk {chunk} score {score:.3f}", flush=True)


def _score_chunk(i: int) -> float:
    if i == 7:
        import ctypes

        ctypes.string_at(0)  # SIGSEGV in the worker
    time.sleep(0.05)
    return sum(x * x for x in range(1000 + i)) / 1e9


def executor_recycling(logdir: str) -> None:
    """A healthy batch job: a ProcessPoolExecutor whose workers are retired after a few tasks each
    (max_tasks_per_child, as for leaky native code), so workers come and go while the job progresses; the
    progress goes to a log file the job opened itself."""
    import concurrent.futures

    with open(os.path.join(logdir, "scorer.log"), "a") as log, \
            concurrent.futures.ProcessPoolExecutor(max_workers=3, max_tasks_per_child=4) as pool:
        done = 0
        while True:
            for score in pool.map(_slow_chunk, range(done, done + 6)):
                done += 1
                print(f"INFO chunk {done} score {score:.3f}", file=log, flush=True)
                if done == 12:
                    mark("scoring")


def _slow_chunk(i: int) -> float:
    time.sleep(0.3)
    return sum(x * x for x in range(20000 + i)) / 1e9


# ------------------------------------------------------------------ servers whose clients are served quietly
def frame_server(logdir: str) -> None:
    """A length-prefixed binary RPC service (socketserver, the framing of Thrift's framed transport or a
    model router's sidecar): no log per request, little CPU. It does not speak HTTP: a `GET /health` reads as
    a frame length of ~1.2 GB, which it refuses by closing the connection without a reply."""
    import socketserver
    import struct

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            sock = self.request
            while True:
                head = _read_exactly(sock, 4)
                if head is None:
                    return
                (size,) = struct.unpack(">I", head)
                if size > 1 << 20:
                    return  # not one of ours: drop it
                body = _read_exactly(sock, size)
                if body is None:
                    return
                reply = body[::-1] * 8
                sock.sendall(struct.pack(">I", len(reply)) + reply)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(os.path.join(logdir, "service.log"), "a") as log:
        log.write(f"frame service listening on 127.0.0.1:{server.server_address[1]}\n")
    with open(os.path.join(logdir, "port"), "w") as fh:
        fh.write(str(server.server_address[1]))
    mark("serving")
    server.serve_forever()


def _read_exactly(sock: socket.socket, size: int):
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def frame_client(port: str) -> None:
    """The service's one client: a request every 0.25 s over one persistent connection (outside the tree)."""
    import struct

    with socket.create_connection(("127.0.0.1", int(port))) as sock:
        marked = False
        while True:
            body = os.urandom(64)
            sock.sendall(struct.pack(">I", len(body)) + body)
            head = _read_exactly(sock, 4)
            assert head is not None
            assert _read_exactly(sock, struct.unpack(">I", head)[0]) is not None
            if not marked:
                mark("client")
                marked = True
            time.sleep(0.25)


def quiet_http(logdir: str) -> None:
    """http.server (HTTP/1.1 keep-alive) with its per-request log line switched off, as behind a proxy."""
    import http.server

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            body = b'{"items": [1, 2, 3]}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(os.path.join(logdir, "port"), "w") as fh:
        fh.write(str(server.server_address[1]))
    mark("serving")
    server.serve_forever()


def http_client(port: str) -> None:
    """A client at 4 requests/s on one keep-alive connection (http.client)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=10)
    marked = False
    while True:
        conn.request("GET", "/items")
        conn.getresponse().read()
        if not marked:
            mark("client")
            marked = True
        time.sleep(0.25)


if __name__ == "__main__":
    name, *args = sys.argv[1:]
    {"launch": launch, "rank": rank, "dataloader": dataloader, "uvicorn": uvicorn_server, "tqdm": tqdm_loader,
     "loaded_job": loaded_job, "pool": pool_lost_task, "fork_lock": fork_lock, "executor_segfault": executor_segfault,
     "executor_recycling": executor_recycling, "frame_server": frame_server, "frame_client": frame_client,
     "quiet_http": quiet_http, "http_client": http_client}[name](*args)

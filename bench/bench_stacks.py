"""Capturing N Python workers in parallel against one after another, on the same tree in the same run.

    python bench/bench_stacks.py [--workers 8] [--repeats 5]

Starts N sleeping Python workers (ready handshake on a pipe), then alternates a parallel capture
(concurrency=N) and a sequential one (concurrency=1) `repeats` times, and prints the median and spread of
each and their ratio. Not a test: the numbers depend on the machine (cores, py-spy's attach cost).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from triage_tui.collect.stacks import capture_stacks  # noqa: E402
from triage_tui.host.base import StackOptions  # noqa: E402

WORKER = r"""
import os, sys, threading, time
def helper():
    threading.Event().wait()
for _ in range(3):
    threading.Thread(target=helper, daemon=True).start()
print(os.getpid(), flush=True)
time.sleep(100000)
"""


def _measure(pids: list[int], concurrency: int) -> float:
    started = time.perf_counter()
    capture = capture_stacks(pids, StackOptions(timeout_s=30.0, concurrency=concurrency))
    elapsed = time.perf_counter() - started
    failed = [p.pid for p in capture.processes if p.error is not None or p.source != "py-spy"]
    if failed:
        raise SystemExit(f"capture failed for {failed}: the benchmark needs py-spy to read every worker")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    workers = [subprocess.Popen([sys.executable, "-c", WORKER], stdout=subprocess.PIPE, text=True,
                                start_new_session=True) for _ in range(args.workers)]
    try:
        pids = [int(w.stdout.readline()) for w in workers if w.stdout]  # ready handshake
        _measure(pids, args.workers)  # warm the page cache for py-spy and the source files
        parallel, sequential = [], []
        for _ in range(args.repeats):  # interleaved so drift in machine load hits both alike
            parallel.append(_measure(pids, args.workers))
            sequential.append(_measure(pids, 1))
    finally:
        for w in workers:
            os.killpg(w.pid, signal.SIGKILL)
            w.wait()

    def show(name: str, values: list[float]) -> str:
        return (f"{name:<11} median {statistics.median(values) * 1000:7.1f} ms   "
                f"min {min(values) * 1000:7.1f}   max {max(values) * 1000:7.1f}")

    print(f"{args.workers} Python workers (4 threads each), {args.repeats} repeats, {os.cpu_count()} CPUs")
    print(show("parallel", parallel))
    print(show("sequential", sequential))
    ratio = statistics.median(sequential) / statistics.median(parallel)
    print(f"sequential / parallel = {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

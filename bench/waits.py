"""The wait-for graph's cost at 1,000 processes, alone and as a share of one refresh.

Three trees of 1,000 children under one parent: every child in pause() (nothing to resolve beyond the
syscall), every child blocked reading one pipe whose write end the parent holds (the fd tables are
walked and the write-end holders found: the common case of ranks on a launcher's pipe), and every child
blocked in recv() on its own unix socketpair with the parent (one sock_diag dump, 1,000 peers to find;
each child closes the parent's ends of the earlier pairs it inherited, or every child would hold them all).
CPU is time.process_time(): around a cold collect_waits (the first look: every syscall and fd table
read), around the waits source inside a SnapshotCollector refresh (later looks: an idle single-threaded
process's reads are reused, see collect/waits.py Carried), and around that whole refresh; median of
BENCH_REPEATS after a warm-up. Measurement, not a test.

Usage: python bench/waits.py
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, machine_line, spread  # noqa: E402

sys.path.insert(0, os.environ.get("TRIAGE_SRC", REPO))

from triage_tui.collect.proc_table import read_proc_table  # noqa: E402
from triage_tui.collect.snapshot import SnapshotCollector  # noqa: E402
from triage_tui.collect.waits import collect_waits  # noqa: E402
from triage_tui.host.base import CollectOptions  # noqa: E402
from triage_tui.model.snapshot import Target, TargetRoot  # noqa: E402
from triage_tui.model.waits import WaitSource  # noqa: E402

COUNT = int(os.environ.get("BENCH_PROCESSES", "1000"))

FARM = r'''
import os, signal, socket, sys, time
n, kind = int(sys.argv[1]), sys.argv[2]
r, w = os.pipe()
kids = []
for _ in range(n):
    if kind == "unix":
        a, b = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        if kind == "pause":
            signal.pause()
        elif kind == "pipe":
            os.close(w)
            os.read(r, 1)
        else:
            a.close()
            for other in kids:  # the parent's ends of earlier pairs, inherited by the fork: not ours
                other.close()
            b.recv(1)
        os._exit(0)
    if kind == "unix":
        b.close()
        kids.append(a)
sys.stdout.write("ready\n"); sys.stdout.flush()
signal.pause()
'''


@contextmanager
def farm(kind: str) -> Iterator[int]:
    proc = subprocess.Popen([sys.executable, "-c", FARM, str(COUNT), kind], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError("farm did not start")
        yield proc.pid
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def settle(root: int) -> list[int]:
    """The tree, once every child sits in its syscall (state S), polled."""
    while True:
        table = read_proc_table()
        pids = table.subtree(root)
        if len(pids) == COUNT + 1 and all(table.stats[p].state == "S" for p in pids):
            return pids
        time.sleep(0.05)


def cpu_ms(run, repeats: int) -> list[float]:  # type: ignore[no-untyped-def]
    run()
    out = []
    for _ in range(repeats):
        started = time.process_time()
        run()
        out.append((time.process_time() - started) * 1000)
    return out


def main() -> None:
    repeats = int(os.environ.get("BENCH_REPEATS", "7"))
    print(machine_line(), flush=True)
    print(f"{COUNT} processes, median of {repeats} (range), CPU ms per refresh", flush=True)
    print("| tree | first look (collect_waits, cold) | edges | waits in a refresh (idle reads reused) | "
          "whole refresh | waits' share |", flush=True)
    print("|---|---|---|---|---|---|", flush=True)
    for kind in ("pause", "pipe", "unix"):
        with farm(kind) as root:
            pids = settle(root)
            table = read_proc_table()
            edges = [0]

            def cold() -> None:
                waits, _ = collect_waits(pids, table)
                edges[0] = sum(1 for w in waits if w.peer_pids)

            first = spread(cpu_ms(cold, repeats))
            target = Target(specs=(str(root),), roots=(TargetRoot(root, f"PID {root}"),))
            options = CollectOptions(smaps_budget_ms=0.0)
            collector = SnapshotCollector()
            inner = collector.waits.collect
            spent: list[float] = []

            def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
                started = time.process_time()
                try:
                    return inner(*args, **kwargs)
                finally:
                    spent.append((time.process_time() - started) * 1000)

            collector.waits.collect = timed  # type: ignore[method-assign]
            whole = spread(cpu_ms(lambda: collector.collect(target, options), repeats))
            inside = spread(spent[1:])  # the warm-up refresh left out, as in cpu_ms
            collector.close()
            share = 100 * inside.median / whole.median if whole.median else 0.0
            print(f"| {kind} | {first.fmt(' ms')} | {edges[0]} | {inside.fmt(' ms')} | {whole.fmt(' ms')} | "
                  f"{share:.0f} % |", flush=True)


if __name__ == "__main__":
    main()

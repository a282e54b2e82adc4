"""smaps_rollup read and parsed, the whole-table parse against the keys-only parse, in the same run.

Reads every process of a farm of idle processes (the PSS wave of a watch's first seconds) the way the smaps
thread does (`read_smaps_rollup`: open, read, parse), alternating the two parsers round by round, and prints
this thread's CPU (user and system) per read for each. Measurement, not a test; the load average is printed.

    python3 bench/smaps_parse_ab.py                 # 1,000 processes, 6 rounds each
    BENCH_PROCESSES=1000 BENCH_ROUNDS=6 python3 bench/smaps_parse_ab.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, load_line, machine_line, process_farm, tree_of  # noqa: E402

sys.path.insert(0, os.environ.get("TRIAGE_SRC", REPO))

from triage_tui.collect import memory  # noqa: E402


def main() -> None:
    count, rounds = int(os.environ.get("BENCH_PROCESSES", "1000")), int(os.environ.get("BENCH_ROUNDS", "6"))
    keys_only = memory._rollup_figures  # noqa: SLF001 - the two parsers, swapped in place
    before = load_line()
    out: dict[str, list[tuple[float, float, float]]] = {"whole table": [], "keys only": []}
    with process_farm(count) as farm:
        time.sleep(2)
        pids = tree_of(farm)[1:]
        for n in range(rounds * 2):
            name = ("whole table", "keys only")[(n + n // 2) % 2]  # ABBA: neither always goes first
            memory._rollup_figures = keys_only if name == "keys only" else (lambda text: None)  # noqa: SLF001
            t0, c0 = os.times(), time.thread_time()
            for pid in pids:
                memory.read_smaps_rollup(pid)
            t1, c1 = os.times(), time.thread_time()
            out[name].append(((c1 - c0) * 1e6 / len(pids), (t1.user - t0.user) * 1e6 / len(pids),
                              (t1.system - t0.system) * 1e6 / len(pids)))
        memory._rollup_figures = keys_only  # noqa: SLF001
    print(f"{machine_line()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {len(pids):,} processes, "
          f"{rounds} rounds each; before: {before}; after: {load_line()}")
    for name, rows in out.items():
        cpu, user, system = (statistics.median(r[i] for r in rows) for i in range(3))
        print(f"{name:12s} {cpu:6.0f} us a read (range {min(r[0] for r in rows):.0f}-{max(r[0] for r in rows):.0f}): "
              f"user {user:.0f}, system {system:.0f}")


if __name__ == "__main__":
    main()

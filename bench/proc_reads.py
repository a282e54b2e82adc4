"""What each /proc file of a changed process costs to read, and its parse: the floor under one refresh.

For a farm of processes that each wake every 0.25 s, one Python call per file per process, as a loop over the
farm: open + read + close against a `pread` of a held fd, for the files the collector reads of a process that
ran; the fd count (a stat of /proc/PID/fd); the main thread's syscall file by its two paths; the status parse by
the kernel's layout and by key. CPU (time.process_time) per 1,000 processes, the median of 7 passes. Measurement,
not a test; the load average is printed with the figures.

    python3 bench/proc_reads.py            # 1,000 processes
    BENCH_PROCESSES=300 python3 bench/proc_reads.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, load_line, machine_line, process_farm, tree_of  # noqa: E402

sys.path.insert(0, os.environ.get("TRIAGE_SRC", REPO))

from triage_tui.parse import procfs  # noqa: E402


def per_thousand(pids: list[int], call: Callable[[], object]) -> float:
    """CPU ms of `call` (one pass over `pids`), scaled to 1,000 processes: the median of 7 passes."""
    passes = []
    for _ in range(7):
        started = time.process_time()
        call()
        passes.append((time.process_time() - started) * 1000 * 1000 / len(pids))
    return statistics.median(passes)


def main() -> None:
    count = int(os.environ.get("BENCH_PROCESSES", "1000"))
    with process_farm(count, changing=1.0) as farm:
        time.sleep(1.0)
        pids = [p for p in tree_of(farm) if p != farm]
        rows: list[tuple[str, float, float]] = []
        for name in ("stat", "schedstat", "statm", "status", "io", "wchan", "syscall"):
            def plain(name: str = name) -> None:
                for pid in pids:
                    fd = os.open(f"/proc/{pid}/{name}", os.O_RDONLY)
                    os.read(fd, 4096)
                    os.close(fd)
            fds = [os.open(f"/proc/{pid}/{name}", os.O_RDONLY) for pid in pids]
            try:
                rows.append((name, per_thousand(pids, plain),
                             per_thousand(pids, lambda fds=fds: [os.pread(fd, 4096, 0) for fd in fds])))
            finally:
                for fd in fds:
                    os.close(fd)
        print(f"{machine_line()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {len(pids):,} processes, "
              f"each waking every 0.25 s; {load_line()}\n")
        print("| file | open, read, close: CPU ms per 1,000 | pread of a held fd |\n|---|---|---|")
        for name, plain_ms, held_ms in rows:
            print(f"| {name} | {plain_ms:.1f} | {held_ms:.1f} |")

        def task_path() -> None:
            for pid in pids:
                fd = os.open(f"/proc/{pid}/task/{pid}/syscall", os.O_RDONLY)
                os.read(fd, 4096)
                os.close(fd)
        print(f"| task/PID/syscall (the same task's) | {per_thousand(pids, task_path):.1f} | – |")
        print(f"| the fd count: stat of /proc/PID/fd | {per_thousand(pids, lambda: [os.stat(f'/proc/{p}/fd') for p in pids]):.1f} | – |")
        texts = []
        for pid in pids:
            with open(f"/proc/{pid}/status") as f:
                texts.append(f.read())
        layout = per_thousand(pids, lambda: [procfs.parse_status_numbers(t) for t in texts])
        by_key = per_thousand(pids, lambda: [procfs._parse_status_numbers_by_key(t) for t in texts])  # noqa: SLF001
        print(f"\nstatus parsed, CPU ms per 1,000: by the kernel's layout {layout:.1f}, by key {by_key:.1f}")


if __name__ == "__main__":
    main()

"""One refresh against size: CPU time of one snapshot of a tree of 100, 1,000 and 5,000 processes and
of the whole machine, the full Incident tick at 1,000, and the smaps_rollup budget on a big mapping.

CPU is time.process_time() around `collect` plus the wait for the smaps reader thread (process time
covers every thread of this process, so the budgeted smaps_rollup reads are included). The tick is
what `triage report` runs: processes, memory (smaps off-thread), ports, kernel log, log discovery;
no GPU source (its cost is NVML's, measured with the app in overhead.py). Measurement, not a test.

Usage: python bench/refresh.py   (TRIAGE_SRC=/path/to/other/tree compares another copy of the code;
BENCH_REPEATS=7 measured ticks per size after 2 warm-up ticks.)
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REPO, Spread, process_farm, spread  # noqa: E402

sys.path.insert(0, os.environ.get("TRIAGE_SRC", REPO))  # this tree's code, not an installed copy

from triage_tui.collect.logs import LogsCollector  # noqa: E402
from triage_tui.collect.memory import SmapsReader, read_smaps_rollup  # noqa: E402
from triage_tui.collect.proc_table import read_proc_table  # noqa: E402
from triage_tui.collect.snapshot import SnapshotCollector  # noqa: E402
from triage_tui.collect.targets import resolve_targets  # noqa: E402
from triage_tui.host.base import CollectOptions  # noqa: E402
from triage_tui.model.snapshot import Target, TargetRoot  # noqa: E402

SIZES = (100, 1000, 5000)
LONG_RUN_TICKS = 40
WARMUP = 2
BIG_MAP_GIB = 2


@dataclass(frozen=True)
class Row:
    what: str
    processes: int  # in the watched tree
    cpu_ms: Optional[Spread]  # per tick
    note: str = ""

    @property
    def per_process_us(self) -> Optional[float]:
        return self.cpu_ms.median * 1000 / self.processes if self.cpu_ms and self.processes else None


def _repeats() -> int:
    return int(os.environ.get("BENCH_REPEATS", "7"))


INTERVAL_S = 1.0  # ticks are spaced like a 1 s refresh: what is due again (smaps) is due as in use


def tick_cpu_ms(tick: Callable[[], None], repeats: int, interval_s: float = INTERVAL_S,
                statistic: str = "median") -> Spread:
    """process_time of `tick` (all threads), after WARMUP unmeasured ticks (deltas, caches, smaps).
    statistic "mean" puts the mean in the Spread's median slot (for amortised costs)."""
    samples = []
    for n in range(WARMUP + repeats):
        started = time.monotonic()
        cpu = time.process_time()
        tick()
        if n >= WARMUP:
            samples.append((time.process_time() - cpu) * 1000)
        time.sleep(max(0.0, interval_s - (time.monotonic() - started)))  # the refresh interval, idle
    result = spread(samples)
    return dataclasses.replace(result, median=statistics.fmean(samples)) if statistic == "mean" else result


def measure_tree(target: Target, repeats: int, statistic: str = "median") -> tuple[int, Spread]:
    """(processes in the last snapshot, CPU ms per tick) of `triage report`'s collection."""
    collector = SnapshotCollector(logs=LogsCollector())
    options = CollectOptions(interval_s=INTERVAL_S)
    size = [0]

    def tick() -> None:
        size[0] = len(collector.collect(target, options).processes)
        collector.smaps.wait_idle(120)  # the smaps thread's reads belong to this tick's cost
    try:
        cpu = tick_cpu_ms(tick, repeats, statistic=statistic)
        return size[0], cpu
    finally:
        collector.close()


def measure_incident(target: Target, repeats: int) -> tuple[Spread, str]:
    """collect + DiagnosisEngine.update (+ the recorder's write when the record part is present)."""
    from triage_tui.host.local import LocalHost
    from triage_tui.incident import Incident

    note = "collect + diagnose"
    host = LocalHost(logs=LogsCollector(), gpus=lambda: _no_gpus())
    recorder = None
    scratch = tempfile.mkdtemp(prefix="bench-record-")
    try:
        from triage_tui.record.recorder import Recorder  # type: ignore[import-not-found]  # the record part
        recorder = Recorder(os.path.join(scratch, "incident.triage"))  # type: ignore[call-arg]
        note += " + record"
    except Exception as exc:  # noqa: BLE001 - not merged yet, or another signature: measure without it
        note += f" (recorder not measured: {type(exc).__name__})"
    incident = Incident(host, target, CollectOptions(interval_s=INTERVAL_S), recorder=recorder)

    def tick() -> None:
        incident.tick()
        host.wait_for_budgeted_reads(120)
    try:
        return tick_cpu_ms(tick, repeats), note
    finally:
        incident.close()


def _no_gpus():  # type: ignore[no-untyped-def]
    from triage_tui.model.snapshot import GpuReport
    from triage_tui.model.unavailable import Unavailable
    return GpuReport(error=Unavailable("not measured here"))


# ---------------------------------------------------------------- smaps_rollup on a big mapping
BIG_MAPPER = r'''
import mmap, os, sys
path, size = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    m = mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ)
total = 0
for off in range(0, size, mmap.PAGESIZE):  # touch every page: one page-table entry each
    total += m[off]
print("ready", flush=True)
sys.stdin.read()
'''


@dataclass(frozen=True)
class SmapsRow:
    what: str
    value: str


def _big_mapper(size: int) -> Iterator[int]:
    path = os.path.join(tempfile.gettempdir(), f"bench-bigmap-{os.getpid()}")
    with open(path, "wb") as f:
        f.truncate(size)  # sparse: reads map the zero-filled page cache
    proc = subprocess.Popen([sys.executable, "-c", BIG_MAPPER, path, str(size)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError("big mapper did not start")
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()
        os.unlink(path)


def measure_smaps_budget(repeats: int, budget_ms: float = 10.0, farm: int = 1000) -> list[SmapsRow]:
    """One smaps_rollup read of a process mapping BIG_MAP_GIB (every page touched), then ticks over a
    1,000-process tree holding that process with a small budget: time spent per tick against it."""
    rows: list[SmapsRow] = []
    size = BIG_MAP_GIB * 2**30
    mapper = _big_mapper(size)
    big_pid = next(mapper)
    try:
        costs = [read_smaps_rollup(big_pid).cost_ms for _ in range(repeats)]
        rows.append(SmapsRow(f"one smaps_rollup read, {BIG_MAP_GIB} GiB file mapped and touched (wall ms)",
                             spread(costs).fmt(" ms")))
        period = SmapsReader.refresh_period_s(BIG_MAP_GIB * 2**30, spread(costs).median, 100.0, 1.0)
        rows.append(SmapsRow("its refresh period at the defaults (1 s interval, 100 ms budget)",
                             f"every {period:.0f} s (RSS / 1 GiB and 4 × cost / budget stretch it)"))
        small = [read_smaps_rollup(os.getpid()).cost_ms for _ in range(repeats)]
        rows.append(SmapsRow("one smaps_rollup read, this Python process (wall ms)", spread(small).fmt(" ms", 2)))
        with process_farm(farm) as farm_pid:
            target = Target(specs=(), roots=(resolve_targets([str(farm_pid)]).roots[0],
                                             resolve_targets([str(big_pid)]).roots[0]))
            collector = SnapshotCollector()
            options = CollectOptions(interval_s=0.05, smaps_budget_ms=budget_ms)  # back-to-back ticks
            spent: list[float] = []
            covered_at = None
            try:
                for n in range(1, 101):  # until every process has a figure (and at least 4 × repeats ticks)
                    snap = collector.collect(target, options)
                    collector.smaps.wait_idle(120)
                    spent.append(collector.smaps.spent_ms)
                    live = [p for p in snap.processes if not p.exited]
                    if covered_at is None and snap.memory.target.pss_covered >= len(live):
                        covered_at = n
                    if covered_at is not None and n >= 4 * repeats:
                        break
            finally:
                collector.close()
            rows.append(SmapsRow(f"smaps_rollup time per tick, budget {budget_ms:g} ms, {farm + 2} processes, "
                                 f"{len(spent)} ticks", f"{spread(spent).fmt(' ms')}; worst overrun "
                                 f"{max(0.0, max(spent) - budget_ms):.1f} ms (a read is never cut short)"))
            rows.append(SmapsRow("ticks until every process had a PSS figure",
                                 str(covered_at) if covered_at else f"not within {len(spent)} ticks"))
    finally:
        mapper.close()
    return rows


def whole_machine() -> Target:
    """Every process but kernel threads: the trees whose parent is not in /proc (init, and in a
    container the sessions entered from outside)."""
    table = read_proc_table()
    tops = sorted(pid for pid, stat in table.stats.items()
                  if stat.ppid not in table.stats and pid != 2 and not table.is_kernel_thread(pid))
    return Target(specs=("whole machine",), roots=tuple(TargetRoot(pid, "top-level process") for pid in tops))


def wait_for_farm_gone(limit_s: float = 60.0) -> None:
    """The farms' children die asynchronously after their group is killed: let /proc settle so the
    whole-machine figure is the machine, not a dying farm."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if not any(stat.comm == "python" and stat.state == "Z" for stat in read_proc_table().stats.values()):
            return
        time.sleep(0.2)


# ---------------------------------------------------------------- run / table
def run(repeats: Optional[int] = None, sizes: tuple[int, ...] = SIZES) -> list[Row]:
    repeats = repeats or _repeats()
    rows: list[Row] = []
    for size in sizes:
        with process_farm(size) as farm_pid:
            target = resolve_targets([str(farm_pid)])
            count, cpu = measure_tree(target, repeats)
            rows.append(Row(f"tree of {size:,}", count, cpu))
            if size == 1000:
                incident, note = measure_incident(target, repeats)
                rows.append(Row("Incident tick, tree of 1,000", count, incident, note))
                count, cpu = measure_tree(whole_machine(), repeats)
                rows.append(Row("whole machine with those 1,000", count, cpu, "every top-level tree"))
                count, cpu = measure_tree(target, LONG_RUN_TICKS, statistic="mean")
                rows.append(Row(f"tree of 1,000 over {LONG_RUN_TICKS} s", count, cpu,
                                "mean, not median: includes the steady-RSS PSS re-reads every 30 s"))
    wait_for_farm_gone()
    machine = whole_machine()
    count, cpu = measure_tree(machine, repeats)
    rows.append(Row("whole machine", count, cpu, "every top-level tree (kernel threads aside)"))
    return rows


def table(rows: list[Row]) -> str:
    lines = ["| refresh | processes | CPU ms per tick (median, range) | µs per process | note |",
             "|---|---|---|---|---|"]
    for row in rows:
        per = f"{row.per_process_us:.0f}" if row.per_process_us is not None else "–"
        cpu = row.cpu_ms.fmt(" ms") if row.cpu_ms else "–"
        lines.append(f"| {row.what} | {row.processes:,} | {cpu} | {per} | {row.note} |")
    return "\n".join(lines)


def smaps_table(rows: list[SmapsRow]) -> str:
    return "\n".join(["| smaps_rollup | measured |", "|---|---|", *(f"| {r.what} | {r.value} |" for r in rows)])


if __name__ == "__main__":
    from common import machine_line

    print(machine_line())
    print(f"code: {os.environ.get('TRIAGE_SRC', REPO)}")
    print(table(run()))
    if "--no-smaps" not in sys.argv:
        print()
        print(smaps_table(measure_smaps_budget(_repeats())))

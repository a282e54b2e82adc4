"""Shared pieces of the benchmarks: a farm of idle processes, tmux panes, CPU and RSS of a process tree.

Benchmarks are measurements, not tests: they print figures and ratios; nothing here asserts a time.
"""

from __future__ import annotations

import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

CLK_TCK = os.sysconf("SC_CLK_TCK")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def machine_line() -> str:
    """The machine the figures were taken on, for every table."""
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{platform.node()}: {os.cpu_count()} cores ({cpu}), {mem_gib:.0f} GiB, Linux {platform.release()}, Python {platform.python_version()}"


@dataclass(frozen=True)
class Spread:
    median: float
    low: float
    high: float
    n: int

    def fmt(self, unit: str = "", digits: int = 1) -> str:
        return f"{self.median:.{digits}f}{unit} ({self.low:.{digits}f}–{self.high:.{digits}f}, n={self.n})"


def spread(values: Sequence[float]) -> Spread:
    return Spread(statistics.median(values), min(values), max(values), len(values))


# ---------------------------------------------------------------- process farm
@contextmanager
def process_farm(count: int, name: str = "benchfarm", changing: float = 0.0) -> Iterator[int]:
    """`count` idle processes under one parent; yields the parent's PID. Killed as a group after.
    `changing`: the fraction of them that wake every 0.25 s (a context switch each, next to no CPU),
    so that every refresh sees them changed (schedstat, context switches) and re-reads them whole."""
    script = (
        "import os, signal, sys, time\n"
        "n, busy = int(sys.argv[1]), int(sys.argv[3])\n"
        "kids = []\n"
        "for i in range(n):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        if i < busy:\n"
        "            while True: time.sleep(0.25)\n"
        "        signal.pause(); os._exit(0)\n"
        "    kids.append(pid)\n"
        "sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
        "signal.pause()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(count), name, str(int(count * changing))],
        stdout=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # ready handshake: every child forked
        if line.strip() != "ready":
            raise RuntimeError("process farm did not start")
        yield proc.pid
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def cpu_timed(spent: dict[str, float]) -> Callable[[str, Callable[..., object]], Callable[..., object]]:
    """`timed(part, call)`: `call` wrapped so that the CPU it takes (ms, this thread's process time) adds up under
    `part` in `spent` (the refresh benchmarks time the tick's parts by wrapping them in place)."""

    def timed(part: str, call: Callable[..., object]) -> Callable[..., object]:
        def wrapper(*args: object, **kwargs: object) -> object:
            started = time.process_time()
            try:
                return call(*args, **kwargs)
            finally:
                spent[part] = spent.get(part, 0.0) + (time.process_time() - started) * 1000
        return wrapper

    return timed


def load_line() -> str:
    """The load average now: every figure on this shared machine is read beside it."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} cores)"


# ---------------------------------------------------------------- CPU and memory of a tree
def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        rest = data[data.rfind(b")") + 2:].split()
        kids.setdefault(int(rest[1]), []).append(int(entry))
    return kids


def tree_of(pid: int) -> list[int]:
    kids = _children_map()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, ()))
    return out


def cpu_seconds(pids: Sequence[int]) -> float:
    """utime+stime (and reaped children's) of these processes, from /proc/PID/stat."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                rest = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        total += int(rest[11]) + int(rest[12]) + int(rest[13]) + int(rest[14])
    return total / CLK_TCK


def peak_rss_bytes(pids: Sequence[int]) -> int:
    """The largest VmHWM (peak resident set) among these processes."""
    peak = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]) * 1024)
        except OSError:
            continue
    return peak


# ---------------------------------------------------------------- tmux
class TmuxPane:
    """A detached tmux session running one command at a fixed size."""

    def __init__(self, name: str, command: str, width: int = 200, height: int = 50, env: dict[str, str] | None = None,
                 socket: str | None = None):
        self.name = name
        # socket: a tmux server of its own (`-L`), which no other user's `tmux kill-server` ends mid-run
        self.tmux = ["tmux", "-L", socket] if socket else ["tmux"]
        env_args: list[str] = []
        for k, v in (env or {}).items():
            env_args += ["-e", f"{k}={v}"]
        subprocess.run([*self.tmux, "kill-session", "-t", name], capture_output=True)
        subprocess.run(
            [*self.tmux, "new-session", "-d", "-s", name, "-x", str(width), "-y", str(height), *env_args, command],
            check=True,
        )
        out = subprocess.run([*self.tmux, "list-panes", "-t", name, "-F", "#{pane_pid}"], capture_output=True, text=True)
        self.pid = int(out.stdout.split()[0])

    def capture(self) -> str:
        out = subprocess.run([*self.tmux, "capture-pane", "-p", "-t", self.name], capture_output=True, text=True)
        return out.stdout

    def wait_for(self, markers: Sequence[str], limit_s: float = 30.0, poll_s: float = 0.01) -> float:
        """Seconds until every marker is on screen (poll capture-pane); raises after limit_s."""
        start = time.perf_counter()
        while time.perf_counter() - start < limit_s:
            screen = self.capture()
            if all(m in screen for m in markers):
                return time.perf_counter() - start
            time.sleep(poll_s)
        raise TimeoutError(f"{self.name}: {markers} not on screen after {limit_s} s:\n{self.capture()}")

    def close(self) -> None:
        pids = tree_of(self.pid)
        subprocess.run([*self.tmux, "kill-session", "-t", self.name], capture_output=True)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def have(tool: str) -> bool:
    return shutil.which(tool) is not None

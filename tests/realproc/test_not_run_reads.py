"""A process that did not run is read through its statm line, not its stat line (collect/proc_tree.py), and
nothing of it is shown stale: what changes while it sleeps is what the kernel changes under it, its pages (a
file it maps is truncated by another process) and its parent (its parent exits and it is re-parented). Real
processes; the tests check that the sleeper really did not run across the change (its schedstat run count),
so that the carried path is the one tested, and no assertion is about time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from triage_tui.collect.proc_table import read_text
from triage_tui.collect.snapshot import SnapshotCollector
from triage_tui.collect.targets import resolve_targets
from triage_tui.model.options import CollectOptions
from triage_tui.model.snapshot import Snapshot, Target

from .conftest import settle_asleep

OPTIONS = CollectOptions(discover_logs=False)

MAPPER = r'''
import mmap, signal, sys
f = open(sys.argv[1], "r+b")
m = mmap.mmap(f.fileno(), 0)          # shared: a truncation by anyone unmaps the pages beyond the new end
total = 0
for i in range(0, len(m), 4096):
    total += m[i]                     # every page faulted in: file pages in its RSS
sys.stdout.write("ready\n"); sys.stdout.flush()
signal.pause()
'''

# the mapper is the root's child: a root's stat line is read every pass (its parent is outside the tree)
LAUNCHER = "import subprocess, sys; print(subprocess.Popen(sys.argv[1:]).pid, flush=True); signal = __import__('signal'); signal.pause()"


REPARENTED = r'''
import ctypes, os, signal, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)   # PR_SET_CHILD_SUBREAPER: an orphan below it is re-parented to it
r, w = os.pipe()
middle = os.fork()
if middle == 0:
    child = os.fork()
    if child == 0:
        signal.pause(); os._exit(0)
    sys.stdout.write("%d %d\n" % (os.getpid(), child)); sys.stdout.flush()
    os.read(r, 1)
    os._exit(0)
for line in sys.stdin:
    os.write(w, b"x"); os.waitpid(middle, 0)
    sys.stdout.write("done\n"); sys.stdout.flush()
'''


def _run_count(pid: int) -> int:
    return int(read_text(f"/proc/{pid}/schedstat").split()[2])


def _vm_rss(pid: int) -> int:
    line = next(x for x in read_text(f"/proc/{pid}/status").splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def _row(snapshot: Snapshot, pid: int):  # type: ignore[no-untyped-def]
    row = snapshot.process(pid)
    assert row is not None, pid
    return row


def _collect_reading(collector: SnapshotCollector, target: Target, pid: int, monkeypatch) -> tuple[Snapshot, bool]:  # type: ignore[no-untyped-def]
    """One tick, and whether the stat file of `pid` was read in it (through its held fd or opened afresh)."""
    held = collector.processes.held.fds.get((pid, "stat"))
    read: list[object] = []
    pread, open_ = os.pread, os.open
    monkeypatch.setattr(os, "pread", lambda fd, *a: (read.append(fd), pread(fd, *a))[1])
    monkeypatch.setattr(os, "open", lambda path, *a, **k: (read.append(path), open_(path, *a, **k))[1])
    try:
        snapshot = collector.collect(target, OPTIONS)
    finally:
        monkeypatch.setattr(os, "pread", pread)
        monkeypatch.setattr(os, "open", open_)
    return snapshot, (held is not None and held[0] in read) or f"/proc/{pid}/stat" in read


def test_pages_taken_from_a_sleeping_process_show_in_its_row(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "mapped"
    path.write_bytes(b"\1" * (16 << 20))
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, sys.executable, "-c", MAPPER, str(path)],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    collector = SnapshotCollector()
    try:
        assert proc.stdout is not None
        mapper = int(proc.stdout.readline())
        assert proc.stdout.readline().strip() == "ready"
        settle_asleep([proc.pid, mapper])
        target: Target = resolve_targets([str(proc.pid)])
        for _ in range(3):  # new, then not run (its statm kept), then carried
            collector.collect(target, OPTIONS)
        snapshot, stat_read = _collect_reading(collector, target, mapper, monkeypatch)
        mapped = _row(snapshot, mapper)
        assert not stat_read  # the path under test: it did not run, its stat line was not read
        assert isinstance(mapped.rss_bytes, int) and mapped.rss_bytes >= 16 << 20
        count = _run_count(mapper)
        os.truncate(path, 0)  # another process takes its pages: it does not run for that
        after = _row(collector.collect(target, OPTIONS), mapper)
        assert _run_count(mapper) == count  # it still has not run: the figures changed under it
        assert mapper in collector._table.rss_moved  # type: ignore[union-attr]
        assert isinstance(after.rss_bytes, int) and after.rss_bytes <= mapped.rss_bytes - (12 << 20)
        assert after.rss_bytes == _vm_rss(mapper)  # what a read says now, not what it said before
        assert after is not mapped
    finally:
        collector.close()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_a_sleeping_child_whose_parent_exits_shows_its_new_parent(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    proc = subprocess.Popen([sys.executable, "-c", REPARENTED], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    collector = SnapshotCollector()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        middle, child = map(int, proc.stdout.readline().split())
        settle_asleep([proc.pid, middle, child])
        target = resolve_targets([str(proc.pid)])
        for _ in range(3):
            collector.collect(target, OPTIONS)
        snapshot, stat_read = _collect_reading(collector, target, child, monkeypatch)
        assert _row(snapshot, child).ppid == middle
        assert not stat_read  # carried: its parent was as it was
        count = _run_count(child)
        proc.stdin.write("end the middle one\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "done"  # the middle one exited and was reaped
        snapshot = collector.collect(target, OPTIONS)
        assert _run_count(child) == count  # re-parented without running
        assert middle not in {p.pid for p in snapshot.processes if not p.exited}
        assert _row(snapshot, child).ppid == proc.pid  # its new parent, the subreaper, not the one that exited
    finally:
        collector.close()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

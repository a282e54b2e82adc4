"""The pure rules behind the panes: tree rows, filter with ancestors, idle time (the engine's), the RSS verdict, figures."""

from __future__ import annotations

import dataclasses

from triage_tui.demo.fixture import build_snapshots
from triage_tui.diagnose.engine import DiagnosisEngine
from triage_tui.model.moment import Moment
from triage_tui.model.snapshot import MemoryReport, ProcessInfo, Snapshot, SystemMemory, TargetMemory
from triage_tui.model.unavailable import Unavailable
from triage_tui.ui import format as fmt
from triage_tui.ui.header import render_header
from triage_tui.ui.panes.memory import rss_verdict
from triage_tui.ui.process_rows import tree_rows

TREE = (
    ProcessInfo(pid=1, ppid=0, name="init"),
    ProcessInfo(pid=10, ppid=1, name="launcher", cmdline=("python3", "-m", "sglang.launch_server")),
    ProcessInfo(pid=11, ppid=10, name="worker-a"),
    ProcessInfo(pid=12, ppid=10, name="worker-b"),
    ProcessInfo(pid=13, ppid=12, name="helper"),
    ProcessInfo(pid=20, ppid=1, name="other"),
)


def test_tree_rows_depth_first_with_depths():
    rows = tree_rows(TREE)
    assert [(r.process.pid, r.depth) for r in rows] == [(1, 0), (10, 1), (11, 2), (12, 2), (13, 3), (20, 1)]


def test_collapse_hides_the_subtree_only():
    rows = tree_rows(TREE, collapsed=frozenset({10}))
    assert [r.process.pid for r in rows] == [1, 10, 20]
    assert rows[1].collapsed


def test_filter_keeps_ancestors_and_drops_unrelated():
    assert [r.process.pid for r in tree_rows(TREE, filter_text="helper")] == [1, 10, 12, 13]
    assert [r.process.pid for r in tree_rows(TREE, filter_text="launch_server")] == [1, 10]  # matches the cmdline


def test_sort_orders_siblings():
    procs = tuple(dataclasses.replace(p, rss_bytes=p.pid * 100) for p in TREE)
    assert [r.process.pid for r in tree_rows(procs, sort="rss")][:3] == [1, 20, 10]


def test_idle_time_is_the_engines_counted_from_the_last_cpu_time_growth():
    """The Processes pane shows the engine's idle rule (the one all-idle uses), read from the Moment."""
    procs = [ProcessInfo(pid=5, ppid=1, name="w", cpu_percent=0.0, cpu_time_s=t) for t in (1.0, 5.0, 5.0, 5.0)]
    snaps = [Snapshot(taken_at=100.0 + 20 * i, processes=(p,)) for i, p in enumerate(procs)]
    engine = DiagnosisEngine()
    moments = [Moment(s, engine.update(s)) for s in snaps]
    assert moments[1].idle_for(5) is None and not moments[1].is_idle(5)  # its CPU time just grew
    assert moments[-1].idle_for(5) == 40.0 and moments[-1].is_idle(5)  # unchanged since the refresh at 120
    assert any(o.id == "all-idle" for o in moments[-1].diagnosis.observations)  # the same rule, the same verdict
    assert moments[-1].diagnosis.idle_after_s == 10.0


def test_rss_verdict_names_the_figures_only_when_rss_overstates():
    shared = MemoryReport(system=SystemMemory(total_bytes=449 << 30, available_bytes=415 << 30),
                          target=TargetMemory(rss_sum_bytes=3400 << 30, pss_sum_bytes=421 << 30, file_sum_bytes=3300 << 30))
    text = rss_verdict(shared)
    assert "8.1x" in text and "3.3T" in text and "421G" in text and "415G available" in text
    honest = dataclasses.replace(shared, target=TargetMemory(rss_sum_bytes=100 << 30, pss_sum_bytes=95 << 30))
    assert rss_verdict(honest) == ""
    assert rss_verdict(MemoryReport()) == ""  # PSS not read yet: no claim
    # PSS read for 3 of 10 processes (churn): RSS of all over PSS of some is no ratio at all
    partial = dataclasses.replace(shared, target=dataclasses.replace(shared.target, processes=10, pss_covered=3))
    assert "x the PSS" not in rss_verdict(partial) and "53" not in rss_verdict(partial)
    assert "3 of 10" in rss_verdict(partial)  # it exceeds RAM, which holds for all of them


def test_figures():
    assert fmt.size(76017 * 2**20) == "74G" and fmt.size(Unavailable("x")) == "n/a" and fmt.size(512) == "512B"
    assert fmt.mib(76017 * 2**20) == "76017MiB"
    assert fmt.duration(302) == "5m02s" and fmt.duration(7300) == "2h01m"
    assert fmt.bar(0.5, 4) == "██░░" and fmt.bar(None, 3) == "???"
    assert fmt.sparkline([0, 50, 100, None], 4, top=100) == "▁▅█ "


def test_header_says_when_a_refresh_is_slow_and_which_source_is_stale():
    snap = build_snapshots(1)[0]
    text = str(render_header(snap, 2.0, now=snap.taken_at + 1, collecting_since=snap.taken_at - 10))
    assert "refresh slow: 11s" in text and "kernel stale (dmesg slow)" in text
    stale = str(render_header(snap, 2.0, now=snap.taken_at + 60))
    assert "last good" in stale and "1m00s ago" in stale


def test_gpu_pane_says_why_in_one_line_and_lists_holders():
    from triage_tui.model.snapshot import GpuReport
    from triage_tui.ui.panes import View
    from triage_tui.ui.panes.gpus import render_gpus

    snaps = build_snapshots(4)
    moments = [Moment(s) for s in snaps]
    text = render_gpus(View(moments[-1], moments), width=90).plain
    lines = text.splitlines()
    assert len(lines) == 9 and lines[1].split()[0] == "0"  # a header, then one line per GPU
    assert "76017/97887MiB" in lines[1] and "0%" in lines[1] and "86/600W" in lines[1] and "46433" in lines[1]
    broken = dataclasses.replace(snaps[-1], gpus=GpuReport(error=Unavailable("NVML: driver not loaded", "is nvidia.ko loaded?")))
    one = render_gpus(View(Moment(broken), [Moment(broken)])).plain
    assert one == "no GPUs shown: NVML: driver not loaded (hint: is nvidia.ko loaded?)"

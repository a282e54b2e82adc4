"""The Markdown report: sections, figures, the RSS-illusion sentence, unavailable values spelled out."""

from __future__ import annotations

import dataclasses

from triage_tui.model import Frame, StackCapture, StackGroup, Unavailable
from triage_tui.model.diagnosis import Diagnosis, Hypothesis, Observation
from triage_tui.model.moment import Moment
from triage_tui.model.snapshot import (
    GpuReport,
    LogLine,
    LogTail,
    MemoryReport,
    PortProbe,
    PortReport,
    ProcessInfo,
    Snapshot,
    SystemMemory,
    Target,
    TargetMemory,
    TargetRoot,
)
from triage_tui.render.figures import duration, size
from triage_tui.render.markdown import render_report_markdown

MIB = 1024**2
GIB = 1024**3


def _worker(pid: int, rank: int) -> ProcessInfo:
    return ProcessInfo(
        pid=pid, ppid=100, name=f"scheduler_TP{rank}", state="S", cpu_percent=0.0, cpu_time_s=0.4, threads=1,
        wchan="unix_stream_read_generic", rss_bytes=266 * MIB, rss_file_bytes=256 * MIB, rss_anon_bytes=10 * MIB,
        rss_shmem_bytes=0, pss_bytes=40 * MIB, uss_bytes=8 * MIB,
    )


def demo_like_snapshot(at: float) -> Moment:
    """A Moment with a hand-written diagnosis (the renderer is under test, not the engine), its
    hypotheses in the engine's order: the likely one first."""
    return Moment(_snapshot(at), Diagnosis(
        observations=(Observation("all-idle", "all 9 processes idle for 120 s", "processes", at),),
        hypotheses=(
            Hypothesis("deadlock", "Wait for a missing rank", "likely", 0.9, for_=("all 9 idle",),
                       next_check="capture stacks of all 8 workers: S"),
            Hypothesis("oom", "Out of memory", "ruled out", 0.05, against=("20.0 GiB available",)),
        )), StackCapture(taken_at=at, pids=(101, 104), groups=(
            StackGroup("a", (Frame("_recv_from_peers", "worker.py", 76), Frame("barrier", "worker.py", 82)),
                       members=((101, 101),), pids=(101,), wait_kind="socket"),
            StackGroup("b", (Frame("_wait_for_draft_model", "worker.py", 92), Frame("init_drafter", "worker.py", 96)),
                       members=((104, 104),), pids=(104,), wait_kind="condition", odd_one_out=True,
                       departs_at="init_drafter"),
        )))


def _snapshot(at: float) -> Snapshot:
    launcher = ProcessInfo(
        pid=100, ppid=1, name="python3", state="S", cpu_percent=0.0, cpu_time_s=28.0, threads=2,
        wchan="do_wait", rss_bytes=20 * MIB, pss_bytes=Unavailable("not read yet", "wait one refresh"),
    )
    workers = [_worker(101 + r, r) for r in range(8)]
    return Snapshot(
        host="node-7", taken_at=at,
        target=Target(specs=(":30123",), roots=(TargetRoot(100, "command line asks for --port 30123"),)),
        processes=(launcher, *workers),
        memory=MemoryReport(
            system=SystemMemory(total_bytes=24 * GIB, used_bytes=3 * GIB, available_bytes=20 * GIB,
                                buff_cache_bytes=5 * GIB),
            target=TargetMemory(processes=9, rss_sum_bytes=8 * 266 * MIB + 20 * MIB, pss_sum_bytes=320 * MIB,
                                pss_covered=8),
        ),
        logs=(LogTail(
            path="/tmp/demo/server.log", source="stdout of PID 100",
            lines=(LogLine("server_args=ServerArgs(port=30123)", at), LogLine("UserWarning: old", at, "warning"),
                   LogLine("Loading safetensors checkpoint shards: 100% Completed | 64/64", at)),
            size_bytes=4096, seconds_since_last_byte=312.4, last_byte_at=at - 312.4,
        ),),
        ports=PortReport(probes=(PortProbe(30123, "127.0.0.1", "refused", "ECONNREFUSED"),
                                 PortProbe(30123, "::1", "refused"))),
        gpus=GpuReport(error=Unavailable("no NVIDIA driver", "install the driver or run on a GPU node")),
    )


def test_report_has_every_section_and_the_key_figures() -> None:
    text = render_report_markdown([demo_like_snapshot(1000.0), demo_like_snapshot(1010.0)],
                                  ["12:01:07 deadlock possible → likely: all 9 idle"])
    for heading in ("# triage report: node-7", "## Processes", "## Memory", "## Ports", "## Logs", "## GPUs",
                    "## Kernel events", "## Observations", "## Hypotheses", "## Timeline", "## Stacks"):
        assert heading in text
    assert "root PID 100: command line asks for --port 30123" in text
    assert "└─ scheduler_TP7" in text and "| 100 | 1 | python3 | S |" in text
    assert "| 28 s |" in text  # the launcher's CPU time
    assert "Silent for: 5 min 12 s" in text
    assert "\nUserWarning: old" in text and "[warning]" not in text  # logs verbatim
    assert "127.0.0.1 port 30123: **refused**" in text
    assert "No GPU figures: unavailable: no NVIDIA driver (hint: install the driver or run on a GPU node)" in text
    assert "unavailable: not read yet (hint: wait one refresh)" in text  # the launcher's PSS
    assert "12:01:07 deadlock possible → likely" in text
    assert "odd one out (departs at `init_drafter`)" in text
    # hypotheses in the engine's order, numbered as the app numbers them (the ruled-out one in the short list)
    assert "### 1. Wait for a missing rank" in text
    assert text.index("Wait for a missing rank") < text.index("Out of memory")
    assert "Next check: capture stacks of all 8 workers\n" in text  # shell words: no app key in a ticket


def test_rss_illusion_sentence_carries_its_figures() -> None:
    text = render_report_markdown([demo_like_snapshot(1000.0)])
    # 8 workers with PSS: RSS 8 × 266 MiB = 2.1 GiB vs PSS 8 × 40 MiB = 320 MiB
    assert "RSS overstates memory here" in text
    assert "2.1 GiB" in text and "320 MiB" in text and "6.7×" in text
    assert "20.0 GiB available" in text
    assert "PSS read for 8 of 9 processes" in text


def test_the_report_keeps_the_engines_order() -> None:
    """No face re-sorts: whatever order the engine gives is the order shown, rank numbers included."""
    moment = demo_like_snapshot(1000.0)
    low = Hypothesis("io-blocked", "Blocked on I/O", "possible", 0.3, for_=("a D-state read",))
    given = (low, *moment.diagnosis.hypotheses)  # a lower score first: kept first
    text = render_report_markdown([Moment(moment.snapshot, Diagnosis(hypotheses=given))])
    assert "### 1. Blocked on I/O" in text and "### 2. Wait for a missing rank" in text


def test_no_illusion_sentence_when_pages_are_not_shared() -> None:
    moment = demo_like_snapshot(1000.0)
    snap = moment.snapshot
    honest = tuple(dataclasses.replace(p, pss_bytes=p.rss_bytes) for p in snap.processes)
    text = render_report_markdown([Moment(snap.__class__(**{**snap.__dict__, "processes": honest}))])
    assert "RSS overstates memory" not in text


def test_empty_and_sizes() -> None:
    assert "No snapshot" in render_report_markdown([])
    assert size(1536 * MIB) == "1.5 GiB" and size(330 * MIB) == "330 MiB" and size(512) == "512 B"
    assert size(Unavailable("permission denied", "run as root")) == "unavailable: permission denied (hint: run as root)"
    assert duration(725) == "12 min 5 s" and duration(28.0) == "28 s" and duration(0.4) == "400 ms"

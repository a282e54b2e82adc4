"""GpuHistory: the flat-at-zero and spin-wait facts, from sequences of reports."""

from __future__ import annotations

from typing import Union

from triage_tui.diagnose.gpu_history import GpuHistory
from triage_tui.model import Unavailable
from triage_tui.model.snapshot import GpuDevice, GpuReport

GIB = 1024**3


def report(at: float, util: Union[int, Unavailable], used: int = 74 * GIB, power: Union[float, Unavailable] = 60.0,
           limit: Union[float, Unavailable] = 600.0, lost: bool = False) -> GpuReport:
    device = GpuDevice(index=0, utilization_gpu_percent=util, memory_used_bytes=used, power_draw_w=power,
                       power_limit_w=limit, lost=lost, read_at=at)
    return GpuReport(source="nvml", devices=(device,))


def feed(history: GpuHistory, reports: list[GpuReport]) -> None:
    for r in reports:
        history.record(r, at=r.devices[0].read_at or 0.0)


def test_flat_zero_with_memory_loaded_counts_the_current_run() -> None:
    h = GpuHistory()
    feed(h, [report(0, 40), report(10, 0), report(20, 0), report(130, 0)])
    assert h.flat_zero_util_for_s(0) == 120.0


def test_flat_zero_is_broken_by_activity_and_needs_loaded_memory() -> None:
    h = GpuHistory()
    feed(h, [report(0, 0), report(10, 0), report(20, 3)])
    assert h.flat_zero_util_for_s(0) == 0.0
    empty = GpuHistory()
    feed(empty, [report(0, 0, used=300 * 1024**2), report(50, 0, used=300 * 1024**2)])
    assert empty.flat_zero_util_for_s(0) == 0.0  # idle but nothing loaded: not the incident shape


def test_unknown_utilisation_breaks_the_run_instead_of_counting_as_zero() -> None:
    h = GpuHistory()
    feed(h, [report(0, 0), report(10, Unavailable("not supported")), report(20, 0), report(30, 0)])
    assert h.flat_zero_util_for_s(0) == 10.0


def test_stale_repeats_add_no_sample() -> None:
    h = GpuHistory()
    r = report(5, 0)
    h.record(r, at=5)
    h.record(r, at=7)  # the same read, handed back while NVML was blocked
    assert len(h.samples(0)) == 1
    h.record(report(0, 0, lost=True), at=9)
    assert len(h.samples(0)) == 1


def test_spin_wait_is_full_utilisation_at_idle_power() -> None:
    h = GpuHistory()
    feed(h, [report(0, 0), report(10, 100, power=95.0), report(20, 99, power=105.0)])
    spin = h.spin_wait(0)
    assert spin is not None and spin.for_s == 10.0 and spin.util_percent == 99.5 and spin.power_w == 100.0


def test_real_work_is_not_a_spin_wait() -> None:
    h = GpuHistory()
    feed(h, [report(0, 100, power=520.0), report(10, 100, power=540.0)])
    assert h.spin_wait(0) is None


def test_spin_wait_needs_power_figures() -> None:
    h = GpuHistory()
    no_power = Unavailable("not supported")
    feed(h, [report(0, 100, power=no_power), report(10, 100, power=no_power)])
    assert h.spin_wait(0) is None


def test_ring_is_bounded_and_series_feeds_sparklines() -> None:
    h = GpuHistory(max_samples=3)
    feed(h, [report(t, t) for t in range(5)])
    assert h.series(0, "util_percent") == (2, 3, 4)
    assert h.indices() == (0,) and h.samples(7) == ()

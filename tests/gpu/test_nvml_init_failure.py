"""An NVML that cannot initialise (no driver) is retried every init_retry_s; between retries the stored failure
is raised again. Raising the same exception object again used to grow its traceback with every poll's frames,
and through their callers every earlier poll's locals stayed alive (#18: the app's RSS grew ~1 MiB a tick)."""

from __future__ import annotations

import gc
import weakref

import pynvml
import pytest

from triage_tui.collect.gpu import GpuCollector


class Held:
    """A local of the caller of each poll, as the collector's caller holds a tick's /proc table."""


def test_polls_after_a_failed_init_keep_no_earlier_poll_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_library() -> None:
        raise pynvml.NVMLError_LibraryNotFound()

    monkeypatch.setattr(pynvml, "nvmlInit", no_library)
    collector = GpuCollector(init_retry_s=3600)
    held: list[weakref.ref[Held]] = []

    def tick() -> str:
        local = Held()
        held.append(weakref.ref(local))
        report = collector()
        return str(report.error)

    reasons = [tick() for _ in range(5)]
    gc.collect()
    assert all("not found" in r.lower() or "nvml" in r.lower() for r in reasons)  # each poll says why
    assert [ref() is None for ref in held] == [True] * 5  # no poll's caller is kept alive by the failure
    assert collector._init_failed is not None  # the failure is still remembered: not retried before 3600 s

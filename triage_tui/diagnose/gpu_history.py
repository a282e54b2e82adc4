"""A short per-GPU history: the spin-wait fact the engine's gpu-spin observation is made of
(resource_observations.gpu_observations), the flat-at-zero run, and series for sparklines.

- `flat_zero_util_for_s`: utilisation flat at 0 % while the GPU holds memory (a model is
  loaded and nothing runs: the reference incident), for how long;
- `spin_wait`: utilisation near 100 % at near-idle power. NVML's "utilisation" is the share of
  time any kernel was running, so a kernel spinning on a flag (a collective waiting for a
  peer that never comes) reads 100 % while drawing little power: a wait, not work.
Pure: fed GpuReports, no I/O.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional, TypeVar

from ..model.snapshot import GpuReport
from ..model.unavailable import Maybe, is_known
from .thresholds import Thresholds

N = TypeVar("N", int, float)


@dataclass(frozen=True)
class GpuSample:
    at: float
    util_percent: Optional[int]
    memory_used_bytes: Optional[int]
    power_w: Optional[float]
    power_limit_w: Optional[float]


@dataclass(frozen=True)
class SpinWait:
    """Evidence that a GPU is spinning: how long, at what utilisation and power."""

    index: int
    for_s: float
    util_percent: float  # mean over the run
    power_w: float  # mean over the run
    power_limit_w: float


def _known(value: Optional[Maybe[N]]) -> Optional[N]:
    return value if is_known(value) else None


class GpuHistory:
    """Ring of samples per GPU index. A device's figures enter once per read (by read_at)."""

    def __init__(self, max_samples: int = 300, thresholds: Thresholds = Thresholds()) -> None:
        self.max_samples = max_samples
        self.loaded_bytes = thresholds.gpu_loaded_bytes  # "memory loaded": at least this much in use
        self.busy_percent = thresholds.gpu_spin_util  # "near 100 %"
        self.idle_power_fraction = thresholds.gpu_low_power_ratio  # "near-idle power": below this share of the limit
        self._rings: dict[int, deque[GpuSample]] = {}

    def record(self, report: GpuReport, at: float) -> None:
        """Add each device's figures; stale repeats (same read_at) and lost GPUs add nothing."""
        for device in report.devices:
            if device.lost:
                continue
            read_at = device.read_at if device.read_at is not None else at
            ring = self._rings.setdefault(device.index, deque(maxlen=self.max_samples))
            if ring and ring[-1].at >= read_at:
                continue
            ring.append(GpuSample(
                at=read_at,
                util_percent=_known(device.utilization_gpu_percent),
                memory_used_bytes=_known(device.memory_used_bytes),
                power_w=_known(device.power_draw_w),
                power_limit_w=_known(device.power_limit_w),
            ))

    def indices(self) -> tuple[int, ...]:
        return tuple(sorted(self._rings))

    def samples(self, index: int) -> tuple[GpuSample, ...]:
        return tuple(self._rings.get(index, ()))

    def series(self, index: int, field: str) -> tuple[Optional[float], ...]:
        """One figure over time, for a sparkline ("util_percent", "memory_used_bytes", "power_w")."""
        return tuple(getattr(s, field) for s in self._rings.get(index, ()))

    def _run_back(self, index: int, holds: Callable[[GpuSample], bool]) -> tuple[GpuSample, ...]:
        """The newest unbroken run of samples for which holds(sample) is true, oldest first."""
        run: list[GpuSample] = []
        for sample in reversed(self._rings.get(index, ())):
            if not holds(sample):
                break
            run.append(sample)
        return tuple(reversed(run))

    def flat_zero_util_for_s(self, index: int) -> float:
        """Seconds the GPU has sat at 0 % with memory loaded, up to its newest sample (0.0: not now)."""
        run = self._run_back(index, lambda s: s.util_percent == 0 and s.memory_used_bytes is not None
                             and s.memory_used_bytes >= self.loaded_bytes)
        return run[-1].at - run[0].at if run else 0.0

    def spin_wait(self, index: int) -> Optional[SpinWait]:
        """The current run of near-100 % utilisation at near-idle power, if the newest sample is in one.

        Needs power and its limit: a board that does not report power cannot show a spin-wait.
        """
        def spinning(s: GpuSample) -> bool:
            return (s.util_percent is not None and s.util_percent >= self.busy_percent and s.power_w is not None
                    and bool(s.power_limit_w) and s.power_w <= self.idle_power_fraction * (s.power_limit_w or 0))

        run = self._run_back(index, spinning)
        if not run:
            return None
        return SpinWait(
            index=index, for_s=run[-1].at - run[0].at,
            util_percent=sum(s.util_percent or 0 for s in run) / len(run),
            power_w=sum(s.power_w or 0.0 for s in run) / len(run),
            power_limit_w=run[-1].power_limit_w or 0.0,
        )

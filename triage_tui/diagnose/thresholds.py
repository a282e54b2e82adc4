"""When a fact counts: the thresholds every observer reads (its own module so observers import it
without importing each other)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Thresholds:
    """When a fact counts. Live scenarios shrink the seconds; ticks never enter these."""

    idle_after_s: float = 10.0  # no CPU growth this long: idle
    silent_after_s: float = 30.0  # no log byte this long: silent
    idle_cpu_rate: float = 0.04  # CPU seconds per second below which a process does nothing (a poller's 2-3 % too)
    busy_cpu_rate: float = 0.3  # a process using a third of a core or more, over the watch, is busy
    compiler_cpu_percent: float = 5.0
    gpu_loaded_bytes: int = 1 << 30  # a GPU holding this much memory is "loaded"
    gpu_spin_util: int = 95
    gpu_low_power_ratio: float = 0.4  # power below this share of the limit is near idle
    memory_low_ratio: float = 0.05  # MemAvailable below 5 % of RAM is pressure
    cgroup_full_ratio: float = 0.95
    illusion_ratio: float = 1.5  # RSS sum this many times PSS sum (or RAM): pages are shared
    one_look: bool = False  # pasted text: judge states and %CPU of a single look (no growth to see)

"""The Host protocol: where snapshots and stack captures come from (this machine, or a node over SSH)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional, Protocol

from ..model.snapshot import Snapshot, Target
from ..model.stacks import StackCapture


class TargetError(ValueError):
    """A target that cannot be watched: one clear line for the user, no traceback."""


@dataclass(frozen=True)
class CollectOptions:
    """What a refresh reads besides the process tree."""

    logs: tuple[str, ...] = ()  # --log FILE, repeatable
    port: Optional[int] = None  # --port N, or the N of a :N target
    interval_s: float = 2.0
    smaps_budget_ms: float = 100.0  # per-tick time budget for smaps_rollup reads
    discover_logs: bool = True  # follow files the tree's stdout/stderr point to


@dataclass(frozen=True)
class StackOptions:
    native: bool = False
    locals: bool = False
    timeout_s: float = 10.0
    concurrency: int = 8


class Host(Protocol):
    """One machine triage watches. LocalHost reads /proc here; SshHost runs the same collectors remotely."""

    name: str

    def resolve(self, specs: Sequence[str], port: Optional[int] = None) -> Target:
        """Turn TARGET specs (PID, name:REGEX, :PORT; none = pick candidates) into roots. Raises TargetError."""
        ...

    def collect(self, target: Target, options: CollectOptions) -> Snapshot:
        """One refresh: processes, memory, logs, ports, GPUs, kernel. Never raises for a source that fails."""
        ...

    def capture_stacks(self, pids: Sequence[int], options: StackOptions) -> StackCapture:
        ...

    def close(self) -> None:
        ...

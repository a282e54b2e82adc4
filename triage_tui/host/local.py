"""LocalHost: this machine, read through /proc (the Host the app and `triage report` use by default)."""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from typing import Optional

from ..collect.snapshot import GpuJoin, GpuSource, LogsSource, SnapshotCollector
from ..collect.targets import resolve_targets
from ..model.snapshot import Snapshot, Target
from ..model.stacks import StackCapture
from .base import CollectOptions, StackOptions


class LocalHost:
    """Host protocol over local /proc. Collaborators (logs, GPUs) are optional and come from other parts."""

    def __init__(
        self,
        logs: Optional[LogsSource] = None,
        gpus: Optional[GpuSource] = None,
        join_gpus: Optional[GpuJoin] = None,
        gpu_pids: Optional[Sequence[int]] = None,
    ) -> None:
        self.name = socket.gethostname()
        self._collector = SnapshotCollector(self.name, logs=logs, gpus=gpus, join_gpus=join_gpus)
        self._gpu_pids = tuple(gpu_pids or ())

    def resolve(self, specs: Sequence[str], port: Optional[int] = None) -> Target:
        return resolve_targets(specs, port=port, gpu_pids=self._gpu_pids)

    def collect(self, target: Target, options: CollectOptions = CollectOptions()) -> Snapshot:
        return self._collector.collect(target, options)

    def wait_for_budgeted_reads(self, timeout_s: float = 10.0) -> bool:
        """Block until the background smaps reads handed over so far are done (one-shot reports)."""
        return self._collector.smaps.wait_idle(timeout_s)

    def capture_stacks(self, pids: Sequence[int], options: StackOptions = StackOptions()) -> StackCapture:
        try:
            from ..collect.stacks import capture_stacks  # written by the stacks part
        except ImportError as exc:
            return StackCapture(taken_at=time.time(), pids=tuple(pids),
                                notes=(f"stack capture not available: {exc}",))
        return capture_stacks(pids, options)

    def close(self) -> None:
        self._collector.close()

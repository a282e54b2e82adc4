"""LocalHost: this machine, read through /proc (the Host the app and `triage report` use by default)."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Optional

from ..collect.logs import LogsCollector
from ..collect.smaps_files import mappings_by_file
from ..collect.snapshot import GpuJoin, GpuSource, LogsSource, SnapshotCollector
from ..collect.stacks import capture_stacks
from ..collect.targets import resolve_targets
from ..diagnose.stack_groups import with_groups
from ..model.mappings import FileMapping
from ..model.snapshot import Snapshot, Target
from ..model.stacks import StackCapture
from ..model.unavailable import Unavailable, unavailable_from_error
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
        if gpus is None:  # NVML (nvidia-smi where the binding cannot load); lazy: nothing runs until a tick
            from ..collect.gpu import join_gpus_to_processes, local_gpu_collector

            gpus = local_gpu_collector()
            join_gpus = join_gpus if join_gpus is not None else join_gpus_to_processes
        self._collector = SnapshotCollector(self.name, logs=logs, gpus=gpus, join_gpus=join_gpus)
        self._gpu_pids = tuple(gpu_pids or ())

    def resolve(self, specs: Sequence[str], port: Optional[int] = None) -> Target:
        gpu_pids = self._gpu_pids
        if not specs and not gpu_pids and self._collector.gpus is not None:
            gpu_pids = self._gpu_holders()
        return resolve_targets(specs, port=port, gpu_pids=gpu_pids)

    def _gpu_holders(self) -> tuple[int, ...]:
        """PIDs (in our namespace) that hold a GPU: the first candidates when no TARGET is given."""
        gpus = self._collector.gpus
        if gpus is None:
            return ()
        try:
            report = gpus()
        except Exception:  # noqa: BLE001 - no GPUs to go by: fall back to memory/CPU candidates
            return ()
        return tuple(p.local_pid if p.local_pid is not None else p.pid
                     for device in report.devices for p in device.processes)

    def collect(self, target: Target, options: CollectOptions = CollectOptions()) -> Snapshot:
        return self._collector.collect(target, options)

    def wait_for_budgeted_reads(self, timeout_s: float = 10.0) -> bool:
        """Block until the background smaps reads handed over so far are done (one-shot reports)."""
        return self._collector.smaps.wait_idle(timeout_s)

    def capture_stacks(self, pids: Sequence[int], options: StackOptions = StackOptions()) -> StackCapture:
        return with_groups(capture_stacks(pids, options))

    def mappings_by_file(self, pid: int, target_pids: Sequence[int]) -> tuple[FileMapping, ...] | Unavailable:
        """`cat /proc/PID/smaps` here, grouped by file (the `m` key)."""
        try:
            return tuple(mappings_by_file(pid, target_pids))
        except OSError as exc:
            return unavailable_from_error(exc, f"/proc/{pid}/smaps")

    def close(self) -> None:
        self._collector.close()


def local_host() -> LocalHost:
    """LocalHost with every source this build has: logs (LogsCollector) and GPUs (LocalHost's default:
    NVML, nvidia-smi where the binding cannot load).

    The one composition of a local run; the SSH agent builds the node's host with it too, so a remote
    refresh reads exactly what a local one would.
    """
    return LocalHost(logs=LogsCollector())

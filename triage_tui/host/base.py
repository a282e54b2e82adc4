"""The Host protocol: where snapshots and stack captures come from (this machine, or a node over SSH).

The options and TargetError live in model/options.py (collectors below the host take them); they are
named here too because they are the protocol's vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional, Protocol

from ..model.options import CollectOptions, StackOptions, TargetError, TargetSpecError
from ..model.unavailable import Unavailable

if TYPE_CHECKING:  # the model's dataclasses: imported after the app's first frame (#18)
    from ..model.mappings import FileMapping
    from ..model.snapshot import Snapshot, Target
    from ..model.stacks import StackCapture

__all__ = ["CollectOptions", "Host", "StackOptions", "TargetError", "TargetSpecError"]


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

    def mappings_by_file(self, pid: int, target_pids: Sequence[int]) -> tuple[FileMapping, ...] | Unavailable:
        """`pid`'s mappings summed per file (its /proc/PID/smaps on *that* host), with how many of
        `target_pids` map each file; Unavailable (with the reason) when they cannot be read. Never raises."""
        ...

    def wait_for_budgeted_reads(self, timeout_s: float = 10.0) -> bool:
        """Block until the off-thread budgeted reads (PSS) handed over so far are done; False on timeout."""
        ...

    def close(self) -> None:
        ...

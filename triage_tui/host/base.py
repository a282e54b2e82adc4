"""The Host protocol: where snapshots and stack captures come from (this machine, or a node over SSH).

The options and TargetError live in model/options.py (collectors below the host take them); they are
named here too because they are the protocol's vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional, Protocol

from ..model.options import CollectOptions, StackOptions, TargetError, TargetSpecError
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

    def close(self) -> None:
        ...

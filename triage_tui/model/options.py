"""What a refresh and a stack capture are asked to read, and the error for a target that cannot be watched.

They live in the model because every layer passes them: the collectors take them, the hosts forward them,
the record replays them. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["CollectOptions", "StackOptions", "TargetError", "TargetSpecError"]


class TargetError(ValueError):
    """A target that cannot be watched: one clear line for the user, no traceback."""


class TargetSpecError(TargetError):
    """A target spec that is wrong as written (malformed, a regex that does not compile): a usage
    error (exit 2), where a well-formed spec that finds nothing is a runtime failure (exit 1)."""


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

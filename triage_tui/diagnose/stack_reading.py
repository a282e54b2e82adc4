"""Reading a stack capture for the engine: the capture's groups, grouping it here when the collector did not
(a pasted dump arrives ungrouped). Classification and grouping live in wait_kinds and stack_groups."""

from __future__ import annotations

from ..model.stacks import StackCapture, StackGroup
from .stack_groups import group_stacks as group_processes
from .wait_kinds import classify_thread as classify

__all__ = ["classify", "group_processes", "groups_of"]


def groups_of(capture: StackCapture) -> tuple[StackGroup, ...]:
    """The capture's groups, grouping it here when the collector did not."""
    return capture.groups if capture.groups else group_processes(capture.processes)

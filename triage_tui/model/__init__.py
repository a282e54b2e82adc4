"""The model: raw snapshots, the diagnosis derived from them, Moments joining both; frozen dataclasses,
JSON round-trip. Standard library only."""

from .codec import from_data, from_json, to_data, to_json
from .diagnosis import Diagnosis, Evidence, Hypothesis, Observation
from .mappings import FileMapping
from .moment import Moment
from .snapshot import *  # noqa: F401,F403
from .snapshot import SCHEMA_VERSION, Snapshot
from .stacks import Frame, ProcessStacks, StackCapture, StackGroup, ThreadStack
from .unavailable import Maybe, Unavailable, is_known, known_or, unavailable_from_error

__all__ = [
    "SCHEMA_VERSION", "Snapshot", "Diagnosis", "Evidence", "Hypothesis", "Observation", "FileMapping", "Moment", "Frame", "ProcessStacks", "StackCapture", "StackGroup", "ThreadStack",
    "Maybe", "Unavailable", "is_known", "known_or", "unavailable_from_error",
    "from_data", "from_json", "to_data", "to_json",
]

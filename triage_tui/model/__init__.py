"""The model: raw snapshots, the diagnosis derived from them, Moments joining both; frozen dataclasses,
JSON round-trip. Standard library only.

The names below are imported from their modules when first asked for (PEP 562), not when the package is:
every `from ..model.unavailable import …` imports this package first, and importing all of it (the codec,
json, every dataclass) cost the app's first frame ~15 ms it does not draw with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what mypy sees: the same names, imported at once
    from .codec import from_data, from_json, to_data, to_json
    from .diagnosis import Diagnosis, Evidence, Hypothesis, Observation
    from .mappings import FileMapping
    from .moment import Moment
    from .snapshot import *  # noqa: F401,F403
    from .snapshot import SCHEMA_VERSION, Snapshot
    from .stacks import Frame, ProcessStacks, StackCapture, StackGroup, ThreadStack
    from .unavailable import Maybe, Unavailable, is_known, known_or, unavailable_from_error

_WHERE = {
    "from_data": "codec", "from_json": "codec", "to_data": "codec", "to_json": "codec",
    "Diagnosis": "diagnosis", "Evidence": "diagnosis", "Hypothesis": "diagnosis", "Observation": "diagnosis",
    "FileMapping": "mappings", "Moment": "moment",
    "Frame": "stacks", "ProcessStacks": "stacks", "StackCapture": "stacks", "StackGroup": "stacks",
    "ThreadStack": "stacks",
    "Maybe": "unavailable", "Unavailable": "unavailable", "is_known": "unavailable", "known_or": "unavailable",
    "unavailable_from_error": "unavailable",
}

__all__ = [
    "SCHEMA_VERSION", "Snapshot", "Diagnosis", "Evidence", "Hypothesis", "Observation", "FileMapping", "Moment", "Frame", "ProcessStacks", "StackCapture", "StackGroup", "ThreadStack",
    "Maybe", "Unavailable", "is_known", "known_or", "unavailable_from_error",
    "from_data", "from_json", "to_data", "to_json",
]


def __getattr__(name: str) -> Any:
    """A name of the package, from its module (the snapshot's dataclasses and SCHEMA_VERSION from .snapshot), kept
    once found."""
    import importlib

    if name not in _WHERE and not name[:1].isupper():  # a submodule (`from ..model import text_format`): the import
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")  # system imports it, not the snapshot
    module = importlib.import_module(f".{_WHERE.get(name, 'snapshot')}", __name__)
    try:
        value = getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value

"""Answers kept while the engine is asked about the same row objects again.

The collector hands on a quiet tree's rows as last tick's objects, and a tuple of them as last tick's tuple
(collect/snapshot.py), so what is worked out from rows alone is the same answer for the same objects: the
engine's facts about a 1,000-process tree need not walk 1,000 rows each tick to say what they said. The key is
a tuple of the objects the answer was worked out from; they are held with the answer, so that no other object
can take their identity while it is kept. One answer per name (the latest); correct under threads (a stale
entry is only ever replaced, never read for other objects).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import is_
from typing import TypeVar

T = TypeVar("T")

_kept: dict[str, tuple[tuple[object, ...], object]] = {}


def kept_for(name: str, key: tuple[object, ...], compute: Callable[[], T]) -> T:
    """compute()'s answer, worked out again only when `key` holds other objects than last time for `name`."""
    last = _kept.get(name)
    if last is not None and len(last[0]) == len(key) and all(map(is_, last[0], key)):
        return last[1]  # type: ignore[return-value]  # stored by this function for the same name
    value = compute()
    _kept[name] = (key, value)
    return value


def forget() -> None:
    """Drop every kept answer (a test's from-scratch computation)."""
    _kept.clear()

"""Field-level deltas between two values of one frozen dataclass, as JSON-able data.

Why deltas: a hung server looks the same refresh after refresh, so writing every snapshot in full
would grow a record by the same kilobytes each tick. A delta names only the fields that changed;
a nested dataclass that changed is written as its own delta under DELTA_KEY, so a MemoryReport
whose `smaps_spent_ms` moved costs one number, not the whole report.

Equality of frozen dataclasses is the cheap test (generated `__eq__`, identity short-cut for
values carried over from the previous refresh); `to_data` runs only on what changed.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from collections.abc import Callable
from functools import cache
from operator import attrgetter
from typing import Any, Optional

from ..model.codec import check_number, from_data, report_damage, to_data
from ..model.unavailable import Unavailable

_PLAIN = frozenset({int, float, str, bool, type(None)})
DELTA_KEY = "$delta"  # {"$delta": {...}}: a nested dataclass written as a delta, not in full


@cache
def field_names(cls: type) -> tuple[tuple[str, str], ...]:
    """(attribute, JSON key) for each field: `for_` is written `for`, as the model codec does."""
    return tuple((f.name, f.name[:-1] if f.name.endswith("_") else f.name) for f in dataclasses.fields(cls))


@cache
def field_types(cls: type) -> dict[str, tuple[str, Any]]:
    """JSON key -> (attribute, type hint), for applying a delta."""
    hints = typing.get_type_hints(cls, globalns=vars(sys.modules[cls.__module__]))
    return {key: (name, hints[name]) for name, key in field_names(cls)}


def _is_record(value: object) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, (type, Unavailable))


@cache
def values_getter(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """All field values of an instance in one C-level call: the per-refresh diff runs over every row."""
    names = [name for name, _ in field_names(cls)]
    getter = attrgetter(*names)
    return getter if len(names) > 1 else (lambda obj: (getter(obj),))


def diff(old: Any, new: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The fields of `new` that differ from `old` (same dataclass type), as JSON-able data.

    Empty when they are equal. Fields named in `skip` are left to the caller."""
    cls: type = type(new)
    values = values_getter(cls)
    return diff_values(cls, values(old), values(new), skip)


def diff_values(cls: type, olds: tuple[Any, ...], news: tuple[Any, ...], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """diff, from the field values of both (values_getter's tuples) when the caller has them already."""
    out: dict[str, Any] = {}
    names = field_names(cls)
    changed = [i for i, a in enumerate(olds) if a is not news[i] and a != news[i]]
    for i in changed:
        name, key = names[i]
        if name in skip:
            continue
        a, b = olds[i], news[i]
        if type(b) in _PLAIN:  # most changed figures are plain numbers: skip the generic codec
            out[key] = b
        elif _is_record(a) and type(a) is type(b):
            out[key] = {DELTA_KEY: diff(a, b)}
        else:
            out[key] = to_data(b)
    return out


def apply(old: Any, delta: dict[str, Any], unknown: Optional[Callable[[str], None]] = None) -> Any:
    """`old` with the fields of `delta` replaced; the inverse of `diff`.

    A key this version does not know (written by a newer triage) is reported to `unknown`
    and ignored."""
    cls: type = type(old)
    types_by_key = field_types(cls)
    changes: dict[str, Any] = {}
    for key, data in delta.items():
        known = types_by_key.get(key)
        if known is None:
            if unknown is not None:
                unknown(f"{cls.__name__}.{key}")
            continue
        name, hint = known
        current = getattr(old, name)
        if isinstance(data, dict) and DELTA_KEY in data and _is_record(current):
            changes[name] = apply(current, data[DELTA_KEY], unknown)
        else:
            try:
                value = from_data(hint, data)
                check_number(name, value)
            except (TypeError, ValueError, KeyError, AttributeError) as exc:
                # a damaged value in a delta: the field keeps the value it had, and the reader counts it
                # (failing the whole snapshot would break the chain of deltas up to the next keyframe)
                report_damage(f"{cls.__name__}.{name}: {exc}; the previous value kept")
                continue
            changes[name] = value
    return dataclasses.replace(old, **changes) if changes else old


def unknown_keys(cls: type, data: dict[str, Any]) -> list[str]:
    """Keys of a full object's data that `cls` has no field for (written by a newer triage)."""
    known = field_types(cls)
    return [f"{cls.__name__}.{k}" for k in data if k not in known]

"""JSON round-trip for the frozen dataclasses of the model, driven by their type hints.

One generic codec instead of a to_dict/from_dict pair per class: adding a field to a
dataclass is enough for it to be serialised and read back.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from functools import cache
from typing import Any, Union

from .unavailable import Unavailable

_UNAVAILABLE_KEY = "unavailable"


def _key(name: str) -> str:
    """JSON key for a field: `for_` (a Python keyword dodge) is written as `for`."""
    return name[:-1] if name.endswith("_") else name


_SCALARS = frozenset({str, int, float, bool, type(None)})


@cache
def _field_keys(cls: type) -> tuple[tuple[str, str], ...] | None:
    """(field name, JSON key) of a dataclass type, None for any other type. Cached: the recorder
    encodes every row of every snapshot, and dataclasses.fields() per object was most of its cost."""
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple((f.name, _key(f.name)) for f in dataclasses.fields(cls))


def to_data(obj: Any) -> Any:
    """Plain JSON-able data (dicts, lists, numbers, strings) for a model object."""
    cls = type(obj)
    if cls in _SCALARS:
        return obj
    if isinstance(obj, Unavailable):
        return {_UNAVAILABLE_KEY: obj.reason, "hint": obj.hint}
    keys = None if isinstance(obj, type) else _field_keys(cls)
    if keys is not None:
        out = {}
        for name, key in keys:
            value = getattr(obj, name)
            out[key] = value if type(value) in _SCALARS else to_data(value)  # most fields: no call
        return out
    if isinstance(obj, (list, tuple)):
        return [x if type(x) in _SCALARS else to_data(x) for x in obj]  # PID lists: thousands of ints
    if isinstance(obj, dict):
        return {str(k): v if type(v) in _SCALARS else to_data(v) for k, v in obj.items()}
    return obj


def to_json(obj: Any, indent: int | None = None) -> str:
    return json.dumps(to_data(obj), indent=indent, sort_keys=False, allow_nan=False)


@cache
def _hints(cls: type) -> dict[str, Any]:
    module = sys.modules[cls.__module__]
    return typing.get_type_hints(cls, globalns=vars(module))


def from_data(tp: Any, data: Any) -> Any:
    """Rebuild a value of type `tp` from `to_data` output. Unknown keys are ignored
    (a newer writer may add fields); missing keys take the field's default."""
    if data is None:
        return None
    if isinstance(data, dict) and _UNAVAILABLE_KEY in data and tp is not dict:
        return Unavailable(str(data[_UNAVAILABLE_KEY]), str(data.get("hint", "")))
    origin = typing.get_origin(tp)
    if tp is Any:
        return data
    if origin is Union or (sys.version_info >= (3, 10) and origin is types.UnionType):
        members = [a for a in typing.get_args(tp) if a is not type(None) and a is not Unavailable]
        if type(data) in members and type(data) in (int, float, str, bool):
            return data  # an int in Union[float, int, str] stays an int (a replayed figure reads as written)
        for member in members:
            try:
                return from_data(member, data)
            except (TypeError, ValueError, KeyError):
                continue
        return data
    if origin in (tuple, list):
        args = typing.get_args(tp)
        inner = args[0] if args else Any
        items = [from_data(inner, x) for x in data]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        _, vt = typing.get_args(tp) or (str, Any)
        return {k: from_data(vt, v) for k, v in data.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise TypeError(f"expected an object for {tp.__name__}")
        hints = _hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            key = _key(f.name)
            if key in data:
                kwargs[f.name] = from_data(hints[f.name], data[key])
        return tp(**kwargs)
    if tp is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if tp in (int, float, str, bool) and not isinstance(data, tp):
        raise TypeError(f"expected {tp.__name__}, got {type(data).__name__}")
    return data


def from_json(tp: Any, text: str) -> Any:
    return from_data(tp, json.loads(text))

"""JSON round-trip for the frozen dataclasses of the model, driven by their type hints.

One generic codec instead of a to_dict/from_dict pair per class: adding a field to a
dataclass is enough for it to be serialised and read back.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import json
import sys
import types
import typing
from functools import lru_cache
from typing import Any, Union

from .unavailable import Unavailable

_UNAVAILABLE_KEY = "unavailable"
_UNION_TYPE = getattr(types, "UnionType", None)  # `X | Y` objects, Python 3.10+


def _key(name: str) -> str:
    """JSON key for a field: `for_` (a Python keyword dodge) is written as `for`."""
    return name[:-1] if name.endswith("_") else name


_SCALARS = frozenset({str, int, float, bool, type(None)})


@lru_cache(maxsize=None)  # noqa: UP033 - functools.cache is 3.9+: the node agent runs on 3.8
def _field_keys(cls: type) -> tuple[tuple[str, str], ...] | None:
    """(field name, JSON key) of a dataclass type, None for any other type. Cached: the recorder
    encodes every row of every snapshot, and dataclasses.fields() per object was most of its cost."""
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple((f.name, _key(f.name)) for f in dataclasses.fields(cls))


def to_data(obj: Any) -> Any:
    """Plain JSON-able data (dicts, lists, numbers, strings) for a model object."""
    cls: type = type(obj)
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


@lru_cache(maxsize=None)  # noqa: UP033 - functools.cache is 3.9+: the node agent runs on 3.8
def _hints(cls: type) -> dict[str, Any]:
    module = sys.modules[cls.__module__]
    try:
        return typing.get_type_hints(cls, globalns=vars(module))
    except TypeError:  # Python < 3.10 cannot evaluate `X | None` or (< 3.9) `tuple[int, ...]`: the node agent
        hints: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            namespace = vars(sys.modules[klass.__module__])
            for name, text in vars(klass).get("__annotations__", {}).items():
                hints[name] = _annotation(ast.parse(text, mode="eval").body, namespace) if isinstance(text, str) else text
        return hints


# the typing aliases Python 3.8 can subscript, by builtin name
_GENERICS = {name: getattr(typing, name.capitalize() if name != "frozenset" else "FrozenSet")
             for name in ("tuple", "list", "dict", "set", "frozenset", "type")}


def _annotation(node: ast.expr, namespace: dict[str, Any]) -> Any:
    """An annotation's source as a typing object, built without evaluating `|` or `tuple[...]` on old
    Pythons (`A | B` → Union[A, B], `tuple[X, ...]` → Tuple[X, ...])."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return Union[_annotation(node.left, namespace), _annotation(node.right, namespace)]
    if isinstance(node, ast.Subscript):
        base = node.value
        inner: Any = node.slice
        if type(inner).__name__ == "Index":  # Python 3.8 wraps the subscript
            inner = inner.value
        args = tuple(_annotation(e, namespace) for e in inner.elts) if isinstance(inner, ast.Tuple) else (
            _annotation(inner, namespace),)
        generic = _GENERICS.get(base.id) if isinstance(base, ast.Name) else None
        if generic is None:
            generic = _annotation(base, namespace)
            if getattr(generic, "__module__", "") == "collections.abc":  # not subscriptable before 3.9
                generic = getattr(typing, generic.__name__)
        return generic[args if len(args) > 1 else args[0]]
    if isinstance(node, ast.Constant):
        if node.value is None:
            return type(None)
        if node.value is Ellipsis:
            return ...
        if isinstance(node.value, str):
            return _annotation(ast.parse(node.value, mode="eval").body, namespace)
    if isinstance(node, ast.Name):
        return namespace[node.id] if node.id in namespace else getattr(builtins, node.id)
    if isinstance(node, ast.Attribute):
        return getattr(_annotation(node.value, namespace), node.attr)
    raise TypeError(f"cannot read the annotation {ast.dump(node)}")


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
    if origin is Union or (_UNION_TYPE is not None and origin is _UNION_TYPE):
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
        kt, vt = typing.get_args(tp) or (str, Any)
        if kt is int:  # JSON keys are strings: a PID-keyed dict reads its keys back as ints
            return {int(k): from_data(vt, v) for k, v in data.items()}
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

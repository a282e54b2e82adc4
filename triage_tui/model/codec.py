"""JSON round-trip for the frozen dataclasses of the model, driven by their type hints.

One generic codec instead of a to_dict/from_dict pair per class: adding a field to a
dataclass is enough for it to be serialised and read back.

Reading validates as it builds, because what it reads (a record on disk, an agent's line over SSH)
may be damaged or hostile and the faces must not crash on it: every value must have its field's
type (a null only where the field may be None), a number must be finite, and a figure its range
(a time within years 1970..3000, a size, a duration, a percentage or a PID not negative). A field
that fails takes its default, and the damage is reported to whoever listens (`damage_listener`);
a field with no default fails the whole object (TypeError/ValueError), which the caller skips.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import contextvars
import dataclasses
import json
import math
import sys
import types
import typing
from collections.abc import Callable, Iterator
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


# ---------------------------------------------------------------- validation on read
LATEST_TIME = 32_503_680_000.0  # 3000-01-01: a time past this is damage (datetime cannot even show 1e20)
_TIME_NAMES = frozenset({"at", "last_seen", "start_time"})
_NON_NEGATIVE_SUFFIXES = ("_bytes", "_s", "_ms", "_percent", "_w", "_covered")
_NON_NEGATIVE_NAMES = frozenset({"pid", "ppid", "tid", "threads", "port", "num_fds", "local_pid", "gpu_index"})
MAX_INT = 2**63  # larger than any counter the kernel keeps: damage

_damage: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar("triage_codec_damage", default=None)


@contextlib.contextmanager
def damage_listener(listener: Callable[[str], None]) -> Iterator[None]:
    """Within the block, each field `from_data` replaced by its default is reported as 'Class.field: why'."""
    token = _damage.set(listener)
    try:
        yield
    finally:
        _damage.reset(token)


def report_damage(what: str) -> None:
    """Tell the current damage listener (if any) that a value was left out: 'Class.field: why'."""
    listener = _damage.get()
    if listener is not None:
        listener(what)


MAX_DEPTH = 32  # free-form values (figures) nested deeper than this are damage: no face could show them


def _check_depth(data: Any, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(data, dict):
        for v in data.values():
            if isinstance(v, (dict, list)):
                _check_depth(v, depth + 1)
            elif isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"{v} is not a finite number")
    elif isinstance(data, list):
        for v in data:
            if isinstance(v, (dict, list)):
                _check_depth(v, depth + 1)
            elif isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"{v} is not a finite number")


def check_number(name: str, value: Any) -> None:
    """Raise ValueError when a numeric field's value is not finite or is outside its field's range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} is not a finite number")
    if isinstance(value, int) and abs(value) >= MAX_INT:
        raise ValueError("integer out of range")
    if _is_time(name):
        if not 0 <= value < LATEST_TIME:
            raise ValueError(f"time {value} out of range")
    elif (name in _NON_NEGATIVE_NAMES or name.endswith(_NON_NEGATIVE_SUFFIXES)) and value < 0:
        raise ValueError(f"{value} is negative")


def _is_time(name: str) -> bool:
    return name in _TIME_NAMES or name.endswith("_at")


def _allows_none(tp: Any) -> bool:
    if tp is Any or tp is type(None) or tp is None:
        return True
    origin = typing.get_origin(tp)
    return (origin is Union or (_UNION_TYPE is not None and origin is _UNION_TYPE)) and type(None) in typing.get_args(tp)


def _field_default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def from_data(tp: Any, data: Any) -> Any:
    """Rebuild a value of type `tp` from `to_data` output, validating it (see the module docstring).
    Unknown keys are ignored (a newer writer may add fields); missing keys take the field's default.
    Raises TypeError or ValueError for a value that cannot be of type `tp`."""
    if data is None:
        if _allows_none(tp):
            return None
        raise TypeError("null where a value is needed")
    if isinstance(data, dict) and _UNAVAILABLE_KEY in data and tp is not dict:
        return Unavailable(str(data[_UNAVAILABLE_KEY]), str(data.get("hint", "")))
    origin = typing.get_origin(tp)
    if tp is Any:
        if isinstance(data, (dict, list)):
            _check_depth(data)
        elif isinstance(data, float) and not math.isfinite(data):
            raise ValueError(f"{data} is not a finite number")
        return data
    if origin is Union or (_UNION_TYPE is not None and origin is _UNION_TYPE):
        members = [a for a in typing.get_args(tp) if a is not type(None) and a is not Unavailable]
        if type(data) in members and type(data) in (int, float, str, bool):
            if type(data) is float and not math.isfinite(data):
                raise ValueError(f"{data} is not a finite number")
            return data  # an int in Union[float, int, str] stays an int (a replayed figure reads as written)
        for member in members:
            try:
                return from_data(member, data)
            except (TypeError, ValueError, KeyError, AttributeError):
                continue
        raise TypeError(f"{type(data).__name__} is none of {', '.join(getattr(m, '__name__', str(m)) for m in members)}")
    if origin in (tuple, list):
        if not isinstance(data, list):
            raise TypeError(f"expected a list, got {type(data).__name__}")
        args = typing.get_args(tp)
        if origin is tuple and len(args) >= 1 and args[-1] is not Ellipsis:  # a fixed-shape tuple
            if len(args) != len(data):
                raise ValueError(f"expected {len(args)} items, got {len(data)}")
            return tuple(from_data(a, x) for a, x in zip(args, data))  # noqa: B905 - lengths checked above; 3.8 has no strict=
        inner = args[0] if args else Any
        items = [from_data(inner, x) for x in data]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(data, dict):
            raise TypeError(f"expected an object, got {type(data).__name__}")
        kt, vt = typing.get_args(tp) or (str, Any)
        out = {}
        for k, v in data.items():
            value = from_data(vt, v)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{value} is not a finite number")
            out[int(k) if kt is int else k] = value
        return out
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise TypeError(f"expected an object for {tp.__name__}")
        hints = _hints(tp)
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(tp):
            key = _key(f.name)
            if key not in data:
                continue
            value = data[key]
            default = _field_default(f)
            if value is None and default is None:
                kwargs[f.name] = None
                continue
            try:
                kwargs[f.name] = from_data(hints[f.name], value)
                check_number(f.name, kwargs[f.name])
            except (TypeError, ValueError, KeyError, AttributeError) as exc:
                if default is dataclasses.MISSING or (_is_time(f.name) and default is not None):
                    # no default, or a time whose default (0: 1970) would be a silent, wrong figure
                    raise ValueError(f"{tp.__name__}.{f.name}: {exc}") from None
                kwargs[f.name] = default
                report_damage(f"{tp.__name__}.{f.name}: {exc}")
        return tp(**kwargs)
    if tp is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if tp in (int, float, str, bool) and not isinstance(data, tp):
        raise TypeError(f"expected {tp.__name__}, got {type(data).__name__}")
    if tp is int and isinstance(data, bool):
        raise TypeError("expected int, got bool")
    if isinstance(data, float) and not math.isfinite(data):
        raise ValueError(f"{data} is not a finite number")
    return data


def from_json(tp: Any, text: str) -> Any:
    return from_data(tp, json.loads(text))

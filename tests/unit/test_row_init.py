"""ProcessInfo's __init__ is made again to set its slots through their descriptors (model/snapshot.py, _slot_init):
it must take what the dataclass's own __init__ takes and build the same row."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from triage_tui.model.snapshot import ProcessInfo
from triage_tui.model.unavailable import Unavailable


def test_defaults_are_the_fields_defaults_and_a_factory_gives_each_row_its_own() -> None:
    row = ProcessInfo(pid=7, ppid=1, name="w")
    for f in dataclasses.fields(ProcessInfo):
        if f.default is not dataclasses.MISSING:
            assert getattr(row, f.name) == f.default, f.name
        elif f.default_factory is not dataclasses.MISSING:
            assert getattr(row, f.name) == f.default_factory(), f.name
    other = ProcessInfo(7, 1, "w")
    assert other == row and other.thread_states is not row.thread_states  # a new dict each, as default_factory


def test_every_field_by_keyword_and_by_position_lands_in_its_own_slot() -> None:
    names = [f.name for f in dataclasses.fields(ProcessInfo)]
    values = [f"value of {name}" for name in names]  # each field a value of its own
    by_keyword = ProcessInfo(**dict(zip(names, values, strict=True)))  # type: ignore[arg-type]
    by_position = ProcessInfo(*values)  # type: ignore[arg-type]
    assert [getattr(by_keyword, n) for n in names] == values == [getattr(by_position, n) for n in names]
    assert list(inspect.signature(ProcessInfo).parameters) == names


def test_it_refuses_what_the_dataclass_refuses_and_stays_frozen() -> None:
    with pytest.raises(TypeError):
        ProcessInfo(pid=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ProcessInfo(pid=1, ppid=0, name="x", no_such_field=1)  # type: ignore[call-arg]
    row = ProcessInfo(pid=1, ppid=0, name="x", wchan="do_wait")
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.wchan = "other"  # type: ignore[misc]
    moved = dataclasses.replace(row, cpu_percent=Unavailable("gone"))
    assert moved.wchan == "do_wait" and moved.cpu_percent == Unavailable("gone")
    assert pickle.loads(pickle.dumps(moved)) == moved == copy.deepcopy(moved)

"""The py-spy JSON parser on real `py-spy dump --json` output (py-spy 0.4.3, CPython 3.11).

The files in data/ were captured from /tmp/probe2.py (three threads: MainThread in time.sleep, `waiter` in
queue.get, `locker` in lock.acquire with a local `held`), with --locals and with --native.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage_tui.diagnose.stack_groups import with_groups
from triage_tui.model.stacks import StackCapture
from triage_tui.parse.pyspy_json import parse_pyspy_json, thread_status

DATA = Path(__file__).parent / "data"


def _source(file: str, line: int) -> str:
    return {
        ("/tmp/probe2.py", 8): "lock.acquire()",
        ("/tmp/probe2.py", 11): "time.sleep(100000)",
    }.get((file, line), "")


def test_locals_dump() -> None:
    text = (DATA / "pyspy_dump_locals.json").read_text()
    (process,) = parse_pyspy_json(text, _source, pid=22107, name="python3")
    assert (process.pid, process.name, process.source) == (22107, "python3", "py-spy")
    names = [t.name for t in process.threads]
    assert names == ["locker", "waiter", "MainThread"]
    locker, waiter, main = process.threads
    assert (locker.pid, locker.tid, locker.status) == (22107, 22181, "idle")
    assert locker.frames[0].function == "locker" and locker.frames[0].line == 8
    assert locker.frames[0].locals == {"held": '{"n": 1}'}
    assert locker.frames[0].code == "lock.acquire()"
    assert [f.function for f in waiter.frames[:3]] == ["Condition.wait", "Queue.get", "waiter"]  # innermost first
    assert waiter.frames[0].file.endswith("/threading.py") and not waiter.frames[0].native
    assert main.tid == 22107 and main.frames[0].code == "time.sleep(100000)"
    capture = with_groups(StackCapture(taken_at=0.0, pids=(22107,), processes=(process,)))
    kinds = {t.name: t.wait_kind for t in capture.processes[0].threads}
    assert kinds == {"locker": "lock", "waiter": "queue", "MainThread": "sleep"}


def test_native_dump_marks_native_frames_with_their_library() -> None:
    (process,) = parse_pyspy_json((DATA / "pyspy_dump_native.json").read_text())
    locker = next(t for t in process.threads if t.name == "locker")
    native = [f for f in locker.frames if f.native]
    assert native and native[0].module.endswith("libc.so.6")
    assert any(f.function == "PyThread_acquire_lock_timed" for f in native)
    assert [f.function for f in locker.frames if not f.native][0] == "locker"
    main = next(t for t in process.threads if t.name == "MainThread")
    assert [f.function for f in main.frames[:3]] == ["clock_nanosleep", "time_sleep", "<module>"]


@pytest.mark.parametrize("active,gil,status", [(False, False, "idle"), (True, False, "active"), (True, True, "gil"),
                                               (False, True, "gil")])
def test_status(active: bool, gil: bool, status: str) -> None:
    assert thread_status(active, gil) == status


def test_empty_dump_still_names_the_pid() -> None:
    (process,) = parse_pyspy_json("[]", pid=7)
    assert process.pid == 7 and process.threads == ()


@pytest.mark.parametrize("text", ["", "Error: Permission Denied", '{"pid": 1}', "[1, 2]", '[{"frames": 3}]'])
def test_not_pyspy_json_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        parse_pyspy_json(text)


def test_several_pids_with_subprocesses() -> None:
    data = json.loads((DATA / "pyspy_dump_locals.json").read_text())
    data[0]["pid"] = 999
    parsed = parse_pyspy_json(json.dumps(data))
    assert sorted(p.pid for p in parsed) == [999, 22107]

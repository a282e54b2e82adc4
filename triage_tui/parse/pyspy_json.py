"""py-spy `dump --json` output → ProcessStacks, innermost frame first (py-spy's own order).

py-spy 0.3/0.4 print a JSON list with one object per thread:
`{"pid", "thread_id", "thread_name", "os_thread_id", "active", "owns_gil", "frames": [...]}`, each frame
`{"name", "filename", "module", "short_filename", "line", "locals", "is_entry", "is_shim_entry"}`.
Python frames have `module: null`; with `--native`, native frames carry the shared object in `module`.
With `--locals`, `locals` is a list of `{"name", "addr", "arg", "repr"}`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any, Optional

from ..model.stacks import Frame, ProcessStacks, ThreadStack

# Reads the source line of (file, line) for a frame; "" when it cannot. Injected so parsing stays pure.
SourceReader = Callable[[str, int], str]


def thread_status(active: Any, owns_gil: Any) -> str:
    """py-spy's two flags as one status: holding the GIL says more than being on a CPU."""
    if owns_gil:
        return "gil"
    if active:
        return "active"
    return "idle"


def _locals(raw: Any) -> dict[str, str]:
    if not isinstance(raw, list):
        return {}
    out: dict[str, str] = {}
    for item in raw:
        if isinstance(item, dict) and "name" in item:
            value = item.get("repr")
            out[str(item["name"])] = "?" if value is None else str(value)
    return out


def parse_frame(raw: dict[str, Any], read_source: Optional[SourceReader] = None) -> Frame:
    module = raw.get("module")
    native = module is not None
    file = str(raw.get("filename") or "")
    line = int(raw.get("line") or 0)
    code = ""
    if read_source is not None and not native and file and line > 0:
        code = read_source(file, line)
    return Frame(
        function=str(raw.get("name") or "?"),
        file=file,
        line=line,
        module=str(module) if native else "",
        native=native,
        locals=_locals(raw.get("locals")),
        code=code,
    )


def parse_thread(raw: dict[str, Any], read_source: Optional[SourceReader] = None) -> ThreadStack:
    tid = raw.get("os_thread_id")
    if tid is None:
        tid = raw.get("thread_id") or 0
    frames = raw.get("frames") or []
    if not isinstance(frames, list):
        raise ValueError("py-spy thread 'frames' is not a list")
    return ThreadStack(
        pid=int(raw.get("pid") or 0),
        tid=int(tid),
        name=str(raw.get("thread_name") or ""),
        status=thread_status(raw.get("active"), raw.get("owns_gil")),
        frames=tuple(parse_frame(f, read_source) for f in frames if isinstance(f, dict)),
    )


def parse_pyspy_json(
    text: str, read_source: Optional[SourceReader] = None, pid: int = 0, name: str = ""
) -> tuple[ProcessStacks, ...]:
    """One ProcessStacks per PID found in the dump (several with `--subprocesses`), in order of appearance.

    Raises ValueError when the text is not py-spy JSON. `pid`, when given, is used for threads that do not
    say theirs and guarantees that PID has an entry even when py-spy listed no thread.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"py-spy output is not JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, list):
        raise ValueError("py-spy JSON is not a list of threads")
    by_pid: dict[int, list[ThreadStack]] = {}
    if pid:
        by_pid[pid] = []
    for raw in data:
        if not isinstance(raw, dict):
            raise ValueError("py-spy JSON thread is not an object")
        thread = parse_thread(raw, read_source)
        if not thread.pid and pid:
            thread = dataclasses.replace(thread, pid=pid)
        by_pid.setdefault(thread.pid, []).append(thread)
    return tuple(
        ProcessStacks(pid=p, name=name if p == pid else "", source="py-spy", threads=tuple(threads))
        for p, threads in by_pid.items()
    )

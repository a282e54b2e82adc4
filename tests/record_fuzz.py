"""Damaged recordings from a real one: the shapes of #19's malformed-input campaign (null fields,
NaN/inf, out-of-range times and numbers, wrong types, deep nesting, cut lines, swapped and repeated
lines), and the check that every face reading them survives.

Used by tests/unit/test_record_fuzz.py and by the malformed-input campaign.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).parent / "unit"))

from record_shapes import record_demo  # noqa: E402

from triage_tui.record.recorder import Recorder, RecordError  # noqa: E402

TOKEN = "\u0000MUTATION\u0000"
# raw JSON text put in place of one value
VALUES = (
    "null", "NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1e20", "-1", "-1e20", "0",
    "123456789012345678901234567890", "true", '"a string"', '""', "[]", "{}", '{"unavailable": null}',
    '[null]', '{"x": NaN}', "[" * 3000 + "]" * 3000, '{"a":' * 200 + "1" + "}" * 200, '"\\u001b[2J[/]"',
    '"\\ud800"', "3.5", '["x", 1, null]',
)


def base_record(path: Path) -> bytes:
    recorder = Recorder(path)
    record_demo(recorder, ticks=6, capture_at=3)
    recorder.close()
    return path.read_bytes()


def _leaves(value: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _leaves(v, (*path, i))
    return out


def _set(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    value[path[0]] = _set(value[path[0]], path[1:], new)
    return value


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One damaged copy of the record `data`."""
    lines = data.split(b"\n")
    body = [i for i, line in enumerate(lines) if line.strip()][1:]  # keep the header, mostly
    how = rng.random()
    if how < 0.65:  # one value of one line replaced
        i = rng.choice(body)
        record = json.loads(lines[i])
        path = rng.choice(_leaves(record)[1:] or [()])
        record = _set(record, path, TOKEN)
        lines[i] = json.dumps(record, separators=(",", ":")).replace(json.dumps(TOKEN), rng.choice(VALUES)).encode()
    elif how < 0.75:  # a line cut
        i = rng.choice(body)
        lines[i] = lines[i][: rng.randrange(max(1, len(lines[i])))]
    elif how < 0.82:  # lines swapped or repeated
        i, j = rng.choice(body), rng.choice(body)
        if rng.random() < 0.5:
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines.insert(i, lines[j])
    elif how < 0.88:  # bytes flipped
        i = rng.choice(body)
        raw = bytearray(lines[i])
        for _ in range(rng.randint(1, 4)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        lines[i] = bytes(raw)
    elif how < 0.94:  # a line of garbage, or of NUL, inserted
        lines.insert(rng.choice(body), rng.choice([b"\x00" * 100, b"\xff\xfe garbage", b"[" * 100000, b'{"kind":"snapshot"}']))
    else:  # the whole file cut
        return data[: rng.randrange(len(data))]
    return b"\n".join(lines)


def check_record(path: Path) -> Optional[str]:
    """None when every reader face survives the file at `path`, else what broke (for the failure line)."""
    from triage_tui.record.export import report_from_record
    from triage_tui.record.reader import read_record
    from triage_tui.record.replay import ReplayView

    try:
        for fmt in ("md", "json"):
            try:
                report_from_record(path, fmt, warn=lambda _: None)
            except RecordError:
                pass
        try:
            recording = read_record(path)
        except RecordError:
            return None
        if recording.moments:
            incident = ReplayView(recording, preload=len(recording.moments))
            from triage_tui.render.markdown import render_report_markdown
            render_report_markdown(incident.timeline, incident.changelog)
    except Exception as exc:  # the point of the check: any exception is a failure, named
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


def damaged_records(tmp: Path, cases: int, seed: int = 19) -> list[Path]:
    rng = random.Random(seed)
    data = base_record(tmp / "base.jsonl")
    out = []
    for n in range(cases):
        path = tmp / f"damaged-{n}.jsonl"
        path.write_bytes(mutate(data, rng))
        out.append(path)
    return out


def run_cases(tmp: Path, cases: int, seed: int = 19, on_case: Callable[[Path, Optional[str]], None] = lambda p, e: None) -> list[str]:
    failures = []
    for path in damaged_records(tmp, cases, seed):
        error = check_record(path)
        on_case(path, error)
        if error:
            failures.append(f"{path.name}: {error}")
    return failures

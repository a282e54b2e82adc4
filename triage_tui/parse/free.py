"""`free`, `free -h`, `free -b/-k/-m/-g` output → SystemMemory.

Plain numbers carry no unit: `free` prints KiB unless told otherwise, so the caller passes the
unit when it knows the command (a `$ free -m` line before the table). `-h` figures carry their
own unit (Gi, Mi, G, M, B).
"""

from __future__ import annotations

import re

from ..model.snapshot import SystemMemory
from .text_errors import ParseError

_SUFFIX = {"": None, "B": 1, "K": 1 << 10, "KI": 1 << 10, "M": 1 << 20, "MI": 1 << 20, "G": 1 << 30, "GI": 1 << 30,
           "T": 1 << 40, "TI": 1 << 40, "P": 1 << 50, "PI": 1 << 50}
UNIT_FLAGS = {"-b": 1, "--bytes": 1, "-k": 1 << 10, "--kibi": 1 << 10, "-m": 1 << 20, "--mebi": 1 << 20,
              "-g": 1 << 30, "--gibi": 1 << 30}
_VALUE = re.compile(r"^(\d+(?:[.,]\d+)?)([A-Za-z]*)$")


def is_free_header(line: str) -> bool:
    cols = line.split()
    return len(cols) >= 3 and cols[:3] == ["total", "used", "free"]


def size(text: str, unit: int = 1024) -> int:
    m = _VALUE.match(text.strip())
    if not m:
        raise ParseError(f"not a size: {text!r}")
    number, suffix = float(m.group(1).replace(",", ".")), m.group(2).upper()
    if suffix not in _SUFFIX:
        raise ParseError(f"unknown unit in {text!r}")
    factor = _SUFFIX[suffix]
    return int(number * (factor if factor is not None else unit))


def parse_free(text: str, unit: int = 1024) -> SystemMemory:
    """The Mem: and Swap: rows under the header. Raises ParseError without a header and a Mem: row."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if is_free_header(line)), None)
    if start is None:
        raise ParseError("no `free` header (total used free ...)")
    headers = lines[start].split()
    rows: dict[str, dict[str, int]] = {}
    for line in lines[start + 1:start + 5]:
        label, _, rest = line.strip().partition(":")
        if not rest:
            continue
        values = rest.split()
        try:
            rows[label.lower()] = {h: size(v, unit) for h, v in zip(headers, values, strict=False)}
        except ParseError:
            continue
    mem = rows.get("mem")
    if not mem or "total" not in mem:
        raise ParseError("a `free` header without a readable Mem: row")
    swap = rows.get("swap", {})
    cache = mem.get("buff/cache", mem.get("buffers", 0) + mem.get("cache", mem.get("cached", 0)))
    kw: dict = dict(total_bytes=mem["total"], used_bytes=mem.get("used"), free_bytes=mem.get("free"),
                    shared_bytes=mem.get("shared"), buff_cache_bytes=cache, available_bytes=mem.get("available"),
                    swap_total_bytes=swap.get("total"), swap_used_bytes=swap.get("used"))
    return SystemMemory(**{k: v for k, v in kw.items() if v is not None})

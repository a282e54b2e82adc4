"""Parse `ss -ltnpH` (listening TCP sockets with their processes)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PID = re.compile(r"pid=(\d+)")


@dataclass(frozen=True)
class SsListen:
    address: str
    port: int
    pids: tuple[int, ...]
    family: str  # tcp | tcp6


def parse_ss_listen(text: str) -> list[SsListen]:
    """`LISTEN 0 128 127.0.0.1:8000 0.0.0.0:* users:(("python",pid=12,fd=3))` → SsListen rows."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 5 or parts[0] != "LISTEN":
            continue
        local = parts[3]
        address, _, port = local.rpartition(":")
        if not port.isdecimal():
            continue
        family = "tcp6" if address.startswith("[") else "tcp"
        out.append(SsListen(address.strip("[]"), int(port), tuple(int(p) for p in _PID.findall(line)), family))
    return out

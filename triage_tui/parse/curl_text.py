"""`curl -v` / `curl` output → PortProbes (accepted, refused, timed out)."""

from __future__ import annotations

import re

from ..model.snapshot import PortProbe

_REFUSED = re.compile(r"(?:connect to|Failed to connect to) (\S+?) port (\d+).*?(Connection refused|Couldn't connect)", re.I)
_TIMEOUT = re.compile(r"(?:Failed to connect to|connect to) (\S+?) port (\d+).*?(timed out|Timeout)", re.I)
_CONNECTED = re.compile(r"Connected to (\S+) (?:\((\S+)\) )?port (\d+)", re.I)
_HTTP = re.compile(r"^<?\s*HTTP/[\d.]+ (\d{3})")
# `* `, `< `, `> ` with the space curl -v prints: `<NO OTHER FAILURES>` (torchrun) is not curl output
CURL_LINE = re.compile(r"^\s*([*<>] |curl: \(\d+\))|^\s*HTTP/[\d.]+ \d{3}")


def status_line(line: str) -> str:
    """The status code of a curl reply line (`< HTTP/1.1 200 OK` → "200"), else ""."""
    m = _HTTP.match(line)
    return m.group(1) if m else ""


def parse_curl(text: str) -> list[PortProbe]:
    probes: list[PortProbe] = []
    connected: tuple[str, int] | None = None
    for line in text.splitlines():
        for pattern, result in ((_REFUSED, "refused"), (_TIMEOUT, "timed out")):
            m = pattern.search(line)
            if m:
                probes.append(PortProbe(int(m.group(2)), m.group(1).strip("[]"), result, line.strip()))
                break
        m = _CONNECTED.search(line)
        if m:
            connected = (m.group(2) or m.group(1), int(m.group(3)))
        h = _HTTP.match(line)
        if h and connected:
            probes.append(PortProbe(connected[1], connected[0], "accepted", f"HTTP {h.group(1)}"))
            connected = None
    if connected:
        probes.append(PortProbe(connected[1], connected[0], "accepted", "connected"))
    return probes

"""Ports the target itself names: its command line, its environment, the URLs its log announces.

Replaces reading `ps -o args`, `tr '\\0' '\\n' < /proc/PID/environ | grep MASTER_` and `grep -E 'listening on|
running on' server.log` by hand before `curl`-ing the port. Each port comes with who named it and what it is
for: "http" (a server port a client would send a request to) or "store" (a rendezvous / TCPStore port, which
is only connected to, never sent bytes: a stray request must not upset a store).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from ..model.snapshot import LogTail, ProcessInfo

MAX_NAMED = 6  # ports probed per tick, at most: each probe of a wedged server costs its timeout

_HTTP_FLAGS = re.compile(r"^--(port|http-port|http_port|server-port|server_port|api-port|listen-port)(?:=(.+))?$")
_BIND_FLAGS = re.compile(r"^(--bind|-b|--listen|--host-port|--address)(?:=(.+))?$")
_STORE_FLAGS = re.compile(r"^--(master-port|master_port|dist-init-addr|dist_init_addr|rdzv-endpoint|rdzv_endpoint|"
                          r"init-method|init_method|dist-url|dist_url)(?:=(.+))?$")
_TCP_URL = re.compile(r"tcp://\[?([\w.:-]*?)\]?:(\d{2,5})\b")
_HOST_PORT = re.compile(r"^\[?([\w.:-]*?)\]?:(\d{2,5})$")
_LOG_URL = re.compile(r"(?i)(?:listening on|running on|serving on|started server on|server started on|"
                      r"available at|bound to)\s+(?:https?://)?\[?([\w.:-]*?)\]?:(\d{2,5})\b")
_HTTP_URL = re.compile(r"\bhttps?://\[?([\w.:-]*?)\]?:(\d{2,5})\b")
_LOCAL_HOSTS = ("", "0.0.0.0", "::", "localhost", "127.0.0.1", "::1", "*")


@dataclass(frozen=True)
class NamedPort:
    port: int
    role: str  # http | store
    origin: str  # "--port 8000 in PID 12's command line"


def _port(text: str) -> int:
    value = int(text)
    return value if 0 < value < 65536 else 0


def _local(host: str) -> bool:
    """Only the target's own host is probed: a port named with another host's address is not ours to try."""
    return host.lower() in _LOCAL_HOSTS or host.startswith("127.")


def from_cmdline(p: ProcessInfo) -> list[NamedPort]:
    return list(_cmdline_ports(p.pid, tuple(p.cmdline)))


@lru_cache(maxsize=65536)  # keyed by PID too: room for a 10,000-process tree's turnover
def _cmdline_ports(pid: int, cmdline: tuple[str, ...]) -> tuple[NamedPort, ...]:
    """The ports one command line names, worked out once per (PID, argv): every tick asked again for
    every process (three regexes per argument, ~6 ms a refresh at 1,000 processes) and argv rarely
    changes."""
    out: list[NamedPort] = []
    args = list(cmdline)
    for i, arg in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else ""
        for pattern, role in ((_HTTP_FLAGS, "http"), (_STORE_FLAGS, "store"), (_BIND_FLAGS, "http")):
            m = pattern.match(arg)
            if not m:
                continue
            value = m.group(2) if m.group(2) is not None else nxt
            flag = arg.split("=", 1)[0]
            if value.isdecimal() and (port := _port(value)):
                out.append(NamedPort(port, role, f"{flag} {port} in PID {pid}'s command line"))
            else:
                hp = _TCP_URL.search(value) or _HOST_PORT.match(value)
                if hp and _local(hp.group(1)) and (port := _port(hp.group(2))):
                    out.append(NamedPort(port, role, f"{flag} {value} in PID {pid}'s command line"))
        tcp = _TCP_URL.search(arg)
        if tcp and not _STORE_FLAGS.match(arg) and _local(tcp.group(1)) and (port := _port(tcp.group(2))):
            out.append(NamedPort(port, "store", f"{tcp.group(0)} in PID {pid}'s command line"))
    return tuple(out)


def from_environ(pid: int, environ: dict[str, str]) -> list[NamedPort]:
    port = environ.get("MASTER_PORT", "")
    if port.isdecimal() and _port(port) and _local(environ.get("MASTER_ADDR", "")):
        return [NamedPort(int(port), "store", f"MASTER_PORT={port} in PID {pid}'s environment")]
    return []


def from_logs(logs: Iterable[LogTail]) -> list[NamedPort]:
    out: list[NamedPort] = []
    for tail in logs:
        for line in [ln.text for ln in tail.lines[-200:]] + [tail.partial]:
            seen: set[int] = set()
            for pattern in (_LOG_URL, _HTTP_URL):
                for m in pattern.finditer(line):
                    port = _port(m.group(2))
                    if _local(m.group(1)) and port and port not in seen:
                        seen.add(port)
                        out.append(NamedPort(port, "http", f"announced in {tail.source}: {m.group(0)[:60]!r}"))
    return out


def read_environ(pid: int, proc_root: str = "/proc") -> dict[str, str]:
    """/proc/PID/environ (the environment the process started with); {} where it is not ours to read."""
    try:
        with open(f"{proc_root}/{pid}/environ", "rb") as fh:
            raw = fh.read(256 * 1024)
    except OSError:
        return {}
    out: dict[str, str] = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep and key in (b"MASTER_PORT", b"MASTER_ADDR", b"RANK", b"WORLD_SIZE", b"LOCAL_RANK"):
            out[key.decode(errors="replace")] = value.decode(errors="replace")
    return out


def named_by_processes(processes: Sequence[ProcessInfo], environs: dict[int, dict[str, str]]) -> list[NamedPort]:
    """The ports the live processes' command lines and environments name, in tree order."""
    candidates: list[NamedPort] = []
    for p in processes:
        if p.exited or p.state == "Z":
            continue
        candidates += from_cmdline(p)
        candidates += from_environ(p.pid, environs.get(p.pid, {}))
    return candidates


def named_ports(processes: Sequence[ProcessInfo], environs: dict[int, dict[str, str]],
                logs: Sequence[LogTail], by_processes: Optional[Sequence[NamedPort]] = None) -> list[NamedPort]:
    """Every port the tree names, first naming kept, a store port never re-labelled http, at most MAX_NAMED.
    `by_processes`: named_by_processes of these rows, when the caller kept it (the same rows as last tick)."""
    found: dict[int, NamedPort] = {}
    candidates = list(by_processes) if by_processes is not None else named_by_processes(processes, environs)
    candidates += from_logs(logs)
    for named in candidates:
        if named.port not in found:
            found[named.port] = named
        elif named.role == "store" and found[named.port].role != "store":
            found[named.port] = NamedPort(named.port, "store", found[named.port].origin)
    return list(found.values())[:MAX_NAMED]

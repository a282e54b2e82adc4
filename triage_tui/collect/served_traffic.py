"""Bytes a server's connections moved since the last look, as the kernel counts them per TCP socket.

Replaces `ss -tin sport = :PORT` (tcp_info's bytes_acked / bytes_received of every connection on a port
the tree serves) read twice and subtracted by hand, and `ss -tan state time-wait sport = :PORT` (connections
the server closed after serving them: HTTP/1.0, `Connection: close`). A server whose clients are answered
moves bytes even when its log is quiet and its CPU low; a wedged one moves none.

triage's own probe connections are not a client: the prober hands its local endpoints to `exclude`, and a
connection whose far end is one of them is left out (its bytes would make a wedged server look served).
Standard library only and Python 3.8-compatible (it runs in the SSH agent too). Raises OSError where
netlink sock_diag is refused; the caller reports the figure unavailable.
"""

from __future__ import annotations

import socket
import struct
from collections import OrderedDict
from collections.abc import Iterable
from typing import NamedTuple, Optional

from ..model.snapshot import ServedTraffic
from .sock_diag import sock_diag_dump
from .socket_table import TCP_STATES, address_text

_INET_REQ = struct.Struct("=BBBBI")  # struct inet_diag_req_v2: family, protocol, ext, pad, states
_ATTR = struct.Struct("=HH")  # struct rtattr
INET_DIAG_INFO = 2
_MSG_BYTES = 72  # struct inet_diag_msg
_BYTES_ACKED = 120  # offsetof(struct tcp_info, tcpi_bytes_acked); tcpi_bytes_received follows (Linux >= 4.1)
_SKIP_STATES = ("LISTEN", "SYN_SENT", "SYN_RECV")
PROBES_KEPT = 4096  # the prober's recent endpoints remembered: a probe's server end lingers in TIME_WAIT 60 s


class Conn(NamedTuple):
    """One connection on a served port: its far end, state, and the kernel's byte counters (None: not reported)."""

    port: int
    local: str
    remote: str
    inode: int  # 0: closed (TIME_WAIT) or never accepted
    state: str
    acked: Optional[int]  # bytes the server sent that the client acknowledged
    received: Optional[int]


def _parse(data: bytes, body: int, end: int) -> Conn:
    family, state = data[body], data[body + 1]
    sport, dport = struct.unpack_from(">HH", data, body + 4)
    inode = struct.unpack_from("=I", data, body + 68)[0]
    acked = received = None
    at = body + _MSG_BYTES
    while at + _ATTR.size <= end:
        length, attr = _ATTR.unpack_from(data, at)
        if length < _ATTR.size:
            break
        if attr == INET_DIAG_INFO and length - _ATTR.size >= _BYTES_ACKED + 16:
            acked, received = struct.unpack_from("=QQ", data, at + _ATTR.size + _BYTES_ACKED)
        at += (length + 3) & ~3
    return Conn(port=sport, local=address_text(data[body + 8:body + 24], sport, family),
                remote=address_text(data[body + 24:body + 40], dport, family), inode=inode,
                state=TCP_STATES.get(state, str(state)), acked=acked, received=received)


def connections_on(ports: Iterable[int]) -> list[Conn]:
    """Every TCP connection (any state but listening/connecting) whose local port is one of `ports`, v4 and v6."""
    wanted = set(ports)
    if not wanted:
        return []
    out: list[Conn] = []
    for family in (socket.AF_INET, socket.AF_INET6):
        request = _INET_REQ.pack(family, socket.IPPROTO_TCP, 1 << (INET_DIAG_INFO - 1), 0, 0xFFFFFFFF) + bytes(48)
        out += [c for c in sock_diag_dump(request, _parse) if c.port in wanted and c.state not in _SKIP_STATES]
    return out


def endpoint_text(sockname: tuple) -> str:
    """A socket's getsockname() as address_text writes it ("127.0.0.1:5", "[::1]:5", v4-mapped as v4)."""
    host, port = str(sockname[0]), int(sockname[1])
    if ":" in host:
        if host.startswith("::ffff:") and "." in host:
            return f"{host[7:]}:{port}"
        return f"[{host}]:{port}"
    return f"{host}:{port}"


class ServedTrafficReader:
    """What each served port's connections moved since the previous look (the first look is a baseline)."""

    def __init__(self) -> None:
        self._before: dict[tuple[int, str, str], tuple[int, int]] = {}  # (port, local, remote) → (acked, received)
        self._closed: set[tuple[int, str, str]] = set()  # TIME_WAIT ends seen
        self._probes: OrderedDict[str, None] = OrderedDict()
        self._looked = False

    def exclude(self, endpoint: str) -> None:
        """A local endpoint of triage's own probe: connections from it are not a client's."""
        self._probes[endpoint] = None
        self._probes.move_to_end(endpoint)
        while len(self._probes) > PROBES_KEPT:
            self._probes.popitem(last=False)

    def read(self, ports: Iterable[int]) -> tuple[ServedTraffic, ...]:
        ports = sorted(set(ports))
        conns = connections_on(ports)
        first = not self._looked
        self._looked = True
        sent = dict.fromkeys(ports, 0)
        got = dict.fromkeys(ports, 0)
        live = dict.fromkeys(ports, 0)
        closed = dict.fromkeys(ports, 0)
        probes = dict.fromkeys(ports, 0)
        now: dict[tuple[int, str, str], tuple[int, int]] = {}
        ended: set[tuple[int, str, str]] = set()
        for c in conns:
            key = (c.port, c.local, c.remote)
            if c.remote in self._probes:
                probes[c.port] += 1
                continue
            if c.state == "TIME_WAIT":
                ended.add(key)
                if key not in self._closed and not first:
                    closed[c.port] += 1
                continue
            if c.acked is None or c.received is None:
                continue
            live[c.port] += 1
            now[key] = (c.acked, c.received)
            before = self._before.get(key)
            if first:
                continue
            if before is None:  # opened since the last look: all it moved, it moved since
                before = (0, 0)
            sent[c.port] += max(0, c.acked - before[0])
            got[c.port] += max(0, c.received - before[1])
        self._before, self._closed = now, ended
        return tuple(ServedTraffic(port=p, connections=live[p], bytes_sent=sent[p], bytes_received=got[p],
                                   closed=closed[p], probes_excluded=probes[p], baseline=first) for p in ports)

"""Every unix, TCP and UDP socket of our network namespace, by inode, from one netlink dump each.

Replaces `ss -xanp` / `ss -tuanp` (without the -p: the holders come from the fd tables the wait
collector walks). unix sockets carry their peer's inode (UNIX_DIAG_PEER) and queue lengths
(UNIX_DIAG_RQLEN); TCP/UDP sockets their addresses, state and queues (inet_diag). A TCP connection
the kernel completed into a listener's backlog but nobody accepted yet has inode 0: that is how
"the listener never accepted" is told. Standard library only (it runs in the SSH agent too).
Raises OSError where netlink sock_diag is refused (seccomp, old kernels).
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from collections.abc import Callable
from typing import NamedTuple

from .sock_diag import sock_diag_dump

_INET_REQ = struct.Struct("=BBBBI")  # struct inet_diag_req_v2, then a 48-byte inet_diag_sockid
_UNIX_REQ = struct.Struct("=BBHIIIII")  # struct unix_diag_req
_ATTR = struct.Struct("=HH")  # struct rtattr
UDIAG_SHOW_NAME, UDIAG_SHOW_PEER, UDIAG_SHOW_RQLEN = 0x1, 0x4, 0x10
UNIX_DIAG_NAME, UNIX_DIAG_PEER, UNIX_DIAG_RQLEN = 0, 2, 4

TCP_STATES = {1: "ESTABLISHED", 2: "SYN_SENT", 3: "SYN_RECV", 4: "FIN_WAIT1", 5: "FIN_WAIT2", 6: "TIME_WAIT",
              7: "CLOSE", 8: "CLOSE_WAIT", 9: "LAST_ACK", 10: "LISTEN", 11: "CLOSING"}
UNIX_TYPES = {1: "stream", 2: "dgram", 5: "seqpacket"}


class SocketEnd(NamedTuple):
    """One socket as sock_diag reports it. Addresses are "HOST:PORT" ("[::1]:80" for v6)."""

    inode: int
    proto: str  # unix | tcp | udp
    state: str  # TCP_STATES name (unix sockets use the same numbers)
    local: str = ""
    remote: str = ""
    rqueue: int = 0  # TCP LISTEN: connections waiting in the accept queue; else bytes unread
    wqueue: int = 0  # TCP LISTEN: the backlog; else bytes unsent
    peer_inode: int = 0  # unix: the other end
    kind: str = ""  # unix: stream | dgram | seqpacket


def address_text(raw: bytes, port: int, family: int) -> str:
    """"127.0.0.1:80", "[::1]:80"; a v4-mapped v6 address is written as the v4 one (a dual-stack
    listener's connections then match their v4 clients)."""
    if family == socket.AF_INET:
        return f"{ipaddress.IPv4Address(raw[:4])}:{port}"
    v6 = ipaddress.IPv6Address(raw[:16])
    if v6.ipv4_mapped is not None:
        return f"{v6.ipv4_mapped}:{port}"
    return f"[{v6}]:{port}"


def _parse_inet(proto: str) -> Callable[[bytes, int, int], SocketEnd]:
    def parse(data: bytes, body: int, end: int) -> SocketEnd:
        # struct inet_diag_msg: family, state, timer, retrans, sockid (48 bytes), expires, rqueue, wqueue, uid, inode
        family, state = data[body], data[body + 1]
        sport, dport = struct.unpack_from(">HH", data, body + 4)
        src = data[body + 8:body + 24]
        dst = data[body + 24:body + 40]
        rqueue, wqueue, _uid, inode = struct.unpack_from("=IIII", data, body + 56)
        return SocketEnd(inode=inode, proto=proto, state=TCP_STATES.get(state, str(state)),
                         local=address_text(src, sport, family), remote=address_text(dst, dport, family),
                         rqueue=rqueue, wqueue=wqueue)
    return parse


def _parse_unix(data: bytes, body: int, end: int) -> SocketEnd:
    # struct unix_diag_msg: family, type, state, pad, ino, cookie[2]; then rtattrs
    kind, state = data[body + 1], data[body + 2]
    inode = struct.unpack_from("=I", data, body + 4)[0]
    name, peer, rqueue, wqueue = "", 0, 0, 0
    at = body + 16
    while at + _ATTR.size <= end:
        length, attr = _ATTR.unpack_from(data, at)
        if length < _ATTR.size:
            break
        value = data[at + _ATTR.size:at + length]
        if attr == UNIX_DIAG_NAME:
            name = ("@" + value[1:].decode("utf-8", "replace") if value[:1] == b"\0"
                    else value.rstrip(b"\0").decode("utf-8", "replace"))
        elif attr == UNIX_DIAG_PEER and len(value) >= 4:
            peer = struct.unpack_from("=I", value)[0]
        elif attr == UNIX_DIAG_RQLEN and len(value) >= 8:
            rqueue, wqueue = struct.unpack_from("=II", value)
        at += (length + 3) & ~3
    return SocketEnd(inode=inode, proto="unix", state=TCP_STATES.get(state, str(state)), local=name,
                     rqueue=rqueue, wqueue=wqueue, peer_inode=peer, kind=UNIX_TYPES.get(kind, str(kind)))


def unix_sockets() -> list[SocketEnd]:
    """Every unix socket (all states) with its name, peer and queues."""
    request = _UNIX_REQ.pack(socket.AF_UNIX, 0, 0, 0xFFFFFFFF, 0,
                             UDIAG_SHOW_NAME | UDIAG_SHOW_PEER | UDIAG_SHOW_RQLEN, 0xFFFFFFFF, 0xFFFFFFFF)
    return sock_diag_dump(request, _parse_unix)


def inet_sockets(protocol: int = socket.IPPROTO_TCP) -> list[SocketEnd]:
    """Every TCP (or UDP) socket in every state, v4 then v6; connections not yet accepted included."""
    proto = "tcp" if protocol == socket.IPPROTO_TCP else "udp"
    out: list[SocketEnd] = []
    for family in (socket.AF_INET, socket.AF_INET6):
        request = _INET_REQ.pack(family, protocol, 0, 0, 0xFFFFFFFF) + bytes(48)
        out += sock_diag_dump(request, _parse_inet(proto))
    return out


class SocketTable:
    """The three dumps, read at most once each per refresh and only when a wait needs them."""

    def __init__(self) -> None:
        self._unix: dict[int, SocketEnd] | None = None
        self._inet: list[SocketEnd] | None = None
        self._by_inode: dict[int, SocketEnd] | None = None
        self.error = ""  # why a dump failed ("sock_diag refused …"): sockets then resolve to their inode only

    def _load_inet(self) -> list[SocketEnd]:
        if self._inet is None:
            self._inet = []
            try:
                self._inet = inet_sockets(socket.IPPROTO_TCP) + inet_sockets(socket.IPPROTO_UDP)
            except OSError as exc:
                self.error = f"sock_diag (inet): {exc}"
        return self._inet

    def find(self, inode: int) -> SocketEnd | None:
        """The socket of `inode`, unix first (the common case between ranks and their launcher)."""
        if self._unix is None:
            self._unix = {}
            try:
                self._unix = {s.inode: s for s in unix_sockets()}
            except OSError as exc:
                self.error = f"sock_diag (unix): {exc}"
        found = self._unix.get(inode)
        if found is not None:
            return found
        if self._by_inode is None:
            self._by_inode = {s.inode: s for s in self._load_inet() if s.inode}
        return self._by_inode.get(inode)

    def server_side(self, client: SocketEnd) -> SocketEnd | None:
        """The other end of a local TCP connection (local and remote swapped), or None when remote."""
        for s in self._load_inet():
            if s.proto == client.proto and s.local == client.remote and s.remote == client.local and s is not client:
                return s
        return None

    def listener(self, address: str) -> SocketEnd | None:
        """The LISTEN socket that takes connections to `address` ("HOST:PORT"), wildcard binds included."""
        port = address.rpartition(":")[2]
        host = address.rpartition(":")[0]
        best = None
        for s in self._load_inet():
            if s.proto != "tcp" or s.state != "LISTEN" or s.local.rpartition(":")[2] != port:
                continue
            bound = s.local.rpartition(":")[0]
            if bound == host:
                return s
            if bound in ("0.0.0.0", "[::]"):
                best = s
        return best

"""Listening TCP sockets and what a connection to a port gets.

Replaces `ss -ltnp` (sockets matched to processes by inode: /proc/net/tcp{,6} → /proc/PID/fd
socket:[inode]) and `curl -sS -m 1 http://127.0.0.1:PORT/health` / `http://[::1]:PORT/health`: a server
port gets a real request (the kernel completes the handshake into the backlog of a server whose workers
are wedged, so a connect alone proves nothing) and "accepts connections but does not answer" is its own
result; a rendezvous store's port is only connected to.
"""

from __future__ import annotations

import dataclasses
import os
import socket
from collections.abc import Iterable, Sequence
from typing import Optional, Union

from ..model.snapshot import ListeningSocket, PortProbe, PortReport, ServedTraffic
from ..model.unavailable import Unavailable, unavailable_from_error
from ..parse.procfs import TCP_LISTEN, TcpSocket, parse_net_tcp
from .announced_ports import MAX_NAMED, NamedPort
from .proc_table import read_seq_text
from .served_traffic import ServedTrafficReader, endpoint_text
from .sock_diag import listening_tcp_netlink

PROBE_TIMEOUT_S = 0.5
ANSWER_TIMEOUT_S = 1.0  # how long a request may take before the port counts as "does not answer"


def listening_tcp_sockets(proc: str = "/proc") -> list[TcpSocket]:
    """Every TCP socket in LISTEN state in our network namespace (v4 and v6): through netlink
    sock_diag where allowed (about fifty times cheaper, see sock_diag.py), else /proc/net/tcp{,6}."""
    if proc == "/proc":
        try:
            return listening_tcp_netlink()
        except OSError:
            pass  # netlink refused (seccomp, no sock_diag): the files say the same, slower
    found: list[TcpSocket] = []
    for family in ("tcp", "tcp6"):
        try:
            text = read_seq_text(f"{proc}/net/{family}")
        except OSError:
            continue  # no IPv6 in this kernel, or /proc/net hidden
        found.extend(s for s in parse_net_tcp(text, family) if s.state == TCP_LISTEN)
    return found


def socket_inodes(pid: int, proc: str = "/proc") -> set[int]:
    """Inodes of the sockets PID holds open (needs permission to read /proc/PID/fd)."""
    inodes: set[int] = set()
    fd_dir = f"{proc}/{pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            link = os.readlink(f"{fd_dir}/{fd}")
        except OSError:
            continue  # closed between listdir and readlink
        if link.startswith("socket:["):
            try:
                inodes.add(int(link[8:-1]))
            except ValueError:
                continue
    return inodes


def pids_holding_inodes(inodes: set[int], pids: Iterable[int], proc: str = "/proc") -> dict[int, int]:
    """{inode: pid} for the sockets in `inodes` held by any of `pids` (first holder wins)."""
    holders: dict[int, int] = {}
    if not inodes:
        return holders
    for pid in pids:
        try:
            held = socket_inodes(pid, proc) & inodes
        except OSError:
            continue
        for inode in held:
            holders.setdefault(inode, pid)
        if len(holders) == len(inodes):
            break
    return holders


def _note_endpoint(sock: socket.socket, probed: Optional[list[str]]) -> None:
    """Hand the probe's own local endpoint to `probed`: its connection is triage's, not a client's."""
    if probed is not None:
        try:
            probed.append(endpoint_text(sock.getsockname()))
        except OSError:
            pass  # not bound: nothing of it reached the server


def _bind_to_note(sock: socket.socket, address: str, probed: Optional[list[str]]) -> None:
    """Bind the probe to the address it connects to (a local one: loopback or this host's own), so that its
    endpoint is known before the connect and the server's end of it can be told from a client's."""
    if probed is None:
        return
    try:
        sock.bind((address, 0))
    except OSError:
        return  # not an address of this host: the kernel picks; nothing to tell apart here
    _note_endpoint(sock, probed)


def probe_port(port: int, address: str, timeout_s: float = PROBE_TIMEOUT_S,
               probed: Optional[list[str]] = None) -> PortProbe:
    """Connect once and close: what `curl` would have met at the TCP level."""
    connected = _connect(port, address, timeout_s, probed)
    if isinstance(connected, PortProbe):
        return connected
    connected.close()
    return PortProbe(port, address, "accepted")


def _connect(port: int, address: str, timeout_s: float,
             probed: Optional[list[str]]) -> Union[socket.socket, PortProbe]:
    """A socket connected to `address:port`, or the PortProbe that says why it is not (the socket closed)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        return PortProbe(port, address, "error", f"no {'IPv6' if family == socket.AF_INET6 else 'IPv4'} socket: {exc}")
    sock.settimeout(timeout_s)
    try:
        _bind_to_note(sock, address, probed)
        sock.connect((address, port))
        return sock
    except ConnectionRefusedError:
        sock.close()
        return PortProbe(port, address, "refused", "nothing accepts connections on this port")
    except TimeoutError:
        sock.close()
        return PortProbe(port, address, "timed out", f"no answer within {timeout_s:g} s (backlog full or filtered)")
    except OSError as exc:
        sock.close()
        return PortProbe(port, address, "error", f"{type(exc).__name__}: {exc}")


def probe_http(port: int, address: str, timeout_s: float = PROBE_TIMEOUT_S,
               answer_s: float = ANSWER_TIMEOUT_S, probed: Optional[list[str]] = None) -> PortProbe:
    """Connect, send `GET /health` as a client would, wait for the first bytes of a reply.

    answered: any reply (the status line is in the detail; a 404 still answers); no answer: the connection
    was accepted (or closed) and nothing came back in time."""
    sock = _connect(port, address, timeout_s, probed)
    if isinstance(sock, PortProbe):
        return sock
    host = f"[{address}]" if sock.family == socket.AF_INET6 else address
    try:
        sock.settimeout(answer_s)
        sock.sendall(f"GET /health HTTP/1.0\r\nHost: {host}:{port}\r\nUser-Agent: triage\r\n\r\n".encode())
        first = sock.recv(256)
    except TimeoutError:
        return PortProbe(port, address, "no answer",
                         f"accepts connections but does not answer: no reply to GET /health within {answer_s:g} s")
    except OSError as exc:
        return PortProbe(port, address, "no answer", f"accepts connections, then {type(exc).__name__}: {exc}")
    finally:
        sock.close()
    if not first:
        return PortProbe(port, address, "no answer", "accepts connections, then closes without a reply")
    status = first.split(b"\r\n", 1)[0].decode("ascii", "replace")[:60]
    return PortProbe(port, address, "answered",
                     f"GET /health → {status}" if status.startswith("HTTP/") else "replies (not HTTP)")


_DENIED = None


class PortCollector:
    """collect_ports with memory: reading every fd link of every process each tick is the costly
    part, and a process's listening sockets can only change when the machine's set of listening
    inodes changes, so per-PID answers are kept until that set (or the PID set) changes.

    When that set changes (on a busy machine, whenever anything opens or closes a listener), a process that
    provably has not run since the last refresh (`unchanged`) has opened and closed nothing: its sockets are
    the ones read before, met with the new set, and its fd table is not read again."""

    def __init__(self, proc: str = "/proc") -> None:
        self._proc = proc
        self._key: frozenset[int] = frozenset()
        self._by_pid: dict[int, Optional[tuple[int, ...]]] = {}  # None: permission denied
        self._sockets: dict[int, frozenset[int]] = {}  # every socket inode each PID held when its fds were read
        self.served = ServedTrafficReader() if proc == "/proc" else None  # netlink reads our namespace only
        self.scans = 0  # fd tables read, for the tests

    def collect(self, pids: Sequence[int], port: Optional[int] = None, named: Sequence[NamedPort] = (),
                ranks: frozenset[int] = frozenset(), unchanged: frozenset[int] = frozenset()) -> PortReport:
        """`named`: ports the tree names (announced_ports); `ranks`: PIDs whose own listeners are not probed
        unless named (a torch.distributed rank listens for its peers: gloo/NCCL bootstrap, not a service);
        `unchanged`: PIDs that provably have not run since the last refresh (see the class doc)."""
        sockets = listening_tcp_sockets(self._proc)
        key = frozenset(s.inode for s in sockets)
        if key != self._key:
            self._key, self._by_pid = key, {}
        wanted = set(pids)
        for gone in set(self._by_pid) - wanted:
            del self._by_pid[gone]
        for gone in set(self._sockets) - wanted:
            del self._sockets[gone]
        for pid in pids:
            if pid in self._by_pid:
                continue
            known = self._sockets.get(pid) if pid in unchanged else None
            if known is not None:
                self._by_pid[pid] = tuple(sorted(known & key))
                continue
            try:
                self.scans += 1
                held = frozenset(socket_inodes(pid, self._proc))
            except PermissionError:
                self._by_pid[pid] = _DENIED
                self._sockets.pop(pid, None)
                continue
            except OSError:
                self._sockets.pop(pid, None)
                continue  # exited: not cached, so a reused PID is read afresh
            self._sockets[pid] = held
            self._by_pid[pid] = tuple(sorted(held & key))
        return _report(sockets, [(pid, self._by_pid.get(pid, ())) for pid in pids], port, named, ranks, self.served)


def collect_ports(pids: Sequence[int], port: Optional[int] = None, proc: str = "/proc") -> PortReport:
    """Sockets the tree listens on, and (for --port / :PORT) probes of 127.0.0.1 and ::1."""
    return PortCollector(proc).collect(pids, port)


def _probe_plan(port: Optional[int], named: Sequence[NamedPort], listening: Sequence[ListeningSocket],
                ranks: frozenset[int]) -> list[NamedPort]:
    """--port first, then the ports the tree names, then its own listening sockets (not a rank's)."""
    plan: dict[int, NamedPort] = {}
    if port is not None:
        plan[port] = NamedPort(port, "http", "--port")
    for n in named:
        plan.setdefault(n.port, n)
    for s in listening:
        if s.pid not in ranks and s.port not in plan:
            plan[s.port] = NamedPort(s.port, "http", f"listening socket of PID {s.pid}")
    return list(plan.values())[:MAX_NAMED]


def _addresses(port: int, listening: Sequence[ListeningSocket]) -> list[str]:
    """Loopback v4 and v6, or only the families something listens on; a socket bound to one local address
    (not a wildcard, not loopback) is tried there: it is this host's own address."""
    mine = [s for s in listening if s.port == port]
    if not mine:
        return ["127.0.0.1", "::1"]
    out: list[str] = []
    for s in mine:
        if s.address in ("0.0.0.0", "127.0.0.1") or s.address.startswith("127."):
            address = "127.0.0.1"
        elif s.address in ("::", "::1"):
            address = "::1"
        else:
            address = s.address
        if address not in out:
            out.append(address)
    return out


def _report(sockets: list[TcpSocket], held: list[tuple[int, Optional[tuple[int, ...]]]],
            port: Optional[int], named: Sequence[NamedPort] = (), ranks: frozenset[int] = frozenset(),
            reader: Optional[ServedTrafficReader] = None) -> PortReport:
    error: Optional[Unavailable] = None
    listening: list[ListeningSocket] = []
    by_inode = {s.inode: s for s in sockets}
    denied = 0
    for pid, inodes in held:
        if inodes is _DENIED:
            denied += 1
            continue
        for inode in inodes:
            s = by_inode[inode]
            listening.append(ListeningSocket(pid=pid, address=s.address, port=s.port, family=s.family))
    if denied:
        error = unavailable_from_error(PermissionError(), f"sockets of {denied} process(es)")
    # the bytes the served ports moved are read before this refresh's probes (whose connections are excluded)
    served: tuple[ServedTraffic, ...] = ()
    served_error: Optional[Unavailable] = None
    if reader is not None:
        stores = {n.port for n in named if n.role != "http"}
        try:
            served = reader.read(s.port for s in listening if s.pid not in ranks and s.port not in stores)
        except OSError as exc:
            served_error = unavailable_from_error(exc, "connection byte counters (sock_diag)")
    probed: Optional[list[str]] = [] if reader is not None else None
    probes: list[PortProbe] = []
    for wanted in _probe_plan(port, named, listening, ranks):
        anyone = [s for s in sockets if s.port == wanted.port]
        addresses = _addresses(wanted.port, [ListeningSocket(pid=0, address=s.address, port=s.port, family=s.family)
                                             for s in anyone])
        for address in addresses:
            probe = probe_http(wanted.port, address, probed=probed) if wanted.role == "http" and anyone else \
                probe_port(wanted.port, address, probed=probed)
            if probe.result not in ("accepted", "answered", "no answer") and not anyone:
                probe = PortProbe(probe.port, probe.address, probe.result,
                                  (probe.detail + "; " if probe.detail else "") + "no socket listens on this port")
            probes.append(dataclasses.replace(probe, origin=wanted.origin + ("" if wanted.role == "http" else
                                                                             " (a rendezvous store: connect only)")))
    for endpoint in probed or ():
        assert reader is not None
        reader.exclude(endpoint)
    return PortReport(listening=tuple(listening), probes=tuple(probes), error=error, served=served,
                      served_error=served_error)

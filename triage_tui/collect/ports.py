"""Listening TCP sockets and what a connection to a port gets.

Replaces `ss -ltnp` (sockets matched to processes by inode: /proc/net/tcp{,6} → /proc/PID/fd
socket:[inode]) and `curl -v http://127.0.0.1:PORT` / `http://[::1]:PORT` (a bare TCP connect
with a short timeout: accepted, refused or timed out).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Sequence
from typing import Optional

from ..model.snapshot import ListeningSocket, PortProbe, PortReport
from ..model.unavailable import Unavailable, unavailable_from_error
from ..parse.procfs import TCP_LISTEN, TcpSocket, parse_net_tcp
from .proc_table import read_text
from .sock_diag import listening_tcp_netlink

PROBE_TIMEOUT_S = 0.5


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
            text = read_text(f"{proc}/net/{family}")
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


def probe_port(port: int, address: str, timeout_s: float = PROBE_TIMEOUT_S) -> PortProbe:
    """Connect once and close: what `curl` would have met at the TCP level."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        return PortProbe(port, address, "error", f"no {'IPv6' if family == socket.AF_INET6 else 'IPv4'} socket: {exc}")
    sock.settimeout(timeout_s)
    try:
        sock.connect((address, port))
        return PortProbe(port, address, "accepted")
    except ConnectionRefusedError:
        return PortProbe(port, address, "refused", "nothing accepts connections on this port")
    except TimeoutError:
        return PortProbe(port, address, "timed out", f"no answer within {timeout_s:g} s (backlog full or filtered)")
    except OSError as exc:
        return PortProbe(port, address, "error", f"{type(exc).__name__}: {exc}")
    finally:
        sock.close()


_DENIED = None


class PortCollector:
    """collect_ports with memory: reading every fd link of every process each tick is the costly
    part, and a process's listening sockets can only change when the machine's set of listening
    inodes changes, so per-PID answers are kept until that set (or the PID set) changes."""

    def __init__(self, proc: str = "/proc") -> None:
        self._proc = proc
        self._key: frozenset[int] = frozenset()
        self._by_pid: dict[int, Optional[tuple[int, ...]]] = {}  # None: permission denied

    def collect(self, pids: Sequence[int], port: Optional[int] = None) -> PortReport:
        sockets = listening_tcp_sockets(self._proc)
        key = frozenset(s.inode for s in sockets)
        if key != self._key:
            self._key, self._by_pid = key, {}
        wanted = set(pids)
        for gone in set(self._by_pid) - wanted:
            del self._by_pid[gone]
        for pid in pids:
            if pid in self._by_pid:
                continue
            try:
                self._by_pid[pid] = tuple(sorted(socket_inodes(pid, self._proc) & key))
            except PermissionError:
                self._by_pid[pid] = _DENIED
            except OSError:
                continue  # exited: not cached, so a reused PID is read afresh
        return _report(sockets, [(pid, self._by_pid.get(pid, ())) for pid in pids], port)


def collect_ports(pids: Sequence[int], port: Optional[int] = None, proc: str = "/proc") -> PortReport:
    """Sockets the tree listens on, and (for --port / :PORT) probes of 127.0.0.1 and ::1."""
    return PortCollector(proc).collect(pids, port)


def _report(sockets: list[TcpSocket], held: list[tuple[int, Optional[tuple[int, ...]]]],
            port: Optional[int]) -> PortReport:
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
    probes: list[PortProbe] = []
    if port is not None:
        anyone = [s for s in sockets if s.port == port]
        for address in ("127.0.0.1", "::1"):
            probe = probe_port(port, address)
            if probe.result != "accepted" and not anyone:
                probe = PortProbe(probe.port, probe.address, probe.result,
                                  (probe.detail + "; " if probe.detail else "") + "no socket listens on this port")
            probes.append(probe)
    return PortReport(listening=tuple(listening), probes=tuple(probes), error=error)

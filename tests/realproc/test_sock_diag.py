"""Listening sockets through netlink sock_diag agree with /proc/net/tcp{,6}."""

from __future__ import annotations

import os
import socket

from triage_tui.collect.ports import listening_tcp_sockets
from triage_tui.collect.sock_diag import listening_tcp_netlink


def _from_files() -> set[tuple[str, int, int, str]]:
    # a proc root other than "/proc" reads the files: same files, the fallback path
    return {(s.address, s.port, s.inode, s.family) for s in listening_tcp_sockets("/proc/self/..")}


def test_netlink_and_proc_files_list_the_same_listening_sockets() -> None:
    v4 = socket.socket(socket.AF_INET)
    v6 = socket.socket(socket.AF_INET6)
    idle = socket.socket(socket.AF_INET)  # bound, not listening: in neither list
    try:
        v4.bind(("127.0.0.1", 0))
        v4.listen()
        v6.bind(("::1", 0))
        v6.listen()
        idle.bind(("127.0.0.1", 0))
        ours = {(v4.getsockname()[1], os.fstat(v4.fileno()).st_ino, "127.0.0.1", "tcp"),
                (v6.getsockname()[1], os.fstat(v6.fileno()).st_ino, "::1", "tcp6")}
        netlink = {(s.address, s.port, s.inode, s.family) for s in listening_tcp_netlink()}
        for port, inode, address, family in ours:
            assert (address, port, inode, family) in netlink
        assert all(s.state == 0x0A for s in listening_tcp_netlink())
        assert idle.getsockname()[1] not in {port for _, port, _, _ in netlink}
        files = _from_files()
        assert {x for x in netlink if x[2] in {i for _, i, _, _ in ours}} == {
            x for x in files if x[2] in {i for _, i, _, _ in ours}}
    finally:
        v4.close()
        v6.close()
        idle.close()

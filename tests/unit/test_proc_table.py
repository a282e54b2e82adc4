"""/proc files of many records come a page per read(): they are read to the end, not to the first short read."""

from __future__ import annotations

import socket
from contextlib import ExitStack

from triage_tui.collect.ports import listening_tcp_sockets
from triage_tui.collect.proc_table import read_bytes, read_seq_text


def test_a_file_of_many_records_is_read_whole() -> None:
    with open("/proc/self/maps", "rb") as f:
        whole = f.read()
    assert len(whole) > 4096, "the test needs a maps file longer than a page"
    assert read_seq_text("/proc/self/maps").count("\n") >= whole.count(b"\n") - 2  # the reading itself maps a little
    assert len(read_bytes("/proc/self/maps")) < len(whole)  # why read_bytes is only for one-record files


def test_the_proc_net_fallback_finds_every_listener_beyond_the_first_page() -> None:
    """Without netlink (seccomp, old kernels) the listeners come from /proc/net/tcp: 150 bytes a socket,
    so a first page ends after ~27 of them."""
    with ExitStack() as stack:
        ports = []
        for _ in range(60):
            s = stack.enter_context(socket.socket())
            s.bind(("127.0.0.1", 0))
            s.listen()
            ports.append(s.getsockname()[1])
        found = {t.port for t in listening_tcp_sockets(proc="/proc/.")}  # not "/proc": skips netlink
        assert set(ports) <= found, sorted(set(ports) - found)

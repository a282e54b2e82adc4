"""Port probes: what a connect to 127.0.0.1 and ::1 gets, as `curl -v` would have shown."""

from __future__ import annotations

import socket

from triage_tui.collect.ports import collect_ports, probe_port


def test_unbound_port_is_refused_and_says_nothing_listens() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    report = collect_ports([], port=port)
    v4 = next(p for p in report.probes if p.address == "127.0.0.1")
    assert v4.result == "refused" and "no socket listens" in v4.detail
    assert {p.address for p in report.probes} == {"127.0.0.1", "::1"}
    assert all(p.result in ("refused", "error") for p in report.probes)


def test_listening_socket_is_accepted() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        probe = probe_port(s.getsockname()[1], "127.0.0.1")
    assert probe.result == "accepted"


LISTENER = r'''
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
os.write(int(sys.argv[1]), str(s.getsockname()[1]).encode() + b"\n")
os.read(int(sys.argv[2]), 1)  # asleep until told to close it
s.close()
os.write(int(sys.argv[1]), b"closed\n")
os.read(int(sys.argv[2]), 1)
'''


def test_a_process_that_did_not_run_keeps_its_listeners_without_a_rescan_when_the_machine_changes() -> None:
    """The machine's set of listening sockets changes (here: this test opens one); an idle listener's fd table
    is not read again but its listener is still reported; once it has run (closed it), it is read again."""
    import os
    import subprocess
    import sys

    from triage_tui.collect.ports import PortCollector

    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", LISTENER, str(ready_w), str(go_r)], pass_fds=(ready_w, go_r))
    os.close(ready_w)
    os.close(go_r)
    try:
        port = int(os.read(ready_r, 64).decode().strip())
        collector = PortCollector()
        first = collector.collect([child.pid])
        assert [(s.pid, s.port) for s in first.listening] == [(child.pid, port)]
        scans = collector.scans
        with socket.socket() as other:  # another process's listener (ours): the machine's set moved
            other.bind(("127.0.0.1", 0))
            other.listen(1)
            again = collector.collect([child.pid], unchanged=frozenset([child.pid]))
            assert collector.scans == scans  # it did not run: what it holds was read before
            assert [(s.pid, s.port) for s in again.listening] == [(child.pid, port)]
        os.write(go_w, b"c")
        assert os.read(ready_r, 64) == b"closed\n"
        after = collector.collect([child.pid])  # it ran (not unchanged): read afresh
        assert collector.scans == scans + 1 and after.listening == ()
    finally:
        child.kill()
        child.wait()
        for fd in (ready_r, go_w):
            os.close(fd)

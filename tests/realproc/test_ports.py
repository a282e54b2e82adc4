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

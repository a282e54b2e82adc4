"""A server whose clients are answered is progressing, whatever its log and CPU say (#13: request rate as
progress): real http.server, real clients in processes of their own, the real collector and engine."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from triage_tui.collect.snapshot import SnapshotCollector
from triage_tui.collect.targets import resolve_targets
from triage_tui.diagnose.observations import observe_snapshots
from triage_tui.model.options import CollectOptions
from triage_tui.model.snapshot import Snapshot

PROGRAM = str(Path(__file__).with_name("served_programs.py"))
LOOKS = 4


@pytest.fixture
def server() -> Iterator[tuple[int, int]]:
    proc = subprocess.Popen([sys.executable, PROGRAM, "server"], stdout=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None
    words = proc.stdout.readline().decode().split()
    assert words and words[0] == "ready", words
    try:
        yield proc.pid, int(words[1])
    finally:
        proc.kill()
        proc.wait(timeout=30)


def _client(kind: str, port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, PROGRAM, kind, str(port)], stdout=subprocess.PIPE,
                            start_new_session=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().decode().strip() == "ok"  # its first request was answered
    return proc


def _watch(pid: int, looks: int = LOOKS, until=None) -> list[Snapshot]:
    """`looks` refreshes, or up to that many until `until(history)` holds."""
    collector = SnapshotCollector()
    try:
        target = resolve_targets([str(pid)])
        history: list[Snapshot] = []
        for _ in range(looks):
            history.append(collector.collect(target, CollectOptions()))
            if until is not None and until(history):
                break
            # between looks: wait on the next request being answered would couple the test to the client;
            # a short pause lets requests happen (no assertion depends on how many)
            subprocess.run(["sleep", "0.6"], check=True)
        return history
    finally:
        collector.close()


def _ids(history: list[Snapshot]) -> set[str]:
    return {o.id for o in observe_snapshots(history)}


@pytest.mark.parametrize("kind", ["keepalive", "per-request"])
def test_a_served_client_is_progress(server: tuple[int, int], kind: str) -> None:
    pid, port = server
    client = _client(kind, port)
    try:
        history = _watch(pid)
    finally:
        client.kill()
        client.wait(timeout=30)
    served = [t for snap in history[1:] for t in snap.ports.served if t.port == port]
    assert served and not any(t.baseline for t in served)
    assert history[0].ports.served[0].baseline
    ids = _ids(history)
    assert "requests-served" in ids and "progress-seen" in ids, ids
    assert "all-idle" not in ids
    if kind == "keepalive":
        assert sum(t.bytes_sent for t in served) > 0
    else:
        assert sum(t.closed for t in served) > 0


def _probe_ends_seen(port: int, history: list[Snapshot]) -> int:
    return sum(t.probes_excluded for snap in history for t in snap.ports.served if t.port == port)


def test_triage_probe_alone_is_not_progress(server: tuple[int, int]) -> None:
    pid, port = server
    # the server's end of a probe is only there to see when the server closed first (it then waits in TIME_WAIT);
    # when the probe closes first, that end is gone at once. Which closes first is a race (under load the probe
    # often wins), so look until a probe's end was seen, at most 20 times, rather than a fixed number of times.
    history = _watch(pid, looks=20, until=lambda h: len(h) >= LOOKS and _probe_ends_seen(port, h) > 0)
    # the probe was answered at every look: its connections were there to count, and were left out
    assert all(any(p.result == "answered" for p in snap.ports.probes) for snap in history)
    served = [t for snap in history for t in snap.ports.served if t.port == port]
    assert len(served) == len(history) and all(t.bytes_sent == 0 and t.closed == 0 for t in served), served
    assert _probe_ends_seen(port, history) > 0  # the probe's ends were seen, and told apart
    ids = _ids(history)
    assert "requests-served" not in ids and "progress-seen" not in ids, ids

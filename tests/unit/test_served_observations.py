"""requests-served from the served-bytes figures of each look (the collector's side runs on real sockets in
tests/realproc/test_served_traffic.py): the first look is a baseline, later looks add up, nothing moved is
nothing said, and it withdraws all-idle and makes progress-seen."""

from __future__ import annotations

from triage_tui.diagnose.observations import observe_snapshots
from triage_tui.diagnose.resource_observations import served_observations
from triage_tui.model.snapshot import PortReport, ServedTraffic, Snapshot


def _look(at: float, *served: ServedTraffic) -> Snapshot:
    return Snapshot(taken_at=at, ports=PortReport(served=served))


def test_bytes_after_the_baseline_are_requests_served() -> None:
    history = [_look(0.0, ServedTraffic(8000, connections=1, bytes_sent=10_000, baseline=True)),
               _look(5.0, ServedTraffic(8000, connections=1, bytes_sent=600)),
               _look(10.0, ServedTraffic(8000, connections=2, bytes_sent=400, closed=3))]
    (obs,) = served_observations(history)
    assert obs.id == "requests-served" and obs.figures["bytes_sent"] == 1000 and obs.figures["closed"] == 3
    assert "port 8000" in obs.text and "probe" in obs.text


def test_a_baseline_alone_or_nothing_moved_says_nothing() -> None:
    assert served_observations([_look(0.0, ServedTraffic(8000, bytes_sent=5000, baseline=True))]) == []
    quiet = [_look(0.0, ServedTraffic(8000, baseline=True)), _look(5.0, ServedTraffic(8000, probes_excluded=2))]
    assert served_observations(quiet) == []


def test_requests_served_is_progress() -> None:
    history = [_look(0.0, ServedTraffic(8000, baseline=True)), _look(15.0, ServedTraffic(8000, bytes_sent=900))]
    ids = {o.id for o in observe_snapshots(history)}
    assert {"requests-served", "progress-seen"} <= ids

"""Fixtures for the app tests: the app on a live Incident over a FixtureHost (triage_tui.demo.fixture).

The host serves fixed, reference-incident-shaped raw snapshots with a frozen clock; the Incident runs
the real engine over them, so every hypothesis a Pilot test or an SVG snapshot shows is the engine's."""

from __future__ import annotations

import asyncio
import inspect
import os
import time

import pytest

from triage_tui.demo.fixture import FixtureHost, build_snapshots
from triage_tui.incident import Incident
from triage_tui.model.snapshot import Snapshot
from triage_tui.ui.app import TriageApp


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    """Run `async def` tests here with asyncio.run (no async plugin is a dependency of the project)."""
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
        asyncio.run(pyfuncitem.obj(**args))
        return True
    return None


@pytest.fixture(autouse=True)
def utc_clock(monkeypatch: pytest.MonkeyPatch):
    """Times render in UTC so SVG snapshots do not depend on the machine's zone."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def fixture_incident(snapshots: list[Snapshot] | None = None, preload: int = 60, gate=None) -> Incident:
    """A live Incident over a FixtureHost, ticked `preload` times before the app opens; `gate` (set
    after the preload) blocks the host's next collect until it opens: a slow source."""
    host = FixtureHost(snapshots if snapshots is not None else build_snapshots(80))
    incident = Incident(host, host.target, host.options)
    for _ in range(preload):
        incident.tick()
    host.gate = gate
    return incident


def make_app(incident: Incident, export_dir: str = ".", live: bool = True, **options) -> TriageApp:
    # A long interval: the timer never fires inside a test; ticks come from mount and `r` only.
    # The clock is the host's frozen one (the latest snapshot's time): nothing reads as stale.
    return TriageApp(incident, interval=3600, live=live, export_dir=export_dir, clock=incident.host.clock, **options)


@pytest.fixture
def incident() -> Incident:
    return fixture_incident(build_snapshots(80), preload=60)


@pytest.fixture
def host(incident: Incident) -> FixtureHost:
    return incident.host


@pytest.fixture
def app(incident: Incident, tmp_path) -> TriageApp:
    return make_app(incident, export_dir=str(tmp_path))


async def settle(pilot) -> None:
    """Wait until every worker started so far is done and its messages are handled."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def env_utc() -> dict[str, str]:
    return {**os.environ, "TZ": "UTC"}

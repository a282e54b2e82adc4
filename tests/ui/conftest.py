"""Fixtures for the app tests: the app fed by a fixed, demo-shaped incident (triage_tui.ui.sample)."""

from __future__ import annotations

import asyncio
import inspect
import os
import time

import pytest

from triage_tui.ui.app import TriageApp
from triage_tui.ui.sample import SampleIncident, build_snapshots


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


def make_app(incident: SampleIncident, export_dir: str = ".", live: bool = True) -> TriageApp:
    # A long interval: the timer never fires inside a test; ticks come from mount and `r` only.
    # The clock is the latest snapshot's time, so nothing reads as stale and every render is the same.
    return TriageApp(
        incident, interval=3600, live=live, export_dir=export_dir,
        clock=lambda: incident.latest.taken_at if incident.latest else 0.0,
    )


@pytest.fixture
def incident() -> SampleIncident:
    return SampleIncident(build_snapshots(80), preload=60)


@pytest.fixture
def app(incident: SampleIncident, tmp_path) -> TriageApp:
    return make_app(incident, export_dir=str(tmp_path))


async def settle(pilot) -> None:
    """Wait until every worker started so far is done and its messages are handled."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def env_utc() -> dict[str, str]:
    return {**os.environ, "TZ": "UTC"}

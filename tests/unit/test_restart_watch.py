"""A target that is gone is looked for again only by specs that can find something new, and the look (a
machine-wide pass) is made every tick at first, then once in RESTART_SLOW_TICKS ticks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import pytest

from triage_tui.incident import RESTART_EVERY_TICK, RESTART_SLOW_TICKS, Incident
from triage_tui.model.options import CollectOptions, TargetError
from triage_tui.model.snapshot import Snapshot, Target, TargetRoot


class GoneHost:
    """A host on which the target's processes are all gone and nothing new starts."""

    name = "gone-host"

    def __init__(self) -> None:
        self.resolves = 0

    def resolve(self, specs: Sequence[str], port: Optional[int] = None) -> Target:
        self.resolves += 1
        raise TargetError("matches no process")

    def collect(self, target: Target, options: CollectOptions) -> Snapshot:
        return Snapshot(host=self.name, taken_at=1.0, target=target)

    def close(self) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)


def _resolves_over(specs: tuple[str, ...], ticks: int) -> list[int]:
    host = GoneHost()
    incident = Incident(host, Target(specs=specs, roots=(TargetRoot(4242, "test"),)))  # type: ignore[arg-type]
    counts = []
    for _ in range(ticks):
        incident.tick()
        counts.append(host.resolves)
    return counts


def test_a_pid_spec_never_looks_again() -> None:
    assert _resolves_over(("4242",), 30)[-1] == 0


@pytest.mark.parametrize("spec", ["name:some-server", ":8123"])
def test_a_name_or_port_spec_looks_every_tick_then_less_often(spec: str) -> None:
    counts = _resolves_over((spec,), 1 + RESTART_EVERY_TICK + 4 * RESTART_SLOW_TICKS)
    # the first tick sees it gone; then a look every tick, then once in RESTART_SLOW_TICKS
    assert counts[RESTART_EVERY_TICK] == RESTART_EVERY_TICK
    assert counts[-1] == RESTART_EVERY_TICK + 4

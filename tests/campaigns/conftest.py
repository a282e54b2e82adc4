"""The hardening campaigns of issue #19, bounded (seconds each): a fixture that counts cases and
failures per campaign, and a summary line per campaign at the end of the run.

Each campaign is one test; it passes when it tried at least one case and none failed. The summary
("campaign <name>: N cases, M failures") is printed whatever the outcome, so a run says what was tried."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from typing import Optional

import pytest

from tests.ssh.conftest import node, sleeper_tree, ssh_env  # noqa: F401  (the real sshd on loopback)

RESULTS: dict[str, tuple[int, list[str]]] = {}


class Campaign:
    def __init__(self, name: str) -> None:
        self.name = name
        self.cases = 0
        self.failures: list[str] = []

    def check(self, what: str, fn: Callable[[], Optional[str]]) -> None:
        """Run one case: `fn` returns None when it held, else what went wrong; an exception is a failure."""
        self.cases += 1
        try:
            error = fn()
        except Exception as exc:  # the point of a campaign: anything unexpected is counted, named
            error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
        if error:
            self.failures.append(f"{what}: {error}")

    def done(self) -> None:
        assert self.cases > 0, f"campaign {self.name} tried nothing"
        assert self.failures == [], "\n".join(self.failures[:20])


@pytest.fixture
def campaign(request: pytest.FixtureRequest) -> Iterator[Campaign]:
    c = Campaign(request.node.name.removeprefix("test_campaign_"))
    try:
        yield c
    finally:
        RESULTS[c.name] = (c.cases, c.failures)


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if not RESULTS:
        return
    terminalreporter.section("hardening campaigns (#19)")
    for name, (cases, failures) in RESULTS.items():
        terminalreporter.write_line(f"campaign {name}: {cases} cases, {len(failures)} failures")
    total = sum(c for c, _ in RESULTS.values())
    terminalreporter.write_line(f"all campaigns: {total} cases, {sum(len(f) for _, f in RESULTS.values())} failures")

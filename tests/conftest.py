"""Suite-wide: every face records by default (issue #8), so point the XDG state directory at a
throwaway folder for the whole run; subprocesses inherit it. Nothing lands in ~/.local/state.
Also the demo incident most real-process tests watch: 3 ranks on a 16 MiB weights file, one per module."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

from triage_tui.demo.incident import DemoIncident, DemoInfo

DEMO_WORKERS = 3

_STATE = tempfile.mkdtemp(prefix="triage-test-state-")
os.environ["XDG_STATE_HOME"] = _STATE
atexit.register(shutil.rmtree, _STATE, True)


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoInfo]:
    """The built-in incident with DEMO_WORKERS ranks, started (ready handshake) and removed after the module."""
    incident = DemoIncident(workers=DEMO_WORKERS, weights_mb=16)
    try:
        yield incident.start()
    finally:
        incident.stop()

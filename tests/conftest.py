"""Suite-wide: every face records by default (issue #8), so point the XDG state directory at a
throwaway folder for the whole run; subprocesses inherit it. Nothing lands in ~/.local/state."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

_STATE = tempfile.mkdtemp(prefix="triage-test-state-")
os.environ["XDG_STATE_HOME"] = _STATE
atexit.register(shutil.rmtree, _STATE, True)

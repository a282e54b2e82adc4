"""The report's renderer, the logs source and the demo stay free of textual and rich (they run headless)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", [
    "triage_tui.render.markdown", "triage_tui.collect.logs", "triage_tui.demo.incident",
    "triage_tui.demo.worker", "triage_tui.demo.launcher", "triage_tui.commands.report",
])
def test_module_does_not_import_textual_or_rich(module: str) -> None:
    code = (
        f"import importlib, sys; importlib.import_module({module!r}); "
        "print(','.join(sorted(n for n in sys.modules if n.split('.')[0] in ('textual', 'rich'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} pulled in {out.stdout.strip()}"

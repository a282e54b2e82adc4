"""The layering: textual and rich stay inside triage_tui.ui (the core imports in a fresh interpreter without
them), and the import-linter contracts in pyproject.toml hold (scripts/test.sh runs `lint-imports` too)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CORE = [
    "triage_tui.model", "triage_tui.collect", "triage_tui.parse", "triage_tui.diagnose",
    "triage_tui.host", "triage_tui.record", "triage_tui.render", "triage_tui.incident", "triage_tui.cli",
    "triage_tui.commands", "triage_tui.demo",
]
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("module", CORE)
def test_core_module_does_not_import_textual_or_rich(module: str) -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        f"m = importlib.import_module({module!r})\n"
        "if hasattr(m, '__path__'):\n"
        "    for info in pkgutil.walk_packages(m.__path__, m.__name__ + '.'):\n"
        "        importlib.import_module(info.name)\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} pulled in {out.stdout.strip()}"


def test_import_contracts_hold() -> None:
    """model < parse < collect < diagnose < render < host, record < incident < ui < commands, no cycles."""
    out = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
                          "--no-cache"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "0 broken" in out.stdout

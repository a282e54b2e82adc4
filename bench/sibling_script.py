"""Another bench script loaded as a module, once: the selection scripts build on each other's rules and scoring.

bench/ holds scripts, not a package; each pass's selection imports the pass before it. The module is kept in
sys.modules under its name (its dataclasses look their module up there), so every script that asks for it shares one
copy: a pass that changes a setting of another's for its own run sets it back (see paste_selection_22.py).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parent


def sibling(name: str) -> ModuleType:
    """bench/NAME.py as module NAME, loaded on first use."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

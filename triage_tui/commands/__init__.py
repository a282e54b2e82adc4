"""One module per face of the command line, each with `run(args) -> int`."""

from __future__ import annotations

import sys


def fail(message: str, code: int = 2) -> int:
    """Print one clear line for the user (no traceback) and return the exit code."""
    print(f"triage: error: {message}", file=sys.stderr)
    return code

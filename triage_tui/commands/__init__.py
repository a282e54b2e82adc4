"""One module per face of the command line, each with `run(args) -> int`."""

from __future__ import annotations

import sys

from ..render.plain_text import visible


def fail(message: str, code: int = 2) -> int:
    """Print one clear line for the user (no traceback) and return the exit code."""
    # a message can quote a file name or a line of the input: shown with its controls escaped
    print(f"triage: error: {visible(message, keep_newlines=True)}", file=sys.stderr)
    return code

"""One module per face of the command line, each with `run(args) -> int`.

Exit codes (the README lists them): 0 success; 1 a runtime failure (the command line was right but
the job could not be done: no such process, a file that cannot be read, a node that does not
answer); 2 a usage error (an unknown option, a bad value, a malformed target, an interactive face
without a terminal); 130 interrupted by Ctrl-C.
"""

from __future__ import annotations

import sys

from ..render.plain_text import visible

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def fail(message: str, code: int = EXIT_FAILURE) -> int:
    """Print one clear line for the user (no traceback) and return the exit code."""
    # a message can quote a file name or a line of the input: shown with its controls escaped
    print(f"triage: error: {visible(message, keep_newlines=True)}", file=sys.stderr)
    return code


def usage_error(message: str) -> int:
    """A command line that is wrong as written: one line, exit 2 (argparse's own code for the same)."""
    return fail(message, EXIT_USAGE)


def target_failure(exc: Exception) -> int:
    """A target that could not be resolved: a usage error when the spec is malformed, else a failure."""
    from ..model.options import TargetSpecError

    return fail(str(exc), EXIT_USAGE if isinstance(exc, TargetSpecError) else EXIT_FAILURE)

"""The fuzz harness's child: runs `triage diagnose` in-process on one input path per stdin line.

After each input it writes one line, `ok RC` or `exception TYPE: MESSAGE`, so the parent (test_diagnose_fuzz.py)
can bound the time of every single input from outside: a hang is a missing line, and the parent kills us.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys


def main() -> None:
    from triage_tui.commands import diagnose

    for raw in sys.stdin:
        path, fmt = raw.rstrip("\n").rsplit(" ", 1)
        sink = io.StringIO()
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                rc = diagnose.run(argparse.Namespace(files=[path], format=fmt))
            reply = f"ok {rc}"
        except BaseException as exc:  # noqa: BLE001 - the point is to report any of them to the parent
            reply = f"exception {type(exc).__name__}: {str(exc)[:200]!r}"
        sys.stdout.write(reply + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

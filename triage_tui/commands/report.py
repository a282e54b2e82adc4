"""`triage report`: not built yet (issue #2)."""

from __future__ import annotations

import argparse

from . import fail


def run(args: argparse.Namespace) -> int:
    return fail("`triage report` is not available yet (issue #2); try `triage report`")

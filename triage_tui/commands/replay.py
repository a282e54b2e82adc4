"""`triage replay`: not built yet (issue #8)."""

from __future__ import annotations

import argparse

from . import fail


def run(args: argparse.Namespace) -> int:
    return fail("`triage replay` is not available yet (issue #8); try `triage report`")

"""`triage diagnose`: not built yet (issue #6)."""

from __future__ import annotations

import argparse

from . import fail


def run(args: argparse.Namespace) -> int:
    return fail("`triage diagnose` is not available yet (issue #6); try `triage report`")

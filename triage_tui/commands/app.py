"""the interactive app: not built yet (issue #3)."""

from __future__ import annotations

import argparse

from . import fail


def run(args: argparse.Namespace) -> int:
    return fail("the interactive app is not available yet (issue #3); try `triage report`")

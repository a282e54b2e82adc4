"""`triage stacks`: not built yet (issue #4)."""

from __future__ import annotations

import argparse

from . import fail


def run(args: argparse.Namespace) -> int:
    return fail("`triage stacks` is not available yet (issue #4); try `triage report`")

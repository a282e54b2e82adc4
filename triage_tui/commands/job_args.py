"""Whether a command line names a job across nodes, read from the parsed arguments alone.

Kept apart from `commands/job.py`, which imports the multi-node machinery (the fleet, its engine, the
SSH client): a face watching one host asks this first and never imports any of that.
"""

from __future__ import annotations

import argparse


def is_job(args: argparse.Namespace) -> bool:
    """True when the face must watch several nodes (or a Slurm job) rather than one host."""
    return bool(getattr(args, "slurm", None)) or len(getattr(args, "nodes", None) or ()) > 1 \
        or bool(getattr(args, "hostfiles", None))

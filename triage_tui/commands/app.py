"""`triage [TARGET ...]`: resolve the target on this machine and open the interactive app on it.

`run_app` is the one entry other faces use to open the same app on their own incident:
`triage demo` on the demo's, `triage replay` on a replay source (with live=False).
"""

from __future__ import annotations

import argparse
from typing import Any

from . import fail


def run_app(incident: Any, interval: float = 2.0, theme: str = "dark", live: bool = True) -> int:
    """Open the app on `incident` until the user quits; the incident is closed on the way out."""
    from ..ui.app import run_app as _run  # textual is imported only when the app is opened

    return _run(incident, interval=interval, theme=theme, live=live)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "ssh", None):
        try:
            from ..host.ssh import SshHost  # noqa: F401  # the ssh part provides it
        except ImportError:
            return fail(f"--ssh {args.ssh}: watching a remote node is not available in this build (no SSH host)")
        return fail("--ssh: the app does not open SSH hosts yet; run triage on the node itself")
    from ..host.base import CollectOptions, TargetError
    from ..host.local import LocalHost
    from ..incident import Incident

    host = LocalHost()
    try:
        target = host.resolve(args.targets, port=args.port)
    except TargetError as exc:
        host.close()
        return fail(str(exc))
    options = CollectOptions(
        logs=tuple(args.log), port=args.port, interval_s=args.interval, smaps_budget_ms=args.smaps_budget_ms,
    )
    return run_app(Incident(host, target, options), interval=args.interval, theme=args.theme)

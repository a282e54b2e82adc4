"""Which Host a command watches: this machine, or the node named by --ssh."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Optional

from .base import Host
from .local import local_host

if TYPE_CHECKING:
    from .ssh_connect import SshOptions

__all__ = ["host_from_args", "local_host"]


def _ssh_options(args: argparse.Namespace, destination: str, interactive: Optional[bool] = None) -> SshOptions:
    """The connection flags of `args` (-i, --ssh-config, --accept-new-host-key) for one destination; a
    malformed destination fails here, before any connection."""
    from .ssh_connect import SshOptions, split_destination

    split_destination(destination)
    return SshOptions(
        destination=destination,
        identity=getattr(args, "identity", None),
        config_file=getattr(args, "ssh_config", None),
        known_hosts=getattr(args, "known_hosts", None),
        accept_new_host_key=bool(getattr(args, "accept_new_host_key", False)),
        interactive=interactive,
    )


def ssh_host_for(args: argparse.Namespace, destination: str) -> Host:
    """SshHost for one node of a multi-node job, with the connection flags of `args` (and --agentless)."""
    from .ssh import SshHost

    # many nodes at once: a passphrase prompt per node would interleave, and so would status lines
    return SshHost(_ssh_options(args, destination, interactive=False), agentless=bool(getattr(args, "agentless", False)))


def terminal_progress(name: str) -> Callable[[str], None]:
    """Connection steps on one status line of stderr while a terminal watches (resolving, connecting, host
    key, authenticating, uploading the agent N KB, uploading py-spy N MB), instead of a blank screen;
    nothing when stderr is a pipe or a file. The line is cleared when the connection is ready."""
    import sys

    if not sys.stderr.isatty():
        return lambda _: None

    def show(text: str) -> None:
        line = "" if text == "ready" else f"triage: {name}: {text}"
        sys.stderr.write("\r\x1b[K" + line[:200])
        sys.stderr.flush()

    return show


def host_from_args(args: argparse.Namespace) -> Host:
    """LocalHost without --ssh; SshHost with it (-i, --ssh-config, --accept-new-host-key, --agentless).

    Raises TargetError (one line for `commands.fail`) for a bad destination or an unreadable config/key;
    the connection itself is opened by the first resolve(), which raises TargetError (SshError) too.
    """
    destination = getattr(args, "ssh", None)
    if not destination:
        return local_host()
    from .ssh import SshHost
    from .ssh_connect import check_config_file

    options = _ssh_options(args, destination)
    check_config_file(getattr(args, "ssh_config", None))
    return SshHost(options, agentless=bool(getattr(args, "agentless", False)), progress=terminal_progress(destination))

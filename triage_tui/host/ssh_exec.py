"""Running one command on the node over an exec channel, with a hard deadline and bytes counted.

Replaces `ssh node 'COMMAND' < input`. Every remote command goes through here so that none can hang
a refresh: the deadline covers opening the channel, sending stdin and reading until exit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import paramiko

from .ssh_connect import Connection, SshError


@dataclass(frozen=True)
class CommandResult:
    exit_status: int
    stdout: bytes
    stderr: bytes
    bytes_sent: int
    bytes_received: int


def bounded_shell(seconds: float) -> str:
    """`sh -s` (script on stdin) that the node itself ends after `seconds` where coreutils' timeout exists.

    Closing our channel does not stop a remote command (no pty, no SIGHUP): a hung nvidia-smi would
    outlive the refresh that gave up on it. `command -v` reads no stdin, so the script is still there
    for whichever `sh -s` runs.
    """
    n = max(1, int(seconds))
    return f"command -v timeout >/dev/null 2>&1 && exec timeout -k 2 {n} sh -s; exec sh -s"


def run_command(conn: Connection, command: str, timeout_s: float, stdin: bytes = b"") -> CommandResult:
    """Run `command` (already shell-quoted by the caller) and return its output; SshError on timeout."""
    deadline = time.monotonic() + timeout_s
    try:
        channel = conn.transport.open_session(timeout=timeout_s)
    except (paramiko.SSHException, OSError, EOFError) as exc:
        raise SshError(f"cannot open a channel to {conn.endpoint.alias}: {exc}") from None
    out, err = bytearray(), bytearray()
    try:
        # sending may wait on the peer's window for a while (an 8 MB py-spy): the whole deadline, not 0.2 s
        channel.settimeout(max(0.1, deadline - time.monotonic()))
        channel.exec_command(command)
        if stdin:
            channel.sendall(stdin)
        channel.shutdown_write()
        channel.settimeout(0.2)
        while True:
            if time.monotonic() > deadline:
                raise SshError(f"command on {conn.endpoint.alias} timed out after {timeout_s:.0f} s")
            got = False
            while channel.recv_ready():
                out += channel.recv(65536)
                got = True
            while channel.recv_stderr_ready():
                err += channel.recv_stderr(65536)
                got = True
            if channel.exit_status_ready() and not channel.recv_ready() and not channel.recv_stderr_ready():
                break
            if not got:
                try:  # block briefly for the next bytes rather than spinning
                    chunk = channel.recv(65536)
                except TimeoutError:
                    continue
                if not chunk and channel.exit_status_ready():
                    break
                out += chunk
        status = channel.recv_exit_status()
    except TimeoutError:
        raise SshError(f"command on {conn.endpoint.alias} timed out after {timeout_s:.0f} s") from None
    except (paramiko.SSHException, OSError, EOFError) as exc:
        raise SshError(f"connection to {conn.endpoint.alias} failed during a command: {type(exc).__name__}: {exc}") from None
    finally:
        channel.close()
    return CommandResult(status, bytes(out), bytes(err), len(command) + len(stdin), len(out) + len(err))

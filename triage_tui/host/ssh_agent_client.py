"""The client side of agent mode: start the agent on the node and talk to it over ONE exec channel.

Replaces `scp triage node:/tmp && ssh node python -m triage ...` per refresh: the agent is started once
and each refresh is one JSON request line and one JSON answer line. Every request has a deadline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any, Optional

import paramiko

from ..model.snapshot import SCHEMA_VERSION
from .agent import PROTOCOL_VERSION
from .base import TargetError
from .ssh_agent_bundle import (
    PYSPY_NAME,
    ZIP_NAME,
    agent_command,
    build_zip,
    cleanup_command,
    parse_probe,
    probe_script,
    pyspy_upload_plan,
)
from .ssh_connect import Connection, SshError
from .ssh_exec import run_command


class NoUsablePython(SshError):
    """The node has no Python 3.8+ we may safely run: the caller falls back to agentless mode."""


Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


class AgentSession:
    """A running agent on the node. `request` sends one line and waits (bounded) for its answer."""

    def __init__(self, conn: Connection, channel: paramiko.Channel, private_dir: str, notes: tuple[str, ...]) -> None:
        self.conn = conn
        self.channel = channel
        self.private_dir = private_dir
        self.notes = notes
        self.agent_pid: Optional[int] = None
        self.hello: dict[str, Any] = {}
        self.bytes_sent = 0
        self.bytes_received = 0
        self._buffer = b""
        self._stderr = b""
        self._next_id = 0

    @classmethod
    def start(cls, conn: Connection, pids: Sequence[int] = (), timeout_s: float = 30.0,
              progress: Progress = _quiet) -> AgentSession:
        """Probe the node (read-only), start the agent under a trusted interpreter and send it, on its own
        stdin, the zip (and py-spy where needed); then say hello.

        The agent makes its private directory itself and removes it when its stdin closes, so a client
        killed at any point of this (even mid-upload) leaves nothing on the node. `pids` is unused: the
        target's interpreter is never run (#19), it is only kept for callers.
        """
        del pids
        progress("probing the node for a Python")
        probe_out = run_command(conn, probe_script(), timeout_s)
        try:
            probe = parse_probe(probe_out.stdout.decode(errors="replace"))
        except ValueError as exc:
            raise SshError(f"cannot prepare the node: {exc}: {probe_out.stderr.decode(errors='replace')[-200:]}") from None
        if not probe.python:
            raise NoUsablePython(probe.no_python_reason())
        binary, note = pyspy_upload_plan(probe)
        files = [(ZIP_NAME, build_zip())]
        if binary is not None:
            with open(binary, "rb") as f:
                files.append((PYSPY_NAME, f.read()))
        try:
            channel = conn.transport.open_session(timeout=timeout_s)
            channel.exec_command(agent_command(probe.python))
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise SshError(f"cannot start the agent on {conn.endpoint.alias}: {exc}") from None
        notes = [f"agent mode: python {probe.python} (-I -S, standard library only)", note]
        if probe.skipped:
            notes.append("not run (writable by another user): " + ", ".join(probe.skipped))
        session = cls(conn, channel, "", tuple(notes))
        try:
            deadline = time.monotonic() + timeout_s
            first = session._read_raw_line(deadline).decode(errors="replace")
            if not first.startswith("dir=/"):
                raise SshError(f"the agent on {conn.endpoint.alias} did not start: {first[:120]!r}")
            session.private_dir = first[4:].strip()
            session._upload(files, timeout_s, progress)
            progress("starting the agent")
            session.hello = session.request("hello", timeout_s=timeout_s, schema=SCHEMA_VERSION, protocol=PROTOCOL_VERSION)
        except BaseException:
            session.close()
            raise
        if session.hello.get("schema") != SCHEMA_VERSION or session.hello.get("protocol") != PROTOCOL_VERSION:
            session.close()
            raise SshError(
                f"the agent on {conn.endpoint.alias} speaks schema {session.hello.get('schema')} protocol "
                f"{session.hello.get('protocol')}, this triage {SCHEMA_VERSION}/{PROTOCOL_VERSION}: refusing the mismatch"
            )
        session.agent_pid = session.hello.get("pid")
        return session

    def _upload(self, files: list[tuple[str, bytes]], timeout_s: float, progress: Progress) -> None:
        """Header line, then each file's bytes, on the agent's stdin; progress in KB / MB as it goes."""
        header = (" ".join(f"{name} {len(data)}" for name, data in files) + "\n").encode()
        chunk = 256 << 10
        try:
            self.channel.settimeout(timeout_s)
            self.channel.sendall(header)
            for name, data in files:
                what = "the agent" if name == ZIP_NAME else name
                for at in range(0, len(data), chunk):
                    progress(f"uploading {what} {_size(at)} of {_size(len(data))}")
                    self.channel.sendall(data[at:at + chunk])
                progress(f"uploaded {what} {_size(len(data))}")
                self.bytes_sent += len(data)
        except (OSError, EOFError, paramiko.SSHException) as exc:
            raise SshError(f"upload to {self.conn.endpoint.alias} failed: {exc}") from None
        self.bytes_sent += len(header)

    def request(self, op: str, timeout_s: float = 30.0, **fields: Any) -> dict[str, Any]:
        """One round trip. Raises TargetError for a bad target, SshError for a broken channel or timeout."""
        self._next_id += 1
        line = (json.dumps({"id": self._next_id, "op": op, **fields}) + "\n").encode()
        deadline = time.monotonic() + timeout_s
        try:
            self.channel.settimeout(timeout_s)
            self.channel.sendall(line)
            self.bytes_sent += len(line)
            while True:
                reply = self._read_line(deadline)
                if reply.get("id") == self._next_id or reply.get("id") is None:
                    break  # an answer to an older, timed-out request is skipped
        except (OSError, EOFError, paramiko.SSHException) as exc:
            raise SshError(f"agent on {self.conn.endpoint.alias}: {type(exc).__name__}: {exc}") from None
        if not reply.get("ok"):
            message = f"agent on {self.conn.endpoint.alias}: {reply.get('error', 'failed')}"
            raise TargetError(reply["error"]) if reply.get("kind") == "target" else SshError(message)
        return reply

    def _read_line(self, deadline: float) -> dict[str, Any]:
        line = self._read_raw_line(deadline)
        try:
            return json.loads(line)
        except ValueError:
            raise SshError(f"agent on {self.conn.endpoint.alias} sent something that is not JSON: {line[:80]!r}") from None

    def _read_raw_line(self, deadline: float) -> bytes:
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SshError(f"agent on {self.conn.endpoint.alias} did not answer in time")
            self._drain_stderr()
            self.channel.settimeout(min(left, 0.5))
            try:
                chunk = self.channel.recv(1 << 20)
            except TimeoutError:
                continue
            if not chunk:
                self._drain_stderr()
                tail = self._stderr.decode(errors="replace").strip().splitlines()[-3:]
                raise SshError(f"agent on {self.conn.endpoint.alias} exited" + (f": {' | '.join(tail)}" if tail else ""))
            self.bytes_received += len(chunk)
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _drain_stderr(self) -> None:
        while self.channel.recv_stderr_ready():
            self._stderr = (self._stderr + self.channel.recv_stderr(65536))[-8192:]

    def close(self, timeout_s: float = 5.0) -> None:
        """Say bye, close the channel (the agent exits on EOF) and remove the directory from this side too."""
        try:
            if self.hello and not self.channel.closed:  # mid-start there is no protocol yet: just close
                self.request("bye", timeout_s=timeout_s)
        except (SshError, TargetError):
            pass
        self.channel.close()
        if self.conn.is_active() and self.private_dir:
            try:
                run_command(self.conn, cleanup_command(self.private_dir, self.agent_pid), timeout_s)
            except SshError:
                pass


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB" if n >= (1 << 20) else f"{max(1, round(n / 1024))} KB"

"""The node side of agent mode: a long-lived process answering JSON requests, one per line, on stdin.

Runs on the node from a zip of triage_tui shipped over SSH (see ssh_agent_bundle). It reuses the same
collectors as a local run (LocalHost); nothing here talks to the network. Standard library and psutil
only: textual is never needed on the node. It exits on `bye` or when stdin closes (the channel went away),
and the bootstrap then removes its private directory.

Protocol (each request and answer one JSON object on one line):
  {"id": 1, "op": "hello", "schema": N, "protocol": P} -> {"id": 1, "ok": true, "schema": N, ...}
  resolve(specs, port) -> target; collect(target, options) -> snapshot;
  capture_stacks(pids, options) -> capture; mappings(pid) -> files; bye.
  Failures: {"id": .., "ok": false, "error": "one line", "kind": "target" | "protocol" | "internal"}.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from typing import Any, Optional, TextIO

from ..model.codec import from_data, to_data
from ..model.snapshot import SCHEMA_VERSION, Target
from .base import CollectOptions, StackOptions, TargetError

PROTOCOL_VERSION = 1


def make_node_host() -> Any:
    """The node's host: the same composition as a local run (LocalHost with logs and GPUs)."""
    from .local import local_host  # not via select: select reaches ssh, whose client imports this module

    return local_host()


def file_mappings(pid: int) -> list[str]:
    """The distinct files a process maps (`awk '{print $6}' /proc/PID/maps | sort -u`)."""
    paths: set[str] = set()
    with open(f"/proc/{int(pid)}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].startswith("/"):
                paths.add(parts[5].strip())
    return sorted(paths)


class AgentServer:
    """Dispatches requests to the node host; every answer carries the request's id."""

    def __init__(self, private_dir: str, host_factory: Callable[[], Any] = make_node_host) -> None:
        self.private_dir = private_dir
        self._factory = host_factory
        self._host: Optional[Any] = None
        self.greeted = False

    @property
    def host(self) -> Any:
        if self._host is None:
            self._host = self._factory()
        return self._host

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "hello":
            theirs = request.get("schema")
            if theirs != SCHEMA_VERSION or request.get("protocol") != PROTOCOL_VERSION:
                return {"ok": False, "kind": "protocol", "error": (
                    f"schema/protocol mismatch: the client speaks schema {theirs} protocol {request.get('protocol')}, "
                    f"this agent schema {SCHEMA_VERSION} protocol {PROTOCOL_VERSION}"), "schema": SCHEMA_VERSION}
            self.greeted = True
            return {"ok": True, "schema": SCHEMA_VERSION, "protocol": PROTOCOL_VERSION, "dir": self.private_dir,
                    "pid": os.getpid(), "python": sys.executable, "pyspy": shutil.which("py-spy") or "",
                    "collectors": type(self.host).__name__}
        if not self.greeted:
            return {"ok": False, "kind": "protocol", "error": "hello first"}
        if op == "resolve":
            port = request.get("port")
            target = self.host.resolve(tuple(str(s) for s in request.get("specs", [])), int(port) if port else None)
            return {"ok": True, "target": to_data(target)}
        if op == "collect":
            target = from_data(Target, request["target"])
            options = from_data(CollectOptions, request.get("options", {}))
            return {"ok": True, "snapshot": to_data(self.host.collect(target, options))}
        if op == "capture_stacks":
            options = from_data(StackOptions, request.get("options", {}))
            capture = self.host.capture_stacks(tuple(int(p) for p in request.get("pids", [])), options)
            return {"ok": True, "capture": to_data(capture)}
        if op == "mappings":
            return {"ok": True, "files": file_mappings(int(request["pid"]))}
        if op == "wait_for_budgeted_reads":
            wait = getattr(self.host, "wait_for_budgeted_reads", None)
            return {"ok": True, "done": bool(wait(float(request.get("wait_s", 10.0)))) if wait else True}
        if op == "bye":
            return {"ok": True, "bye": True}
        return {"ok": False, "kind": "protocol", "error": f"unknown request {op!r}"}

    def answer(self, line: str) -> dict[str, Any]:
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("a request is a JSON object")
        except ValueError as exc:
            return {"id": None, "ok": False, "kind": "protocol", "error": f"bad request: {exc}"}
        try:
            reply = self.handle(request)
        except TargetError as exc:
            reply = {"ok": False, "kind": "target", "error": str(exc)}
        except Exception as exc:  # one failing request must not kill the agent: report it, go on
            reply = {"ok": False, "kind": "internal", "error": f"{type(exc).__name__}: {exc}"}
        reply["id"] = request.get("id")
        return reply

    def serve(self, stdin: TextIO, stdout: TextIO) -> None:
        try:
            for line in stdin:  # EOF: the channel closed, the client is gone: exit
                if not line.strip():
                    continue
                reply = self.answer(line)
                stdout.write(json.dumps(reply, allow_nan=False) + "\n")
                stdout.flush()
                if reply.get("bye"):
                    return
        finally:
            if self._host is not None and hasattr(self._host, "close"):
                self._host.close()


def main(private_dir: str) -> None:
    """Entry point the bootstrap calls with the zip on sys.path; the bootstrap removes `private_dir` after.

    The protocol gets its own copy of stdout; fd 1 and sys.stdout then point at stderr, so a stray print
    in a collector (or a child process writing to fd 1) cannot corrupt the JSON stream.
    """
    protocol_out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    AgentServer(private_dir).serve(sys.stdin, protocol_out)

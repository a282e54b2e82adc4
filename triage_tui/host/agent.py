"""The node side of agent mode: a long-lived process answering JSON requests, one per line, on stdin.

Runs on the node from a zip of triage_tui shipped over SSH (see ssh_agent_bundle), under the node's own
python3 (3.8 or newer) in isolated mode without site: the standard library only, nothing installed (no
psutil, no textual). It reuses the same collectors as a local run (LocalHost); nothing here talks to the
network. It exits on `bye` or when stdin closes (the channel went away); a watcher thread notices the
close even while a request is in flight and removes the private directory (and an uploaded py-spy) itself.

Protocol (each request and answer one JSON object on one line):
  {"id": 1, "op": "hello", "schema": N, "protocol": P} -> {"id": 1, "ok": true, "schema": N, ...}
  resolve(specs, port) -> target; collect(target, options) -> snapshot;
  capture_stacks(pids, options) -> capture; mappings_by_file(pid, targets) -> mappings | unavailable; bye.
  Failures: {"id": .., "ok": false, "error": "one line", "kind": "target" | "protocol" | "internal"}.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, Any, Optional, TextIO

from ..model.codec import from_data, to_data
from ..model.snapshot import SCHEMA_VERSION, Target
from ..model.stacks import StackCapture
from ..model.unavailable import Unavailable
from .base import CollectOptions, StackOptions, TargetError

PROTOCOL_VERSION = 2
# After the channel closes, the request in flight gets this long to finish before the watcher removes
# the directory and ends the process itself (the client is gone: nobody waits for the answer).
HANGUP_GRACE_S = 3.0


def make_node_host() -> Any:
    """The node's host: the same composition as a local run (LocalHost with logs and GPUs)."""
    from .local import local_host  # not via select: select reaches ssh, whose client imports this module

    return local_host()


def smaps_unavailable(pid: int, exc: OSError, where: str = "") -> Unavailable:
    """Why /proc/PID/smaps could not be read, in the words a local read uses (agent and agentless alike)."""
    if isinstance(exc, PermissionError):
        return Unavailable(f"permission denied reading /proc/{pid}/smaps{where}",
                           "fix: ssh as the process's user or as root" if where else "run as the process's user or root")
    if isinstance(exc, (FileNotFoundError, ProcessLookupError)):
        return Unavailable(f"no such process {pid}{where}", "it has exited")
    return Unavailable(f"cannot read /proc/{pid}/smaps{where}: {exc.strerror or exc}", "")


def on_the_node(capture: StackCapture) -> StackCapture:
    """A capture's permission errors in the words of a remote node: the fix is on the SSH side (ssh as the
    process's user or as root), not `sudo` in the client's terminal — as agentless mode says it."""
    def node_error(error: Optional[Unavailable]) -> Optional[Unavailable]:
        if error is None or not error.reason.startswith("permission denied"):
            return error
        return Unavailable(f"{error.reason} on the node",
                           "ssh as the process's user or as root; check kernel.yama.ptrace_scope and, in a "
                           "container, CAP_SYS_PTRACE")
    return dataclasses.replace(capture, processes=tuple(
        dataclasses.replace(ps, error=node_error(ps.error)) for ps in capture.processes))


def mappings_on_node(pid: int, target_pids: Sequence[int]) -> dict[str, Any]:
    """The `m` view's data read on the node (`cat /proc/PID/smaps`, grouped by file): never the client's /proc."""
    from ..collect.smaps_files import mappings_by_file

    try:
        return {"mappings": to_data(list(mappings_by_file(int(pid), [int(p) for p in target_pids])))}
    except OSError as exc:
        return {"unavailable": to_data(smaps_unavailable(int(pid), exc, " on the node"))}


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
                    "pid": os.getpid(), "python": sys.executable,
                    "flags": {"isolated": sys.flags.isolated, "no_site": sys.flags.no_site}, "pyspy": shutil.which("py-spy") or "",
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
            return {"ok": True, "capture": to_data(on_the_node(capture))}
        if op == "mappings_by_file":
            return {"ok": True, **mappings_on_node(int(request["pid"]), request.get("targets", []))}
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

    def serve(self, stdin: Iterable[str], stdout: TextIO) -> None:
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


def watch_channel(stdin: IO[bytes], private_dir: str, grace_s: float = HANGUP_GRACE_S) -> queue.Queue:
    """Read request lines on a thread; at EOF (the channel closed: bye, or the client died or the network
    dropped) hand None to the server and, if the process is still there `grace_s` later, remove the
    private directory and exit: a long request (a py-spy capture) must not keep files on the node."""
    lines: queue.Queue = queue.Queue()

    def pump() -> None:
        try:
            for raw in stdin:
                lines.put(raw.decode("utf-8", "replace"))
        except (OSError, ValueError):
            pass
        lines.put(None)
        time.sleep(grace_s)
        shutil.rmtree(private_dir, ignore_errors=True)
        os._exit(0)

    threading.Thread(target=pump, name="channel-watcher", daemon=True).start()
    return lines


class _QueueLines:
    """The watcher's queue as an iterable of lines (what serve() reads), ending at its None."""

    def __init__(self, lines: queue.Queue) -> None:
        self._lines = lines

    def __iter__(self) -> Iterator[str]:
        return iter(self._lines.get, None)


def main(private_dir: str, stdin: Optional[IO[bytes]] = None) -> None:
    """Entry point the bootstrap calls with the zip on sys.path; the bootstrap removes `private_dir` after.

    The protocol gets its own copy of stdout; fd 1 and sys.stdout then point at stderr, so a stray print
    in a collector (or a child process writing to fd 1) cannot corrupt the JSON stream.
    """
    protocol_out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    lines = watch_channel(stdin if stdin is not None else sys.stdin.buffer, private_dir)
    AgentServer(private_dir).serve(_QueueLines(lines), protocol_out)

"""A node of a Slurm job reached through the scheduler instead of SSH: the same stdlib agent, started with
`srun --overlap --jobid JOBID -w NODE` (for clusters where SSH to compute nodes is not allowed).

Replaces `srun --overlap --jobid J -w NODE --pty bash` followed by the by-hand checks. The agent client
speaks to one byte stream; here that stream is the stdin/stdout of a local `srun` process (srun forwards
them to the task on the node), so `SrunChannel` offers the few calls of a paramiko Channel the client
makes. The agent removes its private directory when its stdin closes, which srun delivers when this side
closes the pipe or dies.
"""

from __future__ import annotations

import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Optional, cast

from ..model.codec import from_data, to_data
from ..model.mappings import FileMapping
from ..model.snapshot import Snapshot, SourceStatus, Target
from ..model.stacks import StackCapture
from ..model.unavailable import Unavailable
from .base import CollectOptions, StackOptions, TargetError
from .ssh_connect import Connection, SshError

if TYPE_CHECKING:
    from .ssh_agent_client import AgentSession

SRUN_START_TIMEOUT_S = 60.0


class SrunChannel:
    """The subset of paramiko.Channel the agent client uses, over a local srun process."""

    def __init__(self, prefix: Sequence[str]) -> None:
        self.prefix = list(prefix)
        self.proc: Optional[subprocess.Popen[bytes]] = None
        self.timeout: Optional[float] = None
        self._out: queue.Queue[bytes] = queue.Queue()
        self._err: queue.Queue[bytes] = queue.Queue()
        self._eof = threading.Event()
        self.closed = False

    def _pump(self, stream: IO[bytes], into: queue.Queue[bytes], eof: Optional[threading.Event]) -> None:
        while True:
            chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            if not chunk:
                break
            into.put(chunk)
        if eof is not None:
            eof.set()

    def exec_command(self, command: str) -> None:
        try:
            self.proc = subprocess.Popen([*self.prefix, "sh", "-c", command], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
        except OSError as exc:
            raise OSError(f"cannot run srun: {exc}") from None
        assert self.proc.stdout is not None and self.proc.stderr is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout, self._out, self._eof), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self._err, None), daemon=True).start()

    def settimeout(self, seconds: Optional[float]) -> None:
        self.timeout = seconds

    def sendall(self, data: bytes) -> None:
        if self.proc is None or self.proc.stdin is None:
            raise OSError("srun is not running")
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def shutdown_write(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()

    def recv(self, size: int) -> bytes:
        try:
            return self._out.get(timeout=self.timeout)
        except queue.Empty:
            if self._eof.is_set():
                return b""
            raise TimeoutError("no bytes from srun in time") from None

    def recv_ready(self) -> bool:
        return not self._out.empty()

    def recv_stderr_ready(self) -> bool:
        return not self._err.empty()

    def recv_stderr(self, size: int) -> bytes:
        try:
            return self._err.get_nowait()
        except queue.Empty:
            return b""

    def exit_status_ready(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None and self._eof.is_set()

    def recv_exit_status(self) -> int:
        return self.proc.wait() if self.proc is not None else -1

    def close(self) -> None:
        """Close stdin (the agent exits on EOF), then make sure srun is gone."""
        self.closed = True
        if self.proc is None:
            return
        try:
            if self.proc.stdin is not None and not self.proc.stdin.closed:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.terminate()  # our own srun process, not the target
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class _SrunTransport:
    def __init__(self, prefix: Sequence[str]) -> None:
        self.prefix = prefix

    def open_session(self, timeout: Optional[float] = None) -> SrunChannel:
        return SrunChannel(self.prefix)


@dataclass(frozen=True)
class _Endpoint:
    alias: str


class SrunConnection:
    """What the agent client needs of a connection: a way to open a channel, a name, liveness."""

    def __init__(self, node: str, job_id: str) -> None:
        self.endpoint = _Endpoint(node)
        self.transport = _SrunTransport(srun_prefix(job_id, node))

    def is_active(self) -> bool:
        return True

    def close(self) -> None:
        pass


def srun_prefix(job_id: str, node: str) -> list[str]:
    """Run one task on `node` inside the job's allocation, beside its steps (--overlap), stdin forwarded."""
    return ["srun", "--overlap", f"--jobid={job_id}", f"--nodelist={node}", "--nodes=1", "--ntasks=1",
            "--unbuffered", "--quiet", "--kill-on-bad-exit=0"]


class SrunHost:
    """A node of a Slurm job watched by the agent started through srun. No reconnect: a refresh that fails
    marks the node failing with the reason, and the next refresh starts a new agent."""

    mode = "srun agent"

    def __init__(self, job_id: str, node: str, request_timeout_s: float = 30.0) -> None:
        self.job_id = job_id
        self.name = node
        self.request_timeout_s = request_timeout_s
        self._session: Optional[AgentSession] = None
        self._lock = threading.RLock()
        self.bytes_sent = 0
        self.bytes_received = 0

    def _agent(self) -> AgentSession:
        from .ssh_agent_client import AgentSession

        if self._session is None:
            if shutil.which("srun") is None:
                raise SshError("srun is not installed here (hint: run triage on a login node of the cluster)")
            # SrunConnection offers what the client uses of an SSH Connection (a channel, a name, liveness)
            connection = cast(Connection, SrunConnection(self.name, self.job_id))
            self._session = AgentSession.start(connection, (), timeout_s=SRUN_START_TIMEOUT_S)
        return self._session

    def _request(self, op: str, timeout_s: float, **fields: object) -> dict[str, object]:
        with self._lock:
            agent = self._agent()
            try:
                return agent.request(op, timeout_s, **fields)
            except SshError:
                self._drop()
                raise
            finally:
                self.bytes_sent, self.bytes_received = agent.bytes_sent, agent.bytes_received

    def _drop(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()

    def resolve(self, specs: Sequence[str], port: Optional[int] = None) -> Target:
        reply = self._request("resolve", self.request_timeout_s, specs=list(specs), port=port)
        target: Target = from_data(Target, reply["target"])
        return target

    def collect(self, target: Target, options: CollectOptions) -> Snapshot:
        started = time.time()
        try:
            reply = self._request("collect", self.request_timeout_s, target=to_data(target), options=to_data(options))
        except (SshError, TargetError) as exc:
            return Snapshot(host=self.name, taken_at=started, interval_s=options.interval_s, target=target,
                            sources=(SourceStatus("ssh", "failing", (time.time() - started) * 1000,
                                                  f"srun agent: {exc}"),))
        snapshot: Snapshot = from_data(Snapshot, reply["snapshot"])
        return snapshot

    def capture_stacks(self, pids: Sequence[int], options: StackOptions) -> StackCapture:
        timeout = options.timeout_s * max(1, -(-len(pids) // max(options.concurrency, 1))) + self.request_timeout_s
        try:
            reply = self._request("capture_stacks", timeout, pids=list(pids), options=to_data(options))
        except (SshError, TargetError) as exc:
            return StackCapture(taken_at=time.time(), pids=tuple(pids), notes=(f"no capture: {exc}",))
        capture: StackCapture = from_data(StackCapture, reply["capture"])
        return capture

    def mappings_by_file(self, pid: int, target_pids: Sequence[int]) -> tuple[FileMapping, ...] | Unavailable:
        """The `m` view: the node's /proc/PID/smaps, read by the agent there (never this machine's)."""
        try:
            reply = self._request("mappings_by_file", self.request_timeout_s, pid=int(pid),
                                  targets=[int(p) for p in target_pids])
        except (SshError, TargetError) as exc:
            return Unavailable(f"mappings not read: srun agent: {exc}")
        if "unavailable" in reply:
            unavailable: Unavailable = from_data(Unavailable, reply["unavailable"])
            return unavailable
        return tuple(from_data(list[FileMapping], reply.get("mappings", [])))

    def wait_for_budgeted_reads(self, timeout_s: float = 10.0) -> bool:
        try:
            reply = self._request("wait_for_budgeted_reads", timeout_s + self.request_timeout_s, wait_s=timeout_s)
        except (SshError, TargetError):
            return False
        return bool(reply.get("done"))

    def run_argv(self, argv: Sequence[str], timeout_s: float = 15.0) -> tuple[int, str, str]:
        """One plain command on the node through srun (e.g. `scontrol listpids J` asks that node's slurmd)."""
        if shutil.which("srun") is None:
            return 127, "", "srun: command not found"
        try:
            done = subprocess.run([*srun_prefix(self.job_id, self.name), *argv], capture_output=True, text=True,
                                  errors="replace", timeout=timeout_s, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return 124, "", f"srun {argv[0]} on {self.name} did not answer within {timeout_s:.0f} s"
        return done.returncode, done.stdout, done.stderr

    def close(self) -> None:
        with self._lock:
            self._drop()

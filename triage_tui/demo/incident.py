"""Start and stop the built-in incident: `with DemoIncident() as demo: ... demo.info.launcher_pid`.

The launcher runs in its own session (so a Ctrl-C in the terminal reaches triage, which then stops
the demo in order) and dies with the thread that started it (PR_SET_PDEATHSIG): call `start()` from
the main thread, or from a thread that outlives the demo. `stop()` is idempotent and also runs at
interpreter exit; the command that hosts the demo turns SIGTERM and SIGHUP into a normal exit so that
it runs then too.
"""

from __future__ import annotations

import atexit
import os
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

STOP_GRACE_S = 10.0


class DemoError(RuntimeError):
    """The demo could not start; the message says why (with the log's last lines)."""


@dataclass(frozen=True)
class DemoInfo:
    launcher_pid: int
    worker_pids: tuple[int, ...]  # by rank
    log_path: str
    port: int  # announced in the log and the launcher's command line, never bound
    weights_path: str
    workdir: str
    odd_rank: int = 0  # the rank that never reaches the barrier
    odd_pid: int = 0


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def choose_free_port() -> int:
    """A port in 30000-30999 (where SGLang-style servers often sit) that nothing listens on now."""
    for _ in range(50):
        port = random.randint(30000, 30999)
        if _port_is_free(port):
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _package_root() -> str:
    return str(Path(__file__).resolve().parent.parent.parent)


class DemoIncident:
    """The demo's processes and files; everything is removed by `stop()`."""

    def __init__(
        self,
        workers: int = 8,
        weights_mb: int = 256,
        odd_rank: Optional[int] = None,
        startup_timeout_s: float = 180.0,
        base_dir: Optional[str] = None,
    ) -> None:
        if workers < 1:
            raise DemoError("the demo needs at least 1 worker")
        if weights_mb < 1:
            raise DemoError("the weights file must be at least 1 MiB")
        self.workers = workers
        self.weights_mb = weights_mb
        self.odd_rank = odd_rank if odd_rank is not None else min(3, workers - 1)
        self.startup_timeout_s = startup_timeout_s
        self.base_dir = base_dir
        self.info: Optional[DemoInfo] = None
        self._launcher: Optional[subprocess.Popen[bytes]] = None
        self._workdir: Optional[str] = None

    def __enter__(self) -> DemoIncident:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> DemoInfo:
        if self.info is not None:
            return self.info
        workdir = tempfile.mkdtemp(prefix="triage-demo-", dir=self.base_dir)
        self._workdir = workdir
        atexit.register(self.stop)
        log_path = os.path.join(workdir, "server.log")
        weights_path = os.path.join(workdir, "model-00001-of-00001.safetensors")
        port = choose_free_port()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_package_root(), env.get("PYTHONPATH", "")]))
        env["PYTHONUNBUFFERED"] = "1"
        ready_r, ready_w = os.pipe()
        argv = [
            sys.executable, "-m", "triage_tui.demo.launcher", "--model-path", weights_path,
            "--tp-size", str(self.workers), "--port", str(port), "--weights-mb", str(self.weights_mb),
            "--odd-rank", str(self.odd_rank), "--ready-fd", str(ready_w), "--parent-pid", str(os.getpid()),
            "--workdir", workdir,
        ]
        try:
            log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                self._launcher = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=log_fd, stderr=log_fd, pass_fds=(ready_w,),
                    start_new_session=True, env=env, cwd=workdir,
                )
            finally:
                os.close(log_fd)
                os.close(ready_w)
            line = self._read_ready(ready_r)
        except BaseException:
            self.stop()
            raise
        finally:
            os.close(ready_r)
        _, launcher_pid, pids = line.split()
        worker_pids = tuple(int(p) for p in pids.split(","))
        self.info = DemoInfo(
            launcher_pid=int(launcher_pid), worker_pids=worker_pids, log_path=log_path, port=port,
            weights_path=weights_path, workdir=workdir, odd_rank=self.odd_rank,
            odd_pid=worker_pids[self.odd_rank],
        )
        return self.info

    def _read_ready(self, ready_r: int) -> str:
        """Wait for the launcher's READY line: every worker has loaded and reached its wait."""
        deadline = time.monotonic() + self.startup_timeout_s
        buffer = b""
        while b"\n" not in buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DemoError(f"the demo did not become ready in {self.startup_timeout_s:.0f} s{self._log_tail()}")
            # poll, not select: select() cannot take an fd numbered 1024 or more, and a collector in this
            # process may hold thousands of /proc files open (collect/held_files.py)
            poller = select.poll()
            poller.register(ready_r, select.POLLIN)
            readable = poller.poll(min(left, 1.0) * 1000)
            if readable:
                data = os.read(ready_r, 4096)
                if not data:
                    raise DemoError(f"the demo launcher exited during start-up{self._log_tail()}")
                buffer += data
        line = buffer.split(b"\n", 1)[0].decode()
        if not line.startswith("READY "):
            raise DemoError(f"unexpected handshake from the demo launcher: {line!r}")
        return line

    def _log_tail(self) -> str:
        if not self._workdir:
            return ""
        try:
            text = Path(self._workdir, "server.log").read_text(errors="replace")
        except OSError:
            return ""
        last = [x for x in text.replace("\r", "\n").splitlines() if x.strip()][-3:]
        return (": " + " | ".join(last)) if last else ""

    def stop(self) -> None:
        """Stop the launcher (which kills and reaps its workers), then make sure of it; remove the files."""
        launcher, self._launcher = self._launcher, None
        if launcher is not None and launcher.poll() is None:
            try:
                launcher.send_signal(signal.SIGTERM)
                launcher.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
            if launcher.poll() is None:  # still alive: its process group is surely ours to kill
                try:
                    os.killpg(launcher.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                launcher.wait()
        if self._workdir:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        try:
            atexit.unregister(self.stop)
        except Exception:
            pass


def exit_on_hangup_and_term() -> None:
    """Turn SIGTERM and SIGHUP (the terminal closing) into SystemExit, so `with DemoIncident()` cleans up."""

    def _exit(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)
    signal.signal(signal.SIGHUP, _exit)

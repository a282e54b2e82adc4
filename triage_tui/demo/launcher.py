"""The demo launcher: announces a port it never binds, writes the shared weights, starts N renamed workers.

Its command line reads like the incident's (`... --tp-size 8 --port 30123`), so `triage report :30123`
finds it by the port its command line asks for. Its stdout and stderr are the log file (as with
`nohup ... > server.log`), which the workers inherit: rank 0's progress bar lands there too.

It dies with the process that started it (PR_SET_PDEATHSIG), and on SIGTERM / SIGINT / SIGHUP it kills
and reaps its workers and removes the demo's directory, so nothing outlives the demo.
"""

from __future__ import annotations

import argparse
import datetime
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from types import FrameType
from typing import Optional

from .linux_prctl import die_with_parent

WORKER_START_TIMEOUT_S = 120.0


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="demo launcher")
    p.add_argument("--model-path", required=True, help="the shared weights file")
    p.add_argument("--tp-size", type=int, required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--weights-mb", type=int, required=True)
    p.add_argument("--odd-rank", type=int, required=True)
    p.add_argument("--ready-fd", type=int, required=True)
    p.add_argument("--parent-pid", type=int, required=True)
    p.add_argument("--workdir", required=True)
    return p.parse_args(argv)


def log(message: str) -> None:
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
    print(f"[{stamp}] {message}", flush=True)


def write_weights(path: str, size_mb: int) -> None:
    """Create the file sparse, then write every page so all of it sits in the page cache."""
    size = size_mb * 1024 * 1024
    chunk = bytes(range(256)) * 4096  # 1 MiB, not zeros: no filesystem may keep it a hole
    with open(path, "wb") as f:
        f.truncate(size)
        for _ in range(size // len(chunk)):
            f.write(chunk)
        f.write(chunk[: size % len(chunk)])


class Launcher:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.workers: list[subprocess.Popen[bytes]] = []

    def shutdown(self, signum: int = 0, frame: Optional[FrameType] = None) -> None:
        for worker in self.workers:
            try:
                worker.kill()
            except OSError:
                pass
        for worker in self.workers:
            try:
                worker.wait(timeout=10)
            except (subprocess.TimeoutExpired, OSError):
                pass
        shutil.rmtree(self.args.workdir, ignore_errors=True)
        os._exit(0 if signum else 1)

    def start_workers(self, ready_w: int) -> None:
        a = self.args
        for rank in range(a.tp_size):
            argv = [
                f"demo::scheduler_TP{rank}", "-m", "triage_tui.demo.worker", "--rank", str(rank),
                "--tp-size", str(a.tp_size), "--weights", a.model_path, "--ready-fd", str(ready_w),
                "--odd-rank", str(a.odd_rank), "--launcher-pid", str(os.getpid()),
            ]
            # executable= runs Python while argv[0] is the name `ps` shows: no "python" in the cmdline.
            self.workers.append(
                subprocess.Popen(argv, executable=sys.executable, stdin=subprocess.DEVNULL, pass_fds=(ready_w,))
            )

    def wait_for_workers(self, ready_r: int) -> list[str]:
        """One line per worker once it has loaded and reached its wait; fails on timeout or a death."""
        deadline = time.monotonic() + WORKER_START_TIMEOUT_S
        buffer = b""
        while buffer.count(b"\n") < self.args.tp_size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError("workers did not report ready in time")
            readable, _, _ = select.select([ready_r], [], [], min(left, 1.0))
            if readable:
                data = os.read(ready_r, 4096)
                if not data:
                    raise RuntimeError("every worker closed its ready pipe before reporting")
                buffer += data
            dead = [w for w in self.workers if w.poll() is not None]
            if dead and buffer.count(b"\n") < self.args.tp_size:
                raise RuntimeError(f"worker PID {dead[0].pid} exited with {dead[0].returncode} while loading")
        return buffer.decode().split("\n")[: self.args.tp_size]

    def run(self) -> int:
        a = self.args
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self.shutdown)
        die_with_parent(signal.SIGTERM)  # triage killed hard: this handler still cleans up
        if os.getppid() != a.parent_pid:
            self.shutdown()
        log(
            f"server_args=ServerArgs(model_path='{a.model_path}', tp_size={a.tp_size}, host='127.0.0.1', "
            f"port={a.port}, mem_fraction_static=0.9)"
        )
        log("UserWarning: a deprecated option was used by an import (harmless, as in the incident)")
        write_weights(a.model_path, a.weights_mb)
        log(f"Launching {a.tp_size} scheduler processes; weights {a.weights_mb} MiB at {a.model_path}")
        log(f"Load weight begin. The server will listen on http://127.0.0.1:{a.port} once loaded")
        ready_r, ready_w = os.pipe()
        self.start_workers(ready_w)
        os.close(ready_w)
        try:
            ready = self.wait_for_workers(ready_r)
        except RuntimeError as exc:
            log(f"ERROR demo launcher: {exc}")
            self.shutdown()
        pids = ",".join(line.split()[1] for line in sorted(ready, key=lambda x: int(x.split()[0])))
        os.write(a.ready_fd, f"READY {os.getpid()} {pids}\n".encode())
        os.close(a.ready_fd)
        while True:  # like the real launcher: wait on the workers, which never finish
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                signal.pause()


def main(argv: list[str]) -> int:
    return Launcher(_parse(argv)).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

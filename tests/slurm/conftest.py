"""A real single-machine Slurm cluster from the distribution's packages (slurmctld, slurmd, munge), made
for the test in a temporary directory: its own munge key and socket, its own ports, the machine as its one
node. Every daemon is stopped and its directory removed afterwards; nothing outside it is touched.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

DAEMONS = ("/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd")
READY_TIMEOUT_S = 60.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    directory: Path
    env: dict[str, str]
    node: str

    def run(self, *argv: str, timeout: float = 30.0) -> subprocess.CompletedProcess:
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def sbatch(self, script: str) -> str:
        path = self.directory / f"job-{time.monotonic_ns()}.sh"
        path.write_text(script)
        path.chmod(0o755)
        done = self.run("sbatch", "--parsable", "-o", str(self.directory / "job-%j.out"), str(path))
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().split(";")[0]

    def wait_running(self, job_id: str) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            state = self.run("squeue", "-h", "-j", job_id, "-o", "%T").stdout.strip()
            if state == "RUNNING":
                return
            time.sleep(0.2)
        pytest.fail(f"job {job_id} did not start: {self.run('squeue').stdout}{self._logs()}")

    def _logs(self) -> str:
        out = []
        for name in ("slurmctld.log", "slurmd.log"):
            path = self.directory / name
            if path.exists():
                out.append(f"\n--- {name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-10:]))
        return "".join(out)


def _config(d: Path, node: str) -> str:
    return "\n".join([
        "ClusterName=triagetest",
        f"SlurmctldHost={node}(127.0.0.1)",
        "AuthType=auth/munge", f"AuthInfo=socket={d}/munge.socket", "CredType=cred/munge",
        "SlurmUser=root", "SlurmdUser=root",
        f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
        f"StateSaveLocation={d}/state", f"SlurmdSpoolDir={d}/spool",
        f"SlurmctldPidFile={d}/slurmctld.pid", f"SlurmdPidFile={d}/slurmd.pid",
        f"SlurmctldLogFile={d}/slurmctld.log", f"SlurmdLogFile={d}/slurmd.log",
        # no cgroups: the test must not create any outside its own (proctrack/linuxproc follows parentage)
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
        "SchedulerType=sched/builtin", "SelectType=select/cons_tres", "ReturnToService=2", "MpiDefault=none",
        f"NodeName={node} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} RealMemory=1000 State=UNKNOWN",
        f"PartitionName=test Nodes={node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES",
        "",
    ])


def _start(argv: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} did not start: {done.stderr.strip()}")


def _stop(pidfile: Path) -> None:
    try:
        pid = int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    for sig in (15, 9):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    missing = [d for d in DAEMONS if not os.path.exists(d)]
    if missing:
        pytest.fail(f"Slurm is missing ({', '.join(missing)}): scripts/test.sh installs slurm-wlm and munge")
    d = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (d / sub).mkdir()
    key = d / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    node = socket.gethostname().split(".")[0]
    (d / "slurm.conf").write_text(_config(d, node))
    env = dict(os.environ, SLURM_CONF=str(d / "slurm.conf"))
    pidfiles = [d / "slurmd.pid", d / "slurmctld.pid", d / "munged.pid"]
    try:
        _start(["/usr/sbin/munged", f"--key-file={key}", f"--socket={d}/munge.socket", f"--pid-file={d}/munged.pid",
                f"--log-file={d}/munged.log", f"--seed-file={d}/munged.seed", "--force"], env)
        _start(["/usr/sbin/slurmctld", "-f", str(d / "slurm.conf")], env)
        _start(["/usr/sbin/slurmd", "-f", str(d / "slurm.conf")], env)
        cluster = Cluster(d, env, node)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while "idle" not in cluster.run("sinfo", "-h", "-o", "%T").stdout:
            if time.monotonic() > deadline:
                pytest.fail(f"the test's Slurm node never became idle{cluster._logs()}")
            time.sleep(0.2)
        yield cluster
    finally:
        subprocess.run(["scancel", "--full", "-u", "root"], env=env, capture_output=True, timeout=30,
                       stdin=subprocess.DEVNULL, check=False) if shutil.which("scancel") else None
        for pidfile in pidfiles:
            _stop(pidfile)

"""A real OpenSSH sshd on loopback for the SSH tests: throwaway host and user keys, a tmp known_hosts/config.

sshd runs in the foreground (`-D -e`); readiness is its own "Server listening on" line on stderr.
Every sshd and every process a test starts is killed and reaped in a finally.
"""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import psutil
import pytest

from triage_tui.host.ssh_connect import SshOptions

SSHD = "/usr/sbin/sshd"
READY_TIMEOUT_S = 30.0
WORKERS = 3  # ranks of the demo incident the demo tests watch


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _keygen(path: Path, passphrase: str = "") -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-f", str(path)], check=True,
                   stdin=subprocess.DEVNULL, timeout=30)


@dataclass
class Sshd:
    """One running sshd: its port, host key, and the process (the listener)."""

    port: int
    host_key: Path
    directory: Path
    proc: Optional[subprocess.Popen] = None
    log: list[str] = field(default_factory=list)
    log_level: str = "VERBOSE"  # DEBUG1 also logs direct-tcpip requests (the ProxyJump test reads them)
    command_prefix: tuple[str, ...] = ()  # e.g. unshare … : a "node" with its own PID namespace
    extra: str = ""  # more sshd_config lines (e.g. SetEnv TMPDIR=... so a test finds only its own files)

    def start(self) -> None:
        config = self.directory / f"sshd_config_{self.port}"
        config.write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {self.host_key}\n"
            f"PidFile {self.directory}/sshd_{self.port}.pid\nAuthorizedKeysFile {self.directory}/authorized_keys\n"
            "PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            f"StrictModes no\nUsePAM no\nAllowTcpForwarding yes\nLogLevel {self.log_level}\n{self.extra}"
        )
        self.proc = subprocess.Popen([*self.command_prefix, SSHD, "-D", "-e", "-f", str(config)], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        lines: queue.Queue[Optional[str]] = queue.Queue()

        def pump() -> None:  # keeps reading so sshd never blocks on a full stderr pipe
            assert self.proc is not None and self.proc.stderr is not None
            for line in self.proc.stderr:
                self.log.append(line.rstrip())
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        while True:
            try:
                line = lines.get(timeout=READY_TIMEOUT_S)
            except queue.Empty:
                raise RuntimeError(f"sshd did not report listening: {self.log[-5:]}") from None
            if line is None:
                raise RuntimeError(f"sshd exited: {self.log[-5:]}")
            if "Server listening on" in line:
                return

    def session_children(self) -> list[psutil.Process]:
        """The per-connection sshd processes (children of the listener)."""
        assert self.proc is not None
        try:
            return psutil.Process(self.proc.pid).children()
        except psutil.NoSuchProcess:
            return []

    def stop(self) -> None:
        if self.proc is None:
            return
        for child in self.session_children():
            _kill(child)
        self.proc.kill()
        self.proc.wait(timeout=30)
        self.proc = None


def _kill(proc: psutil.Process) -> None:
    try:
        for p in [*proc.children(recursive=True), proc]:
            p.kill()
    except psutil.NoSuchProcess:
        pass


@dataclass
class SshEnv:
    """Keys, known_hosts and an ssh config for tests, plus the sshds they start."""

    directory: Path
    user_key: Path
    known_hosts: Path
    config: Path
    servers: list[Sshd] = field(default_factory=list)

    def sshd(self, host_key: Optional[Path] = None, port: Optional[int] = None, log_level: str = "VERBOSE",
             command_prefix: tuple[str, ...] = (), extra: str = "") -> Sshd:
        key = host_key or self.directory / f"host_key_{len(self.servers)}"
        if not key.exists():
            _keygen(key)
        server = Sshd(port or _free_port(), key, self.directory, log_level=log_level, command_prefix=command_prefix,
                      extra=extra)
        server.start()
        self.servers.append(server)
        return server

    def trust(self, server: Sshd) -> None:
        pub = Path(str(server.host_key) + ".pub").read_text().split()
        with open(self.known_hosts, "a") as f:
            f.write(f"[127.0.0.1]:{server.port} {pub[0]} {pub[1]}\n")

    def write_config(self, text: str) -> None:
        self.config.write_text(text)


@pytest.fixture
def ssh_env(tmp_path: Path) -> Iterator[SshEnv]:
    if not os.path.exists(SSHD):
        pytest.fail("sshd is missing: scripts/test.sh installs openssh-server")
    os.makedirs("/run/sshd", exist_ok=True)  # privilege separation directory sshd insists on
    user_key = tmp_path / "id_user"
    _keygen(user_key)
    (tmp_path / "authorized_keys").write_text(Path(str(user_key) + ".pub").read_text())
    env = SshEnv(tmp_path, user_key, tmp_path / "known_hosts", tmp_path / "ssh_config")
    env.known_hosts.write_text("")
    env.config.write_text("")
    try:
        yield env
    finally:
        for server in env.servers:
            server.stop()


@pytest.fixture
def sleeper_tree() -> Iterator[subprocess.Popen]:
    """A real python parent with two children, all sleeping; ready when the parent prints READY."""
    code = (
        f"# sleeper-{uuid.uuid4().hex[:12]} (a name: test matches this tree only, not another run's)\n"
        "import subprocess, sys, time\n"
        "kids = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']) for _ in range(2)]\n"
        "print('READY', flush=True)\n"
        "time.sleep(600)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "READY"
        yield proc
    finally:
        _kill(psutil.Process(proc.pid))
        proc.wait(timeout=30)


@dataclass
class Node:
    """One trusted sshd reachable as the alias `node` in env.config."""

    env: SshEnv
    server: Sshd

    def options(self, **overrides: object) -> SshOptions:
        fields: dict = dict(destination="node", config_file=str(self.env.config),
                            known_hosts=str(self.env.known_hosts), interactive=False, timeout_s=15.0)
        fields.update(overrides)
        return SshOptions(**fields)


def host_block(alias: str, server: Sshd, key: Path, extra: str = "") -> str:
    return f"Host {alias}\n  HostName 127.0.0.1\n  Port {server.port}\n  User root\n  IdentityFile {key}\n{extra}"


@pytest.fixture
def node(ssh_env: SshEnv) -> Node:
    server = ssh_env.sshd()
    ssh_env.trust(server)
    ssh_env.write_config(host_block("node", server, ssh_env.user_key))
    return Node(ssh_env, server)


def agent_processes(private_dir: str) -> list[psutil.Process]:
    """Processes still running from an agent's private directory (there must be none after close)."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        if private_dir in " ".join(p.info["cmdline"] or ()):
            found.append(p)
    return found



@pytest.fixture
def jumped(ssh_env: SshEnv) -> Node:
    """`node` reached through `bastion` (ProxyJump); known_hosts named in the config, as a user would."""
    bastion, target = ssh_env.sshd(), ssh_env.sshd()
    ssh_env.trust(bastion)
    ssh_env.trust(target)
    known = f"  UserKnownHostsFile {ssh_env.known_hosts}\n"
    ssh_env.write_config(host_block("bastion", bastion, ssh_env.user_key, known)
                         + host_block("node", target, ssh_env.user_key, known + "  ProxyJump bastion\n"))
    return Node(ssh_env, target)

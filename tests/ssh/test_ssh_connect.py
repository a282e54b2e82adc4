"""Connecting like `ssh` does: config aliases, ProxyJump, known_hosts policy, keys that need a passphrase."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import paramiko
import pytest

from triage_tui.host.base import TargetError
from triage_tui.host.select import host_from_args
from triage_tui.host.ssh_connect import SshError, connect, fingerprint, resolve_endpoint, split_destination

from .conftest import Node, SshEnv, _keygen, host_block


def test_destination_forms() -> None:
    assert split_destination("node7") == (None, "node7", None)
    assert split_destination("alice@node7:2222") == ("alice", "node7", 2222)
    assert split_destination("[::1]:2200") == (None, "::1", 2200)
    for bad in ("", "a b", "node:99999", "-oProxyCommand=x", "u@"):
        with pytest.raises(SshError):
            split_destination(bad)


def test_config_alias_user_port_identity_and_jumps(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    cfg.write_text("Host n7\n  HostName 10.0.0.7\n  User bob\n  Port 2201\n  IdentityFile ~/k7\n  ProxyJump bastion,inner\n")
    endpoint = resolve_endpoint("n7", paramiko.SSHConfig.from_path(str(cfg)))
    assert (endpoint.hostname, endpoint.user, endpoint.port, endpoint.jumps) == ("10.0.0.7", "bob", 2201, ("bastion", "inner"))
    assert endpoint.identity_files[0].endswith("/k7") and not endpoint.identity_files[0].startswith("~")
    # the command line wins over the config: user and port in the destination, -i over IdentityFile
    override = resolve_endpoint("carol@n7:22", paramiko.SSHConfig.from_path(str(cfg)), identity="/tmp/other")
    assert (override.user, override.port, override.identity_files) == ("carol", 22, ("/tmp/other",))


def test_fingerprint_matches_ssh_keygen(node: Node) -> None:
    pub = Path(str(node.server.host_key) + ".pub")
    expected = subprocess.run(["ssh-keygen", "-lf", str(pub)], capture_output=True, text=True, check=True).stdout.split()[1]
    key = paramiko.PKey.from_path(str(node.server.host_key))
    assert fingerprint(key) == expected


def test_unknown_host_refused_with_fingerprint_then_accept_new_records_it(node: Node) -> None:
    node.env.known_hosts.write_text("")
    expected = subprocess.run(["ssh-keygen", "-lf", str(node.server.host_key) + ".pub"], capture_output=True,
                              text=True, check=True).stdout.split()[1]
    with pytest.raises(SshError) as refused:
        connect(node.options())
    assert expected in str(refused.value) and "--accept-new-host-key" in str(refused.value)
    assert node.env.known_hosts.read_text() == ""

    connect(node.options(accept_new_host_key=True)).close()
    recorded = node.env.known_hosts.read_text()
    assert f"[127.0.0.1]:{node.server.port}" in recorded
    assert Path(str(node.server.host_key) + ".pub").read_text().split()[1] in recorded
    connect(node.options()).close()  # known now: no flag needed


def test_changed_host_key_refused_even_with_accept_new(node: Node) -> None:
    impostor = node.env.directory / "impostor"
    _keygen(impostor)
    pub = Path(str(impostor) + ".pub").read_text().split()
    node.env.known_hosts.write_text(f"[127.0.0.1]:{node.server.port} {pub[0]} {pub[1]}\n")
    before = node.env.known_hosts.read_text()
    with pytest.raises(SshError) as refused:
        connect(node.options(accept_new_host_key=True))
    assert "HAS CHANGED" in str(refused.value) and "ssh-keygen -R" in str(refused.value)
    assert node.env.known_hosts.read_text() == before


def test_proxyjump_two_hops_goes_through_both_jump_hosts(ssh_env: SshEnv) -> None:
    jump1 = ssh_env.sshd(log_level="DEBUG1")
    jump2 = ssh_env.sshd(log_level="DEBUG1")
    target = ssh_env.sshd()
    for s in (jump1, jump2, target):
        ssh_env.trust(s)
    key = ssh_env.user_key
    ssh_env.write_config(host_block("j1", jump1, key) + host_block("j2", jump2, key)
                         + host_block("node", target, key, "  ProxyJump j1,j2\n"))
    from .conftest import Node

    conn = connect(Node(ssh_env, target).options())
    try:
        assert len(conn.jump_clients) == 2
        _, out, _ = conn.client.exec_command("echo through", timeout=15)
        assert out.read().strip() == b"through"
    finally:
        conn.close()
    assert any(f"target 127.0.0.1 port {jump2.port}" in line for line in jump1.log)
    assert any(f"target 127.0.0.1 port {target.port}" in line for line in jump2.log)


def test_passphrase_key_fails_fast_without_a_terminal(node: Node) -> None:
    """A non-interactive run (stdin not a TTY) with an encrypted key gets one error line, never a prompt."""
    locked = node.env.directory / "locked"
    _keygen(locked, passphrase="sekrit")
    # the locked key is the only one (a -i key would be tried before the config's, as ssh does, and
    # the config's good key would then log in)
    node.env.write_config(host_block("node", node.server, locked))
    code = (
        "import argparse, sys\n"
        "from triage_tui.host.select import host_from_args\n"
        "from triage_tui.host.base import TargetError\n"
        f"args = argparse.Namespace(ssh='node', identity=None, ssh_config={str(node.env.config)!r},\n"
        f"    known_hosts={str(node.env.known_hosts)!r}, accept_new_host_key=False, agentless=False)\n"
        "try:\n"
        "    host_from_args(args).resolve(['1'])\n"
        "except TargetError as exc:\n"
        "    print('ERROR', exc); sys.exit(2)\n"
    )
    # bounded: if anything prompted, stdin is /dev/null (EOF) and the timeout ends the test, not the suite
    no_agent = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}  # an agent could hold the key unlocked
    done = subprocess.run([sys.executable, "-c", code], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60, env=no_agent)
    assert done.returncode == 2, done.stderr
    assert "needs a passphrase" in done.stdout and "ssh-agent" in done.stdout
    assert "Passphrase" not in done.stderr


def test_host_from_args_rejects_bad_destination_and_missing_config(tmp_path: Path) -> None:
    base = dict(identity=None, ssh_config=None, accept_new_host_key=False, agentless=False)
    with pytest.raises(TargetError):
        host_from_args(argparse.Namespace(ssh="bad host", **base))
    with pytest.raises(TargetError, match="not found"):
        host_from_args(argparse.Namespace(ssh="node", **{**base, "ssh_config": str(tmp_path / "missing")}))


def test_passphrase_key_held_by_ssh_agent_is_used_without_a_prompt(node: Node, monkeypatch: pytest.MonkeyPatch) -> None:
    """IdentityFile is encrypted, but ssh-agent holds it unlocked: the connection goes through the agent."""
    locked = node.env.directory / "locked_agent"
    _keygen(locked, passphrase="sekrit")
    (node.env.directory / "authorized_keys").write_text(Path(str(locked) + ".pub").read_text())
    node.env.write_config(host_block("node", node.server, locked))
    sock = node.env.directory / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.PIPE, text=True,
                             stdin=subprocess.DEVNULL)
    try:
        assert agent.stdout is not None and "SSH_AUTH_SOCK" in agent.stdout.readline()  # ready: it printed its socket
        askpass = node.env.directory / "askpass"
        askpass.write_text("#!/bin/sh\necho sekrit\n")
        askpass.chmod(0o700)
        env = {**os.environ, "SSH_AUTH_SOCK": str(sock), "SSH_ASKPASS": str(askpass), "SSH_ASKPASS_REQUIRE": "force"}
        subprocess.run(["ssh-add", str(locked)], env=env, check=True, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
        conn = connect(node.options())
        try:
            _, out, _ = conn.client.exec_command("echo via-agent", timeout=15)
            assert out.read().strip() == b"via-agent"
        finally:
            conn.close()
    finally:
        agent.kill()
        agent.wait(timeout=30)


def test_plain_user_host_port_with_identity_and_no_config(node: Node) -> None:
    empty = node.env.directory / "empty_config"
    empty.write_text("")
    conn = connect(node.options(destination=f"root@127.0.0.1:{node.server.port}", identity=str(node.env.user_key),
                                config_file=str(empty)))
    try:
        assert conn.endpoint.user == "root" and conn.endpoint.port == node.server.port
    finally:
        conn.close()


def test_a_server_that_never_speaks_ssh_times_out(node: Node) -> None:
    """A port that accepts TCP but never sends a banner (a hung sshd, a wrong service): bounded, one error."""
    import socket

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)  # never accepted, never answered: the kernel completes the handshake and nothing follows
    try:
        with pytest.raises(SshError, match="cannot connect"):
            connect(node.options(destination=f"root@127.0.0.1:{silent.getsockname()[1]}", timeout_s=1.0))
    finally:
        silent.close()

"""ssh_config as OpenSSH reads it (#16): every config here is first checked with the real `ssh -F`, then
triage must connect with it the same way, and a changed host key must be refused on every path."""

from __future__ import annotations

import argparse
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from triage_tui.host import ssh_config
from triage_tui.host.select import host_from_args
from triage_tui.host.ssh_connect import SshError, SshOptions, connect

from .conftest import Sshd, SshEnv, _keygen

ROOT = Path(__file__).resolve().parents[2]


def _block(alias: str, server: Sshd, *lines: str) -> str:
    return f"Host {alias}\n  HostName 127.0.0.1\n  Port {server.port}\n  User root\n" + "".join(f"  {x}\n" for x in lines)


def _ssh_works(config: Path, alias: str = "node") -> bool:
    """The control: what OpenSSH itself does with this config (batch mode: never a prompt)."""
    done = subprocess.run(["ssh", "-F", str(config), "-o", "BatchMode=yes", alias, "echo", "ok"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    return done.returncode == 0 and done.stdout.strip() == "ok"


def _echo(options: SshOptions) -> str:
    conn = connect(options)
    try:
        _, out, _ = conn.client.exec_command("echo through", timeout=15)
        return out.read().decode().strip()
    finally:
        conn.close()


def _options(env: SshEnv, **kw: object) -> SshOptions:
    fields: dict = dict(destination="node", config_file=str(env.config), interactive=False, timeout_s=15.0)
    fields.update(kw)
    return SshOptions(**fields)


def _impostor_line(env: SshEnv, server: Sshd) -> str:
    impostor = env.directory / f"impostor_{server.port}"
    if not impostor.exists():
        _keygen(impostor)
    kind, blob = Path(str(impostor) + ".pub").read_text().split()[:2]
    return f"[127.0.0.1]:{server.port} {kind} {blob}\n"


def _trusted_line(server: Sshd) -> str:
    kind, blob = Path(str(server.host_key) + ".pub").read_text().split()[:2]
    return f"[127.0.0.1]:{server.port} {kind} {blob}\n"


def test_include_two_identity_files_wrong_first_and_global_known_hosts(ssh_env: SshEnv) -> None:
    server = ssh_env.sshd()
    wrong = ssh_env.directory / "wrong_key"
    _keygen(wrong)  # a valid key the server does not accept: tried first, refused, then the right one
    user_known = ssh_env.directory / "user_known_empty"
    user_known.write_text("")
    global_known = ssh_env.directory / "global_known"
    global_known.write_text(_trusted_line(server))
    included = ssh_env.directory / "included.conf"
    included.write_text(_block("node", server, f"IdentityFile {wrong}", f"IdentityFile {ssh_env.user_key}",
                               f"UserKnownHostsFile {user_known}", f"GlobalKnownHostsFile {global_known}",
                               "StrictHostKeyChecking yes"))
    ssh_env.write_config(f"Include {included}\n")
    assert _ssh_works(ssh_env.config)
    conn = connect(_options(ssh_env))
    try:
        assert conn.endpoint.identity_files[:2] == (str(wrong), str(ssh_env.user_key))
        assert "ssh -G" in conn.notes[0]
    finally:
        conn.close()
    assert user_known.read_text() == ""  # the global file vouched for the host; nothing was written

    global_known.write_text(_impostor_line(ssh_env, server))  # the node "changed" its key
    assert not _ssh_works(ssh_env.config)
    with pytest.raises(SshError, match="HAS CHANGED"):
        connect(_options(ssh_env, accept_new_host_key=True))
    assert user_known.read_text() == ""


def test_proxycommand_ssh_w_through_a_jump_host(ssh_env: SshEnv) -> None:
    jump = ssh_env.sshd(log_level="DEBUG1")
    target = ssh_env.sshd()
    known = ssh_env.directory / "known_pc"
    known.write_text(_trusted_line(jump) + _trusted_line(target))
    common = (f"IdentityFile {ssh_env.user_key}", f"UserKnownHostsFile {known}", "StrictHostKeyChecking yes")
    ssh_env.write_config(_block("jump", jump, *common)
                         + _block("node", target, *common, f"ProxyCommand ssh -F {ssh_env.config} -W %h:%p jump"))
    assert _ssh_works(ssh_env.config)
    assert _echo(_options(ssh_env)) == "through"
    assert any(f"target 127.0.0.1 port {target.port}" in line for line in jump.log)  # it went through the jump

    known.write_text(_trusted_line(jump) + _impostor_line(ssh_env, target))
    assert not _ssh_works(ssh_env.config)
    with pytest.raises(SshError, match="HAS CHANGED"):
        connect(_options(ssh_env, accept_new_host_key=True))


def test_proxyjump_changed_target_key_is_refused_and_a_changed_type_too(ssh_env: SshEnv) -> None:
    jump = ssh_env.sshd()
    target = ssh_env.sshd()
    known = ssh_env.directory / "known_pj"
    known.write_text(_trusted_line(jump) + _trusted_line(target))
    common = (f"IdentityFile {ssh_env.user_key}", f"UserKnownHostsFile {known}", "StrictHostKeyChecking accept-new")
    ssh_env.write_config(_block("jump", jump, *common) + _block("node", target, *common, "ProxyJump jump"))
    assert _ssh_works(ssh_env.config)
    assert _echo(_options(ssh_env)) == "through"

    known.write_text(_trusted_line(jump) + _impostor_line(ssh_env, target))
    with pytest.raises(SshError, match="HAS CHANGED"):
        connect(_options(ssh_env))
    # known with a key of another type: refused as well (accept-new must not add a second key)
    rsa = ssh_env.directory / "impostor_rsa"
    subprocess.run(["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", str(rsa)], check=True, timeout=60)
    kind, blob = Path(str(rsa) + ".pub").read_text().split()[:2]
    known.write_text(_trusted_line(jump) + f"[127.0.0.1]:{target.port} {kind} {blob}\n")
    before = known.read_text()
    with pytest.raises(SshError, match="HAS CHANGED"):
        connect(_options(ssh_env))
    assert known.read_text() == before


def test_dev_null_config_is_accepted(ssh_env: SshEnv) -> None:
    server = ssh_env.sshd()
    ssh_env.trust(server)
    args = argparse.Namespace(ssh=f"root@127.0.0.1:{server.port}", identity=str(ssh_env.user_key),
                              ssh_config="/dev/null", known_hosts=str(ssh_env.known_hosts), accept_new_host_key=False,
                              agentless=True)
    host = host_from_args(args)
    try:
        target = host.resolve([str(os.getpid())])
        assert [r.pid for r in target.roots] == [os.getpid()]
    finally:
        host.close()


def test_without_an_ssh_client_paramiko_reads_the_config_and_names_what_it_cannot(
        ssh_env: SshEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    server = ssh_env.sshd()
    ssh_env.trust(server)
    ssh_env.write_config(f"Include {ssh_env.directory}/nothing.conf\n"
                         + _block("node", server, f"IdentityFile {ssh_env.user_key}"))
    monkeypatch.setattr(ssh_config, "find_ssh", lambda: None)
    conn = connect(_options(ssh_env, known_hosts=str(ssh_env.known_hosts)))
    try:
        assert conn.endpoint.resolved_by == "paramiko" and "include" in " ".join(conn.notes)
    finally:
        conn.close()
    ssh_env.known_hosts.write_text(_impostor_line(ssh_env, server))
    with pytest.raises(SshError, match="HAS CHANGED"):
        connect(_options(ssh_env, known_hosts=str(ssh_env.known_hosts), accept_new_host_key=True))


def test_encrypted_key_passphrase_typed_at_the_prompt_connects(ssh_env: SshEnv) -> None:
    server = ssh_env.sshd()
    ssh_env.trust(server)
    locked = ssh_env.directory / "locked_key"
    _keygen(locked, passphrase="open sesame")
    (ssh_env.directory / "authorized_keys").write_text(Path(str(locked) + ".pub").read_text())
    ssh_env.write_config(_block("node", server, f"IdentityFile {locked}", f"UserKnownHostsFile {ssh_env.known_hosts}"))
    code = (
        "import argparse\n"
        "from triage_tui.host.select import host_from_args\n"
        f"args = argparse.Namespace(ssh='node', identity=None, ssh_config={str(ssh_env.config)!r}, known_hosts=None,\n"
        "    accept_new_host_key=False, agentless=True)\n"
        "host = host_from_args(args)\n"
        "print('ROOTS', [r.pid for r in host.resolve(['1']).roots], flush=True)\n"
        "host.close()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    env["PYTHONPATH"] = os.pathsep.join([*filter(None, [os.environ.get("PYTHONPATH")]), str(ROOT)])
    pid, master = pty.fork()
    if pid == 0:  # the child: a terminal of its own, as a user at a prompt has
        os.execve(sys.executable, [sys.executable, "-c", code], env)
    seen = b""
    typed = False
    deadline = time.monotonic() + 120  # a bound on a hang, not a speed assertion
    try:
        while b"ROOTS" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            if not typed and b"passphrase" in seen.lower():
                os.write(master, b"open sesame\n")
                typed = True
        while b"\n" not in seen.split(b"ROOTS", 1)[-1] and time.monotonic() < deadline:
            if select.select([master], [], [], 1.0)[0]:
                try:
                    seen += os.read(master, 4096)
                except OSError:
                    break
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(master)
    assert typed, seen.decode(errors="replace")
    assert b"ROOTS [1]" in seen, seen.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0

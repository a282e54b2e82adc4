"""#19.1 over a real sshd: root watching another user's process never runs that user's code.

The unprivileged user (created here with useradd) plants a fake `python3` (a small C program: it records
the euid it ran with, then behaves like python3 with PYTHONPATH pointing at the user's modules), a fake
`py-spy` of the same kind, and fake `psutil` / `sitecustomize` modules that record their euid when
imported. The user's fake python3 is the target's own interpreter (/proc/PID/exe) AND first on root's
PATH in the SSH session. Agent mode must refuse both fakes (say so) and run only root's python3.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from triage_tui.host import ssh_agent_client
from triage_tui.host.base import CollectOptions, StackOptions
from triage_tui.host.ssh import SshHost

from .conftest import Node, SshEnv, host_block

_FAKE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--target") == 0) { for (;;) pause(); }
    char path[4096];
    snprintf(path, sizeof path, "%s/ran-%s-euid-%d", DIR, NAME, (int)geteuid());
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
    setenv("PYTHONPATH", DIR "/mods", 1);
    execv(REAL, argv);
    return 127;
}
"""
_MODULE = "import os\nopen(os.path.join({d!r}, 'ran-module-{n}-euid-%d' % os.geteuid()), 'w').close()\n"


@pytest.fixture
def other_user() -> Iterator[str]:
    if os.geteuid() != 0:
        pytest.fail("the privilege test runs as root (CI does): it creates a user")
    name = "trg" + uuid.uuid4().hex[:8]
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True, timeout=60)
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], check=False, timeout=60)


def _build_fake(planted: Path, name: str, real: str) -> Path:
    source = planted / f"{name}.c"
    source.write_text(_FAKE)
    out = planted / "bin" / name
    subprocess.run(["gcc", "-O1", f'-DDIR="{planted}"', f'-DNAME="{name}"', f'-DREAL="{real}"', "-o", str(out),
                    str(source)], check=True, timeout=120)
    return out


def test_root_never_runs_the_watched_users_interpreter_py_spy_or_modules(
        ssh_env: SshEnv, other_user: str, sleeper_tree: subprocess.Popen, monkeypatch: pytest.MonkeyPatch) -> None:
    account = pwd.getpwnam(other_user)
    planted = Path(f"/tmp/triage-planted-{uuid.uuid4().hex[:8]}")
    (planted / "bin").mkdir(parents=True)
    (planted / "mods").mkdir()
    target = None
    try:
        real_python = os.path.realpath(shutil.which("python3") or "/usr/bin/python3")
        fake_python = _build_fake(planted, "python3", real_python)
        _build_fake(planted, "py-spy", "/bin/true")
        for module in ("psutil", "sitecustomize"):
            (planted / "mods" / f"{module}.py").write_text(_MODULE.format(d=str(planted), n=module))
        for path in [planted, *planted.rglob("*")]:
            os.chown(path, account.pw_uid, account.pw_gid)  # everything planted belongs to the other user
        planted.chmod(0o777)  # the user lets anyone write markers (root does, if it runs their code)
        target = subprocess.Popen([str(fake_python), "--target"], user=account.pw_uid, group=account.pw_gid,
                                  cwd=str(planted), stdin=subprocess.DEVNULL)
        # the planted bin is first on root's PATH where the probe looks (as if root's profile put it there)
        original = ssh_agent_client.probe_script
        monkeypatch.setattr(ssh_agent_client, "probe_script", lambda: f"PATH={planted}/bin:$PATH; " + original())
        server = ssh_env.sshd()
        ssh_env.trust(server)
        ssh_env.write_config(host_block("node", server, ssh_env.user_key))
        node = Node(ssh_env, server)
        assert psutil.Process(target.pid).exe() == str(fake_python)

        host = SshHost(node.options())
        try:
            resolved = host.resolve([str(target.pid), str(sleeper_tree.pid)])
            snapshot = host.collect(resolved, CollectOptions())
            assert host.mode == "agent", host.mode_notes
            assert {target.pid, sleeper_tree.pid} <= {p.pid for p in snapshot.processes}
            kids = [c.pid for c in psutil.Process(sleeper_tree.pid).children()]
            capture = host.capture_stacks([target.pid, *kids], StackOptions(timeout_s=20))
            assert [ps.error for ps in capture.processes if ps.pid in kids] == [None, None]  # our py-spy ran
            hello = host._agent.hello  # type: ignore[union-attr]
            assert not hello["python"].startswith(str(planted)) and not hello["pyspy"].startswith(str(planted))
            notes = " ".join(host.mode_notes)
            assert f"{planted}/bin/python3" in notes and f"{planted}/bin/py-spy" in notes  # refused, and said so
        finally:
            host.close()
        ran = sorted(p.name for p in planted.iterdir() if p.name.startswith("ran-"))
        assert ran == [], f"the watched user's code ran: {ran}"
    finally:
        if target is not None:
            target.kill()
            target.wait(timeout=30)
        shutil.rmtree(planted, ignore_errors=True)


@pytest.fixture
def login_user() -> Iterator[str]:
    """An unprivileged account that can log in over the test sshd (its AuthorizedKeysFile is shared)."""
    if os.geteuid() != 0:
        pytest.fail("the privilege test runs as root (CI does): it creates a user")
    name = "trs" + uuid.uuid4().hex[:8]
    # "*": no password, yet not locked (sshd without PAM refuses a locked "!" account even with a key)
    subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", "-p", "*", name], check=True, timeout=60)
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], check=False, timeout=60)


@pytest.mark.parametrize("agentless", [False, True], ids=["agent", "agentless"])
def test_a_stack_capture_refused_by_ptrace_says_so_in_both_modes(
        ssh_env: SshEnv, login_user: str, sleeper_tree: subprocess.Popen, agentless: bool) -> None:
    """#16: an SSH user who may not ptrace root's processes is told why and what to do, in agent mode as in
    agentless mode — never a capture with no error and no threads ("waits on: unknown")."""
    # sshd reads a user's authorized keys as that user: the shared file lies in a root-only directory
    keys = Path(f"/tmp/triage-keys-{uuid.uuid4().hex[:8]}")
    keys.mkdir(mode=0o755)
    shutil.copy(ssh_env.directory / "authorized_keys", keys / "authorized_keys")
    (keys / "authorized_keys").chmod(0o644)
    server = ssh_env.sshd(extra=f"Match User {login_user}\n  AuthorizedKeysFile {keys}/authorized_keys\n")
    ssh_env.trust(server)
    ssh_env.write_config(host_block("node", server, ssh_env.user_key).replace("User root", f"User {login_user}"))
    node = Node(ssh_env, server)
    host = SshHost(node.options(), agentless=agentless)
    try:
        resolved = host.resolve([str(sleeper_tree.pid)])
        host.collect(resolved, CollectOptions())
        assert host.mode == ("agentless" if agentless else "agent"), host.mode_notes
        capture = host.capture_stacks([sleeper_tree.pid], StackOptions(timeout_s=20))
        [stacks] = [ps for ps in capture.processes if ps.pid == sleeper_tree.pid]
        assert stacks.error is not None, stacks
        text = f"{stacks.error.reason} {stacks.error.hint}"
        assert "permission denied" in text, text
        assert "ssh as the process's user or as root" in text, text  # the fix names the SSH side, not sudo here
    finally:
        host.close()
        shutil.rmtree(keys, ignore_errors=True)

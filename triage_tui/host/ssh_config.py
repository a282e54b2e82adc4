"""Where to connect and how, as OpenSSH itself reads ssh_config: `ssh -G HOST` where an ssh client exists.

Replaces reading ~/.ssh/config by hand (Include, Match, Host blocks, defaults): OpenSSH prints its final
values for a host with `ssh -G`, and triage connects with paramiko using exactly those (HostName, User,
Port, every IdentityFile and CertificateFile, IdentitiesOnly, ProxyJump, ProxyCommand, UserKnownHostsFile,
GlobalKnownHostsFile, StrictHostKeyChecking, ConnectTimeout, ServerAliveInterval). Without an `ssh`
binary, paramiko's own parser is used and the options it cannot honour are named on connect.
"""

from __future__ import annotations

import getpass
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

import paramiko

from ..collect.executables import untrusted_reason
from .base import TargetError

SSH_G_TIMEOUT_S = 10.0
DEFAULT_IDENTITIES = ("~/.ssh/id_rsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ed25519")


class SshError(TargetError):
    """A connection problem the user can act on: one line, no traceback."""


class ConfigError(SshError):
    """The ssh config cannot be read or resolved, or the destination is malformed."""


@dataclass(frozen=True)
class Endpoint:
    """One machine to connect to after ssh_config was applied."""

    alias: str  # the name as the user typed it (shown on screen)
    hostname: str
    port: int = 22
    user: str = ""
    identity_files: tuple[str, ...] = ()
    certificate_files: tuple[str, ...] = ()
    identities_only: bool = False
    jumps: tuple[str, ...] = field(default=())  # ProxyJump hops, outermost first
    proxy_command: str = ""  # ProxyCommand, tokens expanded; "" when none
    known_hosts: str = ""  # the first UserKnownHostsFile (new keys are appended there), "" when unset
    other_known_hosts: tuple[str, ...] = ()  # further UserKnownHostsFiles: read, never written
    global_known_hosts: tuple[str, ...] = ()  # GlobalKnownHostsFile: read, never written
    strict_host_key_checking: str = "ask"  # yes | ask | accept-new | no (a changed key is refused whatever it says)
    connect_timeout_s: Optional[float] = None
    server_alive_interval_s: int = 0
    resolved_by: str = "paramiko"  # "ssh -G" or "paramiko"
    unhonoured: tuple[str, ...] = ()  # options paramiko's parser could not apply (no ssh client here)


def split_destination(text: str) -> tuple[Optional[str], str, Optional[int]]:
    """`[USER@]HOST[:PORT]` → (user, host, port). IPv6 literals go in brackets: `[::1]:2222`."""
    if not text or any(c.isspace() for c in text):
        raise ConfigError(f"not an ssh destination: {text!r} (expected [USER@]HOST[:PORT])")
    user: Optional[str] = None
    if "@" in text:
        user, _, text = text.rpartition("@")
    port: Optional[int] = None
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest.startswith(":"):
            port = _port(rest[1:], text)
    elif text.count(":") == 1:
        host, _, p = text.partition(":")
        port = _port(p, text)
    else:
        host = text
    if not host or host.startswith("-") or (user is not None and (not user or user.startswith("-"))):
        raise ConfigError(f"not an ssh destination: {text!r} (expected [USER@]HOST[:PORT])")
    return user or None, host, port


def _port(text: str, whole: str) -> int:
    if not text.isdecimal() or not 0 < int(text) < 65536:
        raise ConfigError(f"bad port in ssh destination {whole!r}")
    return int(text)


def check_config_file(path: Optional[str]) -> None:
    """--ssh-config FILE must exist and not be a directory (/dev/null is fine: `ssh -F /dev/null`)."""
    if path and (not os.path.exists(path) or os.path.isdir(path)):
        raise ConfigError(f"ssh config file not found: {path}")


def find_ssh() -> Optional[str]:
    """The local OpenSSH client, when we may run it (the privilege rule of collect.executables)."""
    found = shutil.which("ssh")
    return found if found and untrusted_reason(found) is None else None


def resolve(destination: str, config_file: Optional[str] = None, identity: Optional[str] = None) -> Endpoint:
    """The endpoint for `destination` as OpenSSH would connect to it."""
    check_config_file(config_file)
    ssh = find_ssh()
    if ssh is not None:
        return resolve_with_ssh(ssh, destination, config_file, identity)
    return resolve_endpoint(destination, load_config(config_file), identity, _unhonoured(config_file))


def resolve_with_ssh(ssh: str, destination: str, config_file: Optional[str], identity: Optional[str]) -> Endpoint:
    """`ssh -G` for the destination: OpenSSH's own reading of the config (Include, Match, defaults)."""
    user, host, port = split_destination(destination)
    argv = [ssh, "-G"]
    if config_file:
        argv += ["-F", config_file]
    if identity:
        argv += ["-i", identity]
    if user:
        argv += ["-l", user]
    if port:
        argv += ["-p", str(port)]
    argv += ["--", host]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=SSH_G_TIMEOUT_S, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"cannot resolve {host} with ssh -G: {exc}") from None
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.strip().splitlines() if "Pseudo-terminal" not in ln]
        raise ConfigError(f"ssh -G {host} failed: {' | '.join(lines[-3:]) or 'exit ' + str(done.returncode)}")
    values: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        key, _, value = line.partition(" ")
        if key:
            values.setdefault(key.lower(), []).append(value.strip())

    def one(key: str, default: str = "") -> str:
        return (values.get(key) or [default])[0]

    real_user = one("user") or getpass.getuser()
    real_host = one("hostname", host)
    real_port = int(one("port", "22")) if one("port", "22").isdecimal() else 22
    tokens = {"h": real_host, "p": str(real_port), "r": real_user, "n": host, "u": getpass.getuser(),
              "d": os.path.expanduser("~"), "%": "%"}
    identities = [_path(v, tokens) for v in values.get("identityfile", [])]
    user_known = [_path(v, tokens) for line in values.get("userknownhostsfile", []) for v in line.split()]
    global_known = [_path(v, tokens) for line in values.get("globalknownhostsfile", []) for v in line.split()]
    jumps = one("proxyjump")
    command = one("proxycommand")
    timeout = one("connecttimeout", "none")
    alive = one("serveraliveinterval", "0")
    return Endpoint(
        alias=host, hostname=real_host, port=real_port, user=real_user,
        identity_files=tuple(dict.fromkeys(identities)),
        certificate_files=tuple(_path(v, tokens) for v in values.get("certificatefile", [])),
        identities_only=one("identitiesonly", "no").lower() == "yes",
        jumps=tuple(j.strip() for j in jumps.split(",") if j.strip()) if jumps and jumps.lower() != "none" else (),
        proxy_command=expand_tokens(command, tokens) if command and command.lower() != "none" else "",
        known_hosts=user_known[0] if user_known else "",
        other_known_hosts=tuple(user_known[1:]), global_known_hosts=tuple(global_known),
        strict_host_key_checking=_strict(one("stricthostkeychecking", "ask")),
        connect_timeout_s=float(timeout) if timeout.isdecimal() and int(timeout) > 0 else None,
        server_alive_interval_s=int(alive) if alive.isdecimal() else 0,
        resolved_by="ssh -G",
    )


def expand_tokens(text: str, tokens: dict[str, str]) -> str:
    """ssh_config's %h %p %r %n %u %d %% (an unknown %x is left as written)."""
    return re.sub(r"%(.)", lambda m: tokens.get(m.group(1), m.group(0)), text)


def _path(text: str, tokens: dict[str, str]) -> str:
    return os.path.expanduser(expand_tokens(text, tokens))


def _strict(text: str) -> str:
    value = text.lower()
    return {"true": "yes", "false": "no", "off": "no", "on": "yes"}.get(value, value)


# ------------------------------------------------------------------ no ssh client here: paramiko's parser
def load_config(path: Optional[str]) -> paramiko.SSHConfig:
    """The ssh config paramiko reads: --ssh-config FILE, else ~/.ssh/config when it exists, else empty."""
    check_config_file(path)
    chosen = path or os.path.expanduser("~/.ssh/config")
    if not os.path.exists(chosen) or os.path.isdir(chosen):
        return paramiko.SSHConfig()
    try:
        return paramiko.SSHConfig.from_path(chosen)
    except (OSError, ValueError, paramiko.ConfigParseError) as exc:
        raise ConfigError(f"cannot read ssh config {chosen}: {exc}") from None


# what paramiko's SSHConfig parses but SSHClient cannot apply, or does not parse at all
_PARAMIKO_CANNOT = ("include", "canonicalizehostname", "hostkeyalias", "certificatefile", "controlmaster",
                    "controlpath", "localforward", "remoteforward", "dynamicforward", "match exec")


def _unhonoured(config_file: Optional[str]) -> tuple[str, ...]:
    path = config_file or os.path.expanduser("~/.ssh/config")
    try:
        with open(path, errors="replace") as f:
            words = {" ".join(line.strip().lower().replace("=", " ").split()[:2]) for line in f if line.strip()}
    except OSError:
        return ()
    found = []
    for option in _PARAMIKO_CANNOT:
        if any(w == option or w.startswith(option + " ") or w.split(" ")[0] == option for w in words):
            found.append(option)
    return tuple(found)


def resolve_endpoint(destination: str, config: paramiko.SSHConfig, identity: Optional[str] = None,
                     unhonoured: Sequence[str] = ()) -> Endpoint:
    """Apply paramiko's reading of the config for `destination` (the fallback without an ssh client)."""
    user, host, port = split_destination(destination)
    entry = config.lookup(host)
    jumps_text = entry.get("proxyjump", "")
    jumps = tuple(j.strip() for j in jumps_text.split(",") if j.strip()) if jumps_text.lower() != "none" else ()
    identities = [os.path.expanduser(identity)] if identity else [os.path.expanduser(p) for p in entry.get("identityfile", [])]
    known = (entry.get("userknownhostsfile") or "").split()
    timeout = str(entry.get("connecttimeout", ""))
    return Endpoint(
        alias=host,
        hostname=entry.get("hostname", host),
        port=port or int(entry.get("port", 22)),
        user=user or entry.get("user") or getpass.getuser(),
        identity_files=tuple(identities) or tuple(os.path.expanduser(p) for p in DEFAULT_IDENTITIES),
        identities_only=str(entry.get("identitiesonly", "no")).lower() == "yes",
        jumps=jumps,
        proxy_command=str(entry.get("proxycommand", "")) if str(entry.get("proxycommand", "")).lower() != "none" else "",
        known_hosts=os.path.expanduser(known[0]) if known else "",
        other_known_hosts=tuple(os.path.expanduser(k) for k in known[1:]),
        global_known_hosts=tuple((entry.get("globalknownhostsfile") or "/etc/ssh/ssh_known_hosts").split()),
        strict_host_key_checking=_strict(str(entry.get("stricthostkeychecking", "ask"))),
        connect_timeout_s=float(timeout) if timeout.isdecimal() and int(timeout) > 0 else None,
        server_alive_interval_s=int(entry.get("serveraliveinterval", 0) or 0),
        resolved_by="paramiko",
        unhonoured=tuple(unhonoured),
    )

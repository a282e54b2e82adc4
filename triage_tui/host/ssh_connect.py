"""Opening an SSH connection the way `ssh` would: ~/.ssh/config, ProxyJump hops, known_hosts, keys.

Replaces `ssh [-i KEY] [-F CONFIG] [-J JUMP] [USER@]HOST[:PORT]`. paramiko does the protocol; this module
decides what to connect to (config lookup), how to trust it (known_hosts: unknown refused unless
accept-new, changed ALWAYS refused) and how to authenticate without ever prompting a non-interactive run.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

import paramiko

from .base import TargetError

CONNECT_TIMEOUT_S = 10.0


class SshError(TargetError):
    """A connection problem the user can act on: one line, no traceback."""


@dataclass(frozen=True)
class SshOptions:
    """What the command line says about the connection (--ssh, -i, --ssh-config, --accept-new-host-key)."""

    destination: str
    identity: Optional[str] = None
    config_file: Optional[str] = None
    known_hosts: Optional[str] = None  # default ~/.ssh/known_hosts
    accept_new_host_key: bool = False
    timeout_s: float = CONNECT_TIMEOUT_S
    interactive: Optional[bool] = None  # None: stdin is a TTY


@dataclass(frozen=True)
class Endpoint:
    """One machine to connect to after ~/.ssh/config was applied."""

    alias: str
    hostname: str
    port: int = 22
    user: str = ""
    identity_files: tuple[str, ...] = ()
    jumps: tuple[str, ...] = field(default=())  # ProxyJump hops, outermost first
    known_hosts: str = ""  # UserKnownHostsFile from the config (first one), "" when unset


def split_destination(text: str) -> tuple[Optional[str], str, Optional[int]]:
    """`[USER@]HOST[:PORT]` → (user, host, port). IPv6 literals go in brackets: `[::1]:2222`."""
    if not text or any(c.isspace() for c in text):
        raise SshError(f"not an ssh destination: {text!r} (expected [USER@]HOST[:PORT])")
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
    if not host or host.startswith("-"):
        raise SshError(f"not an ssh destination: {text!r} (expected [USER@]HOST[:PORT])")
    return user or None, host, port


def _port(text: str, whole: str) -> int:
    if not text.isdecimal() or not 0 < int(text) < 65536:
        raise SshError(f"bad port in ssh destination {whole!r}")
    return int(text)


def load_config(path: Optional[str]) -> paramiko.SSHConfig:
    """The ssh config to honour: --ssh-config FILE, else ~/.ssh/config when it exists, else empty."""
    chosen = path or os.path.expanduser("~/.ssh/config")
    if path and not os.path.isfile(path):
        raise SshError(f"ssh config file not found: {path}")
    if not os.path.isfile(chosen):
        return paramiko.SSHConfig()
    try:
        return paramiko.SSHConfig.from_path(chosen)
    except (OSError, ValueError, paramiko.ConfigParseError) as exc:
        raise SshError(f"cannot read ssh config {chosen}: {exc}") from None


def resolve_endpoint(destination: str, config: paramiko.SSHConfig, identity: Optional[str] = None) -> Endpoint:
    """Apply the config's Host block for `destination` (alias → HostName, User, Port, IdentityFile, ProxyJump)."""
    user, host, port = split_destination(destination)
    entry = config.lookup(host)
    jumps_text = entry.get("proxyjump", "")
    jumps = tuple(j.strip() for j in jumps_text.split(",") if j.strip()) if jumps_text.lower() != "none" else ()
    identities = [os.path.expanduser(identity)] if identity else [os.path.expanduser(p) for p in entry.get("identityfile", [])]
    return Endpoint(
        alias=host,
        hostname=entry.get("hostname", host),
        port=port or int(entry.get("port", 22)),
        user=user or entry.get("user") or getpass.getuser(),
        identity_files=tuple(identities),
        jumps=jumps,
        known_hosts=os.path.expanduser((entry.get("userknownhostsfile") or "").split()[0]) if entry.get("userknownhostsfile") else "",
    )


def fingerprint(key: paramiko.PKey) -> str:
    """SHA256 fingerprint as OpenSSH prints it: `SHA256:` + unpadded base64."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def known_hosts_name(hostname: str, port: int) -> str:
    return hostname if port == 22 else f"[{hostname}]:{port}"


class _KnownHostsPolicy(paramiko.MissingHostKeyPolicy):
    """Unknown host: refuse with the fingerprint and how to accept it, or record it (accept-new).

    A CHANGED key never reaches this policy: paramiko raises BadHostKeyException for it before
    asking, whatever the policy is; connect() turns that into a loud refusal.
    """

    def __init__(self, accept_new: bool, known_hosts: str) -> None:
        self.accept_new = accept_new
        self.known_hosts = known_hosts

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        if not self.accept_new:
            raise SshError(
                f"unknown host key for {hostname}: {key.get_name()} {fingerprint(key)}; "
                f"check it with the node's owner, then rerun with --accept-new-host-key to record it in {self.known_hosts}"
            )
        client.get_host_keys().add(hostname, key.get_name(), key)
        # Append one line, as ssh does: paramiko's save_host_keys would rewrite the whole file and drop
        # what it cannot parse (@cert-authority lines, comments, key types it does not know).
        os.makedirs(os.path.dirname(self.known_hosts) or ".", mode=0o700, exist_ok=True)
        fd = os.open(self.known_hosts, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a") as f:
            f.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")


def _load_key(path: str, interactive: bool) -> paramiko.PKey:
    """Load a private key; an encrypted one asks for its passphrase only on a terminal, never otherwise."""
    try:
        return paramiko.PKey.from_path(path)
    except (paramiko.PasswordRequiredException, TypeError) as exc:
        # paramiko raises PasswordRequiredException for PEM keys, but lets cryptography's TypeError
        # ("password was not provided") through for OpenSSH-format keys: both mean "encrypted".
        if isinstance(exc, TypeError) and "password" not in str(exc).lower():
            raise SshError(f"cannot read key {path}: {exc}") from None
        if not interactive:
            raise SshError(
                f"key {path} needs a passphrase and stdin is not a terminal; load it into ssh-agent (ssh-add) "
                "or run triage from a terminal"
            ) from None
        passphrase = getpass.getpass(f"Passphrase for {path}: ")
        try:
            return paramiko.PKey.from_path(path, passphrase=passphrase)
        except (paramiko.SSHException, ValueError, TypeError) as exc:
            raise SshError(f"cannot unlock key {path}: {exc}") from None
    except FileNotFoundError:
        raise SshError(f"key file not found: {path}") from None
    except (OSError, paramiko.SSHException, ValueError) as exc:
        raise SshError(f"cannot read key {path}: {exc}") from None


def _agent_has_keys() -> bool:
    if not os.environ.get("SSH_AUTH_SOCK"):
        return False
    agent = paramiko.Agent()
    try:
        return bool(agent.get_keys())
    except paramiko.SSHException:
        return False
    finally:
        agent.close()


@dataclass
class Connection:
    """An open connection: the client to the node and the jump clients it rides on (closed in reverse)."""

    client: paramiko.SSHClient
    endpoint: Endpoint
    jump_clients: list[paramiko.SSHClient]

    @property
    def transport(self) -> paramiko.Transport:
        transport = self.client.get_transport()
        if transport is None:
            raise SshError(f"connection to {self.endpoint.alias} is closed")
        return transport

    def is_active(self) -> bool:
        transport = self.client.get_transport()
        return transport is not None and transport.is_active()

    def close(self) -> None:
        for c in [self.client, *reversed(self.jump_clients)]:
            try:
                c.close()
            except Exception:  # closing is best effort: the peer may be gone already
                pass


def _connect_one(endpoint: Endpoint, options: SshOptions, known_hosts: str, sock: Optional[paramiko.Channel]) -> paramiko.SSHClient:
    interactive = sys.stdin.isatty() if options.interactive is None else options.interactive
    # Config IdentityFile lines that do not exist are skipped, as ssh does; an explicit -i must exist.
    keys = []
    for path in endpoint.identity_files:
        if not (options.identity or os.path.exists(path)):
            continue
        try:
            keys.append(_load_key(path, interactive))
        except SshError:
            # an encrypted key with no terminal to ask on: ssh-agent may hold it unlocked, so go on without it
            if not _agent_has_keys():
                raise
    client = paramiko.SSHClient()
    if os.path.exists(known_hosts):
        try:
            client.load_host_keys(known_hosts)
        except (OSError, paramiko.SSHException) as exc:
            raise SshError(f"cannot read known_hosts {known_hosts}: {exc}") from None
    client.set_missing_host_key_policy(_KnownHostsPolicy(options.accept_new_host_key, known_hosts))
    where = f"{endpoint.user}@{endpoint.hostname}:{endpoint.port}"
    try:
        client.connect(
            endpoint.hostname, port=endpoint.port, username=endpoint.user,
            pkey=keys[0] if keys else None,
            allow_agent=True, look_for_keys=not keys,
            timeout=options.timeout_s, banner_timeout=options.timeout_s,
            auth_timeout=options.timeout_s, channel_timeout=options.timeout_s, sock=sock,
        )
    except paramiko.BadHostKeyException as exc:
        client.close()
        raise SshError(
            f"HOST KEY FOR {known_hosts_name(endpoint.hostname, endpoint.port)} HAS CHANGED: known_hosts has "
            f"{fingerprint(exc.expected_key)}, the server offers {exc.key.get_name()} {fingerprint(exc.key)}. "
            f"Refusing to connect (possible man-in-the-middle). If the node was reinstalled, remove the old "
            f"entry with: ssh-keygen -R {known_hosts_name(endpoint.hostname, endpoint.port)} -f {known_hosts}"
        ) from None
    except SshError:
        client.close()
        raise
    except paramiko.AuthenticationException as exc:
        client.close()
        raise SshError(f"authentication failed for {where}: {exc}") from None
    except (OSError, EOFError, paramiko.SSHException) as exc:
        client.close()
        raise SshError(f"cannot connect to {where}: {type(exc).__name__}: {exc}") from None
    # A dead peer must not hang a request forever: keepalives let the transport notice.
    transport = client.get_transport()
    if transport is not None:
        transport.set_keepalive(15)
    return client


def connect(options: SshOptions) -> Connection:
    """Connect to `options.destination`, hop by hop through its ProxyJump chain (direct-tcpip channels)."""
    config = load_config(options.config_file)
    target = resolve_endpoint(options.destination, config, options.identity)
    # one known_hosts for the whole chain: an explicit path, else the target's UserKnownHostsFile, else ssh's default
    known_hosts = options.known_hosts or target.known_hosts or os.path.expanduser("~/.ssh/known_hosts")
    # A hop without its own IdentityFile uses -i too (one key for the bastion and the node is the common case).
    hops = [resolve_endpoint(j, config) for j in target.jumps]
    if options.identity:
        hops = [h if h.identity_files else resolve_endpoint(j, config, options.identity) for h, j in zip(hops, target.jumps, strict=False)]
    clients: list[paramiko.SSHClient] = []
    sock: Optional[paramiko.Channel] = None
    try:
        for hop, following in zip(hops, [*hops[1:], target], strict=False):
            jump = _connect_one(hop, options, known_hosts, sock)
            clients.append(jump)
            transport = jump.get_transport()
            assert transport is not None
            try:
                sock = transport.open_channel(
                    "direct-tcpip", (following.hostname, following.port), ("127.0.0.1", 0), timeout=options.timeout_s
                )
            except (paramiko.SSHException, OSError, EOFError) as exc:
                raise SshError(f"jump host {hop.alias} cannot reach {following.hostname}:{following.port}: {exc}") from None
        client = _connect_one(target, options, known_hosts, sock)
    except BaseException:
        for c in reversed(clients):
            c.close()
        raise
    return Connection(client=client, endpoint=target, jump_clients=clients)

"""Opening an SSH connection the way `ssh` would: ssh_config as OpenSSH reads it, jumps, known_hosts, keys.

Replaces `ssh [-i KEY] [-F CONFIG] [USER@]HOST[:PORT]`. paramiko does the protocol; ssh_config decides
what to connect to (`ssh -G` where an ssh client exists); this module decides how to trust it (known_hosts,
user and global: unknown refused unless accept-new, changed or of another type ALWAYS refused, on every
hop and through ProxyCommand alike) and authenticates as ssh does: every IdentityFile in order (with its
certificate), then ssh-agent's keys, asking for a passphrase only on a terminal.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

import paramiko

from .ssh_config import ConfigError, Endpoint, SshError, check_config_file, load_config, resolve, resolve_endpoint
from .ssh_config import split_destination as split_destination

__all__ = ["ConfigError", "Connection", "Endpoint", "SshError", "SshOptions", "check_config_file", "connect",
           "fingerprint", "load_config", "resolve_endpoint", "split_destination"]

CONNECT_TIMEOUT_S = 10.0
DEFAULT_KEEPALIVE_S = 15


@dataclass(frozen=True)
class SshOptions:
    """What the command line says about the connection (--ssh, -i, --ssh-config, --accept-new-host-key)."""

    destination: str
    identity: Optional[str] = None
    config_file: Optional[str] = None
    known_hosts: Optional[str] = None  # overrides UserKnownHostsFile (tests; default: what the config says)
    accept_new_host_key: bool = False
    timeout_s: float = CONNECT_TIMEOUT_S
    interactive: Optional[bool] = None  # None: stdin is a TTY


def fingerprint(key: paramiko.PKey) -> str:
    """SHA256 fingerprint as OpenSSH prints it: `SHA256:` + unpadded base64."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def known_hosts_name(hostname: str, port: int) -> str:
    return hostname if port == 22 else f"[{hostname}]:{port}"


class _KnownHostsPolicy(paramiko.MissingHostKeyPolicy):
    """No key of this type known for the host: refuse with the fingerprint, or record it (accept-new).

    A CHANGED key of the same type never reaches this policy (paramiko raises BadHostKeyException before
    asking). A host known with a key of ANOTHER type does reach it: that is refused too, as OpenSSH does.
    """

    def __init__(self, accept_new: bool, known_hosts: str, system: paramiko.HostKeys) -> None:
        self.accept_new = accept_new
        self.known_hosts = known_hosts
        self.system = system

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        known = {**(client.get_host_keys().lookup(hostname) or {}), **(self.system.lookup(hostname) or {})}
        if known:
            types = ", ".join(sorted(known))
            raise SshError(
                f"HOST KEY FOR {hostname} HAS CHANGED: known_hosts has {types}, the server offers "
                f"{key.get_name()} {fingerprint(key)}. Refusing to connect (possible man-in-the-middle)."
            )
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


class _NeedsPassphrase(SshError):
    pass


def _load_key(path: str, interactive: bool, ask: Callable[[str], str] = getpass.getpass) -> paramiko.PKey:
    """Load a private key; an encrypted one asks for its passphrase only on a terminal, never otherwise.

    The passphrase goes positionally and as bytes: paramiko 3/4 name the argument `passphrase`, 5 renamed it
    `password`, and both hand it to cryptography, which wants bytes."""
    try:
        return paramiko.PKey.from_path(path)
    except (paramiko.PasswordRequiredException, TypeError) as exc:
        # paramiko raises PasswordRequiredException for PEM keys, but lets cryptography's TypeError
        # ("password was not provided") through for OpenSSH-format keys: both mean "encrypted".
        if isinstance(exc, TypeError) and "password" not in str(exc).lower():
            raise SshError(f"cannot read key {path}: {exc}") from None
        if not interactive:
            raise _NeedsPassphrase(
                f"key {path} needs a passphrase and stdin is not a terminal; load it into ssh-agent (ssh-add) "
                "or run triage from a terminal"
            ) from None
        passphrase = ask(f"Enter passphrase for key '{path}': ")
        try:
            return paramiko.PKey.from_path(path, passphrase.encode())
        except (paramiko.SSHException, ValueError, TypeError) as exc:
            raise SshError(f"cannot unlock key {path}: {exc}") from None
    except FileNotFoundError:
        raise SshError(f"key file not found: {path}") from None
    except (OSError, paramiko.SSHException, ValueError) as exc:
        raise SshError(f"cannot read key {path}: {exc}") from None


def _agent_keys() -> list[Any]:
    if not os.environ.get("SSH_AUTH_SOCK"):
        return []
    try:
        return list(paramiko.Agent().get_keys())
    except paramiko.SSHException:
        return []


@dataclass
class Connection:
    """An open connection: the client to the node and the jump clients it rides on (closed in reverse)."""

    client: paramiko.SSHClient
    endpoint: Endpoint
    jump_clients: list[paramiko.SSHClient]
    notes: tuple[str, ...] = field(default=())  # how the config was read, what could not be honoured

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


Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def _authenticate(transport: paramiko.Transport, endpoint: Endpoint, options: SshOptions, progress: Progress) -> None:
    """Every IdentityFile in order (its certificate loaded when there is one), then ssh-agent's keys unless
    IdentitiesOnly; what ssh does, so a wrong key first is no failure. An encrypted key without a terminal
    is skipped and named if nothing else works."""
    interactive = sys.stdin.isatty() if options.interactive is None else options.interactive
    where = f"{endpoint.user}@{endpoint.hostname}:{endpoint.port}"
    tried: list[str] = []
    skipped: list[str] = []
    certificates = [c for c in endpoint.certificate_files if os.path.exists(c)]
    for path in endpoint.identity_files:
        if not os.path.exists(path):
            if options.identity and os.path.expanduser(options.identity) == path:
                raise SshError(f"key file not found: {path}")
            continue  # a config or default IdentityFile that does not exist is skipped, as ssh does
        try:
            key = _load_key(path, interactive)
        except _NeedsPassphrase as exc:
            skipped.append(str(exc))
            continue
        for cert in [path + "-cert.pub", *certificates]:
            if os.path.exists(cert):
                try:
                    key.load_certificate(cert)
                    break
                except (ValueError, OSError, paramiko.SSHException):
                    continue
        progress(f"authenticating as {endpoint.user} with {os.path.basename(path)}")
        if _try_key(transport, endpoint.user, key):
            return
        tried.append(path)
    if not endpoint.identities_only:
        for key in _agent_keys():
            progress(f"authenticating as {endpoint.user} with an ssh-agent key")
            if _try_key(transport, endpoint.user, key):
                return
            tried.append(f"ssh-agent {key.get_name()}")
    detail = "; ".join([*skipped, f"tried {', '.join(tried)}" if tried else "no key to try"])
    raise SshError(f"authentication failed for {where}: {detail}")


def _try_key(transport: paramiko.Transport, user: str, key: Any) -> bool:
    try:
        transport.auth_publickey(user, key)
    except paramiko.AuthenticationException:
        return False
    except paramiko.SSHException as exc:
        raise SshError(f"authentication failed: {exc}") from None
    return transport.is_authenticated()


def _connect_one(endpoint: Endpoint, options: SshOptions, sock: Optional[Any], progress: Progress) -> paramiko.SSHClient:
    known_hosts = options.known_hosts or endpoint.known_hosts or os.path.expanduser("~/.ssh/known_hosts")
    client = paramiko.SSHClient()
    system = paramiko.HostKeys()
    for path in [*endpoint.global_known_hosts, *endpoint.other_known_hosts]:
        if os.path.isfile(path):
            try:
                client.load_system_host_keys(path)  # read, never written back
                system.load(path)
            except (OSError, paramiko.SSHException) as exc:
                raise SshError(f"cannot read known_hosts {path}: {exc}") from None
    if os.path.exists(known_hosts):
        try:
            client.load_host_keys(known_hosts)
        except (OSError, paramiko.SSHException) as exc:
            raise SshError(f"cannot read known_hosts {known_hosts}: {exc}") from None
    accept_new = options.accept_new_host_key or endpoint.strict_host_key_checking in ("accept-new", "no")
    client.set_missing_host_key_policy(_KnownHostsPolicy(accept_new, known_hosts, system))
    where = f"{endpoint.user}@{endpoint.hostname}:{endpoint.port}"
    timeout = endpoint.connect_timeout_s or options.timeout_s
    progress(f"connecting to {endpoint.alias} ({endpoint.hostname}:{endpoint.port})")
    try:
        # No credentials here: paramiko connects and checks the host key, then finds no method and raises;
        # _authenticate then tries every key in ssh's order on the same transport.
        client.connect(
            endpoint.hostname, port=endpoint.port, username=endpoint.user, pkey=None,
            allow_agent=False, look_for_keys=False,
            timeout=timeout, banner_timeout=timeout, auth_timeout=timeout, channel_timeout=timeout, sock=sock,
        )
    except paramiko.BadHostKeyException as exc:
        client.close()
        name = known_hosts_name(endpoint.hostname, endpoint.port)
        raise SshError(
            f"HOST KEY FOR {name} HAS CHANGED: known_hosts has "
            f"{fingerprint(exc.expected_key)}, the server offers {exc.key.get_name()} {fingerprint(exc.key)}. "
            f"Refusing to connect (possible man-in-the-middle). If the node was reinstalled, remove the old "
            f"entry with: ssh-keygen -R {name} -f {known_hosts}"
        ) from None
    except SshError:
        client.close()
        raise
    except paramiko.SSHException as exc:
        transport = client.get_transport()
        no_method = "no authentication methods available" in str(exc).lower()  # the one we expect, see above
        if not no_method or transport is None or not transport.is_active() or transport.is_authenticated():
            client.close()
            raise SshError(f"cannot connect to {where}: {type(exc).__name__}: {exc}") from None
    except (OSError, EOFError) as exc:
        client.close()
        raise SshError(f"cannot connect to {where}: {type(exc).__name__}: {exc}") from None
    transport = client.get_transport()
    if transport is None or not transport.is_active():
        client.close()
        raise SshError(f"cannot connect to {where}: the connection closed")
    progress(f"host key of {endpoint.alias} verified")
    if not transport.is_authenticated():
        try:
            _authenticate(transport, endpoint, options, progress)
        except BaseException:
            client.close()
            raise
    # A dead peer must not hang a request forever: keepalives let the transport notice.
    transport.set_keepalive(endpoint.server_alive_interval_s or DEFAULT_KEEPALIVE_S)
    return client


def _proxy_command(endpoint: Endpoint) -> paramiko.ProxyCommand:
    # run through the shell as ssh does (`$SHELL -c "exec ..."`), not split by paramiko
    try:
        return paramiko.ProxyCommand(f"/bin/sh -c {shlex.quote('exec ' + endpoint.proxy_command)}")
    except (OSError, paramiko.SSHException) as exc:
        raise SshError(f"ProxyCommand for {endpoint.alias} failed to start: {exc}") from None


def connect(options: SshOptions, progress: Progress = _quiet) -> Connection:
    """Connect to `options.destination` as ssh would: through its ProxyJump chain (direct-tcpip channels)
    or its ProxyCommand, each hop resolved from the config on its own."""
    progress(f"resolving {options.destination}")
    target = resolve(options.destination, options.config_file, options.identity)
    notes = [f"ssh_config read by {target.resolved_by}"]
    if target.unhonoured:
        notes.append("no ssh client here: paramiko cannot honour " + ", ".join(target.unhonoured))
    # A hop uses -i too (one key for the bastion and the node is the common case), after its own keys.
    hops = [resolve(j, options.config_file, options.identity) for j in target.jumps]
    clients: list[paramiko.SSHClient] = []
    sock: Optional[Any] = None
    try:
        if not hops and target.proxy_command:
            progress(f"starting ProxyCommand for {target.alias}")
            sock = _proxy_command(target)
        for index, hop in enumerate(hops):
            following = hops[index + 1] if index + 1 < len(hops) else target
            hop_sock = _proxy_command(hop) if index == 0 and hop.proxy_command else sock
            jump = _connect_one(hop, options, hop_sock, progress)
            clients.append(jump)
            transport = jump.get_transport()
            assert transport is not None
            try:
                sock = transport.open_channel(
                    "direct-tcpip", (following.hostname, following.port), ("127.0.0.1", 0), timeout=options.timeout_s
                )
            except (paramiko.SSHException, OSError, EOFError) as exc:
                raise SshError(f"jump host {hop.alias} cannot reach {following.hostname}:{following.port}: {exc}") from None
        client = _connect_one(target, options, sock, progress)
    except BaseException:
        for c in reversed(clients):
            c.close()
        if isinstance(sock, paramiko.ProxyCommand):
            sock.close()
        raise
    return Connection(client=client, endpoint=target, jump_clients=clients, notes=tuple(notes))

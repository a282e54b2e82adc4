"""Which nodes a job spans: host lists as people and schedulers write them.

`gpu[01-16]`, `a,b,c`, `n[1-3,7],login`, `root@n[1-2]:2222`, and hostfiles in the MPI / DeepSpeed style
(`node1 slots=8`, `# comments`). Expansion is what `scontrol show hostnames` does for Slurm's
notation and what pdsh does for its own; it is done here so no scheduler tool is needed for a plain list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

MAX_NODES = 4096  # a typo like n[1-999999] must not build a list of a million hosts

_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


class NodeListError(ValueError):
    """A host list that cannot be expanded: one clear line for the user."""


def _split_top(text: str) -> list[str]:
    """Split on commas that are not inside brackets: `n[1,3],m` → [`n[1,3]`, `m`]."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise NodeListError(f"unbalanced ']' in host list {text!r}")
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if depth != 0:
        raise NodeListError(f"unbalanced '[' in host list {text!r}")
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _expand_ranges(body: str, whole: str) -> list[str]:
    """`01-03,7` → ["01", "02", "03", "7"]: zero padding kept as written (gpu[01-16] → gpu01 … gpu16)."""
    out: list[str] = []
    for item in body.split(","):
        item = item.strip()
        match = _RANGE.match(item)
        if not match:
            raise NodeListError(f"bad range {item!r} in host list {whole!r} (expected N or N-M)")
        first, last = match.group(1), match.group(2) or match.group(1)
        lo, hi = int(first), int(last)
        if hi < lo:
            raise NodeListError(f"range {item!r} in host list {whole!r} runs backwards")
        if hi - lo + 1 > MAX_NODES:
            raise NodeListError(f"range {item!r} in host list {whole!r} has more than {MAX_NODES} hosts")
        width = len(first) if first.startswith("0") and len(first) > 1 else 0
        out.extend(str(n).zfill(width) for n in range(lo, hi + 1))
    return out


def _expand_one(item: str, whole: str) -> list[str]:
    """One comma-free item, possibly with several bracket groups: `r[1-2]n[1-2]` → r1n1 r1n2 r2n1 r2n2."""
    match = re.search(r"\[([^\[\]]*)\]", item)
    if match is None:
        if "[" in item or "]" in item:
            raise NodeListError(f"unbalanced brackets in host list {whole!r}")
        return [item]
    head, tail = item[: match.start()], item[match.end():]
    out: list[str] = []
    for value in _expand_ranges(match.group(1), whole):
        out.extend(_expand_one(head + value + tail, whole))
        if len(out) > MAX_NODES:
            raise NodeListError(f"host list {whole!r} has more than {MAX_NODES} hosts")
    return out


def _split_user_port(text: str) -> tuple[str, str, str]:
    """`root@n[1-2]:2222` → ("root@", "n[1-2]", ":2222"): the user and port apply to every host."""
    user = ""
    if "@" in text:
        at = text.rindex("@")
        user, text = text[: at + 1], text[at + 1:]
    port = ""
    match = re.search(r":(\d+)$", text)
    if match and not text.startswith("["):  # [v6]:port is a single destination, not a list
        port, text = match.group(0), text[: match.start()]
    return user, text, port


def expand_hosts(spec: str) -> list[str]:
    """Every destination a host-list spec names, in order, duplicates removed.

    A bracketed IPv6 destination (`[::1]:22`) is passed through whole."""
    spec = spec.strip()
    if not spec:
        raise NodeListError("empty host list")
    if re.match(r"^([^@\[\]]+@)?\[[0-9a-fA-F:.]*:[0-9a-fA-F:.]*\](:\d+)?$", spec):  # [v6] or [v6]:port
        return [spec]
    out: list[str] = []
    for part in _split_top(spec):
        user, hosts, port = _split_user_port(part)
        for host in _expand_one(hosts, spec):
            if not host:
                raise NodeListError(f"empty host name in host list {spec!r}")
            destination = f"{user}{host}{port}"
            if destination not in out:
                out.append(destination)
        if len(out) > MAX_NODES:
            raise NodeListError(f"host list {spec!r} has more than {MAX_NODES} hosts")
    return out


def parse_hostfile(text: str) -> list[str]:
    """Hosts of an MPI / DeepSpeed hostfile: one per line, `slots=N` (and any key=value) ignored,
    `#` comments and blank lines skipped. A line may itself be a host list (`gpu[01-04]`)."""
    out: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = [w for w in line.split() if "=" not in w]
        if not words:
            raise NodeListError(f"hostfile line {number} names no host: {raw.strip()!r}")
        for host in expand_hosts(words[0]):
            if host not in out:
                out.append(host)
    return out


def read_hostfile(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 20)
    except OSError as exc:
        raise NodeListError(f"cannot read hostfile {path}: {exc.strerror or exc}") from None
    hosts = parse_hostfile(text)
    if not hosts:
        raise NodeListError(f"hostfile {path} names no host")
    return hosts


def nodes_from(ssh_specs: Sequence[str], hostfiles: Iterable[str] = ()) -> list[str]:
    """Every node of repeated `--ssh` values and `--hostfile` files, in the order given, once each."""
    out: list[str] = []
    for spec in ssh_specs:
        for host in expand_hosts(spec):
            if host not in out:
                out.append(host)
    for path in hostfiles:
        for host in read_hostfile(path):
            if host not in out:
                out.append(host)
    return out

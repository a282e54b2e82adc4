"""What agent mode ships to the node and the shell lines that set it up.

Replaces copying triage to the node by hand: the triage_tui package (minus ui/, which the node never
needs) zipped in memory, a probe script that makes a private 0700 directory and finds a Python with
psutil, and the bootstrap that runs the agent from the zip and removes the directory when it exits.
"""

from __future__ import annotations

import io
import os
import platform
import shlex
import shutil
import sysconfig
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import triage_tui

PACKAGE_DIR = os.path.dirname(os.path.abspath(triage_tui.__file__))
ZIP_NAME = "triage.zip"
PYSPY_NAME = "py-spy"

# Runs on the node as `python -c BOOTSTRAP DIR`. It must not outlive its directory nor leave it behind:
# whatever way serve() ends (bye, EOF on stdin, an error), the finally removes DIR.
BOOTSTRAP = (
    "import os,shutil,sys\n"
    "d=sys.argv[1]\n"
    "try:\n"
    "    sys.path.insert(0,os.path.join(d,'" + ZIP_NAME + "'))\n"
    "    os.environ['PATH']=d+os.pathsep+os.environ.get('PATH','')\n"
    "    from triage_tui.host.agent import main\n"
    "    main(d)\n"
    "finally:\n"
    "    shutil.rmtree(d,ignore_errors=True)\n"
)


@lru_cache(maxsize=1)
def build_zip() -> bytes:
    """triage_tui as a zip: sources only, no ui/ (textual is not needed on the node), no caches."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for folder, dirs, files in os.walk(PACKAGE_DIR):
            rel = os.path.relpath(folder, os.path.dirname(PACKAGE_DIR))
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not (rel == "triage_tui" and d == "ui"))
            for name in sorted(files):
                if name.endswith(".py"):
                    zf.write(os.path.join(folder, name), os.path.join(rel, name))
    return buffer.getvalue()


def probe_script(pids: Sequence[int]) -> str:
    """One shell script: make the private directory, report arch, py-spy and usable Pythons.

    Candidates in order of preference: the interpreters of the target's processes (ML environments ship
    psutil), then python3 on PATH, then any other running python3 (the target given by name or port is not
    resolved yet). A candidate is usable when it is Python >= 3.10 (the model's type hints) and imports psutil.
    """
    exes = " ".join(f"/proc/{int(p)}/exe" for p in pids)
    return (
        "umask 077; d=$(mktemp -d \"${TMPDIR:-/tmp}/triage-agent.XXXXXXXX\") || exit 3; chmod 700 \"$d\"; "
        "echo \"dir=$d\"; echo \"arch=$(uname -m)\"; echo \"pyspy=$(command -v py-spy 2>/dev/null)\"; "
        f"for c in $(for e in {exes}; do readlink \"$e\" 2>/dev/null; done) $(command -v python3 2>/dev/null) "
        "$(for e in /proc/[0-9]*/exe; do readlink \"$e\" 2>/dev/null; done | grep '/python3[0-9.]*$' | sort -u); do "
        "\"$c\" -c 'import sys, psutil; sys.exit(sys.version_info < (3, 10))' >/dev/null 2>&1 "
        "&& { echo \"python=$c\"; break; }; done; true"
    )


@dataclass(frozen=True)
class ProbeResult:
    private_dir: str
    arch: str
    node_pyspy: str
    pythons: tuple[str, ...]


def parse_probe(text: str) -> ProbeResult:
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields.setdefault(key, []).append(value.strip())
    private_dir = (fields.get("dir") or [""])[0]
    if not private_dir.startswith("/"):
        raise ValueError("the node did not create a private directory (mktemp failed)")
    return ProbeResult(private_dir, (fields.get("arch") or [""])[0], (fields.get("pyspy") or [""])[0],
                       tuple(dict.fromkeys(p for p in fields.get("python", []) if p)))


def local_pyspy_binary() -> Optional[str]:
    """The local py-spy executable itself (not a pyenv shim script, which would be useless on the node)."""
    for candidate in (shutil.which(PYSPY_NAME), os.path.join(sysconfig.get_path("scripts"), PYSPY_NAME)):
        if candidate and os.path.isfile(candidate):
            with open(candidate, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    return candidate
    return None


def pyspy_upload_plan(probe: ProbeResult) -> tuple[Optional[str], str]:
    """(local binary to upload or None, a note saying why). The node's own py-spy wins."""
    if probe.node_pyspy:
        return None, f"using the node's py-spy ({probe.node_pyspy})"
    local = local_pyspy_binary()
    if local is None:
        return None, "no py-spy on the node and none here to upload: stacks unavailable"
    if probe.arch != platform.machine():
        return None, f"no py-spy on the node; ours is {platform.machine()}, the node is {probe.arch}: not uploaded"
    return local, "uploaded our py-spy to the node's private directory"


def write_file_command(path: str, mode: str = "600") -> str:
    return f"cat > {shlex.quote(path)} && chmod {mode} {shlex.quote(path)}"


def agent_command(python: str, private_dir: str) -> str:
    return f"exec {shlex.quote(python)} -c {shlex.quote(BOOTSTRAP)} {shlex.quote(private_dir)}"


def cleanup_command(private_dir: str, agent_pid: Optional[int] = None) -> str:
    """Client-side cleanup after the agent: remove the directory (and end our own agent if still there)."""
    # Only our agent: the PID must still run from our private directory (a reused PID is left alone).
    kill = (f"grep -qF -- {shlex.quote(private_dir)} /proc/{int(agent_pid)}/cmdline 2>/dev/null && "
            f"kill {int(agent_pid)}; ") if agent_pid else ""
    return f"{kill}rm -rf -- {shlex.quote(private_dir)}"

"""What agent mode ships to the node and the shell lines that set it up.

Replaces copying triage to the node by hand: the modules the agent imports (collectors, model, parsers;
never the UI) zipped in memory, a read-only probe that picks an interpreter we may safely run, and the
bootstrap that makes the private directory, receives the zip (and py-spy) on its own stdin and removes
the directory however it ends.

Privilege rule (#19): nothing writable by a less privileged user than the SSH user is ever executed or
imported. The agent runs under an interpreter owned by root or by the SSH user, with no group- or
world-writable path component, in isolated mode without site (`-I -S`: no user site, no PYTHONPATH, no
cwd, no site-packages): the standard library and the agent's own zip, nothing else. The target's own
interpreter (/proc/PID/exe) and other running python3s are never run: they may belong to the user
being watched. The same rule picks the node's py-spy.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import modulefinder
import os
import platform
import shlex
import shutil
import sysconfig
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import triage_tui

from ..collect.executables import untrusted_reason

PACKAGE_DIR = os.path.dirname(os.path.abspath(triage_tui.__file__))
ZIP_NAME = "triage.zip"
PYSPY_NAME = "py-spy"
MIN_NODE_PYTHON = (3, 8)
# Modules the agent's import closure reaches that never run on the node (the client side of SSH).
_CLIENT_ONLY = ("triage_tui.host.ssh", "triage_tui.host.ssh_connect", "triage_tui.host.ssh_exec",
                "triage_tui.host.ssh_agent_client", "triage_tui.host.ssh_agentless",
                "triage_tui.host.ssh_agentless_stacks", "triage_tui.host.ssh_config", "triage_tui.host.ssh_node_dir",
                "triage_tui.host.ssh_agent_bundle", "triage_tui.ui", "triage_tui.commands")

# Runs on the node as `python3 -I -S -c BOOTSTRAP`. It makes its own private directory (mkdtemp: 0700),
# says where, then reads on stdin one header line "NAME SIZE ..." and each file's bytes, then the protocol.
# Whatever ends it (bye, EOF on stdin because the channel or the client went away, an error, SIGTERM,
# SIGHUP: sshd hangs up a session whose client vanished), the finally removes the directory; the signals
# are held while the directory is made, so none can land between mkdtemp and the try, and a handler that
# fires again inside the finally cannot stop the removal (it is retried with the signals held). A closed
# stdout is EPIPE, not a signal. The agent's channel watcher covers a request in flight.
BOOTSTRAP = (
    "import os,shutil,signal,sys,tempfile\n"
    "def _bye(*a):\n"
    "    raise SystemExit(0)\n"
    "g=(signal.SIGTERM,signal.SIGHUP,signal.SIGINT)\n"
    "for s in g:\n"
    "    signal.signal(s,_bye)\n"
    "signal.signal(signal.SIGPIPE,signal.SIG_IGN)\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK,g)\n"
    "d=tempfile.mkdtemp(prefix='triage-agent.')\n"
    "try:\n"
    "    signal.pthread_sigmask(signal.SIG_UNBLOCK,g)\n"
    "    os.chdir(d);os.environ['PATH']=d+os.pathsep+os.environ.get('PATH','')\n"
    "    sys.stdout.buffer.write(('dir='+d+'\\n').encode());sys.stdout.buffer.flush()\n"
    "    i=sys.stdin.buffer;h=i.readline().decode().split()\n"
    "    for n,z in zip(h[::2],h[1::2]):\n"
    "        if n not in ('" + ZIP_NAME + "','" + PYSPY_NAME + "'):\n"
    "            raise SystemExit('bad file name')\n"
    "        z=int(z);f=os.open(os.path.join(d,n),os.O_WRONLY|os.O_CREAT|os.O_EXCL,0o700)\n"
    "        while z>0:\n"
    "            b=i.read(min(z,1<<20))\n"
    "            if not b:\n"
    "                raise SystemExit('upload cut short')\n"
    "            os.write(f,b);z-=len(b)\n"
    "        os.close(f)\n"
    "    sys.path.insert(0,os.path.join(d,'" + ZIP_NAME + "'))\n"
    "    from triage_tui.host.agent import main\n"
    "    main(d,i)\n"
    "finally:\n"
    "    while 1:\n"
    "        try:\n"
    "            signal.pthread_sigmask(signal.SIG_BLOCK,g);shutil.rmtree(d,ignore_errors=True);break\n"
    "        except BaseException:\n"
    "            pass\n"
)


def agent_modules() -> tuple[str, ...]:
    """The triage_tui modules the agent can import (its static import closure, lazy imports included)."""
    finder = modulefinder.ModuleFinder(path=[os.path.dirname(PACKAGE_DIR)], excludes=list(_CLIENT_ONLY))
    finder.import_hook("triage_tui.host.agent")
    names = {n for n in finder.modules if n == "triage_tui" or n.startswith("triage_tui.")}
    return tuple(sorted(n for n in names if not n.startswith(_CLIENT_ONLY)))


def _module_file(name: str) -> tuple[str, str]:
    """(path here, path in the zip) for one module name."""
    rel = name.replace(".", os.sep)
    package = os.path.join(os.path.dirname(PACKAGE_DIR), rel, "__init__.py")
    if os.path.isfile(package):
        return package, os.path.join(rel, "__init__.py")
    return os.path.join(os.path.dirname(PACKAGE_DIR), rel + ".py"), rel + ".py"


@lru_cache(maxsize=1)
def build_zip() -> bytes:
    """The agent's modules as a zip: sources only, no ui/, no client-side SSH code, no caches."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in agent_modules():
            here, inside = _module_file(name)
            info = zipfile.ZipInfo(inside, date_time=(2020, 1, 1, 0, 0, 0))  # the same bytes every build
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(here, "rb") as f:
                zf.writestr(info, f.read())
        nvml = _local_pynvml()
        if nvml is not None:  # the pure-Python NVML binding: GPUs through NVML on a node without it installed
            info = zipfile.ZipInfo("pynvml.py", date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(nvml, "rb") as f:
                zf.writestr(info, f.read())
    return buffer.getvalue()


def _local_pynvml() -> Optional[str]:
    """nvidia-ml-py's pynvml.py as installed here, when we may trust it (it will be imported on the node)."""
    spec = importlib.util.find_spec("pynvml")
    path = spec.origin if spec is not None else None
    if not path or not path.endswith(".py") or untrusted_reason(path) is not None:
        return None
    return path


# The shell side of the privilege rule: `trusted PATH` prints PATH's canonical form when the file and
# every directory above it are owned by root or by us and writable by neither group nor others (a root-owned
# sticky directory such as /tmp excepted, as in collect.executables).
TRUSTED_FN = (
    "me=$(id -u); "
    "trusted() { r=$(readlink -f -- \"$1\" 2>/dev/null) || return 1; [ -f \"$r\" ] && [ -x \"$r\" ] || return 1; "
    "p=$r; while :; do s=$(stat -c '%u %a' -- \"$p\" 2>/dev/null) || return 1; "
    "u=${s%% *}; m=${s#* }; [ \"$u\" = 0 ] || [ \"$u\" = \"$me\" ] || return 1; "
    "[ $(( 0$m & 022 )) -eq 0 ] || {  [ \"$p\" != \"$r\" ] && [ \"$u\" = 0 ] && [ $(( 0$m & 01000 )) -ne 0 ]; } || return 1; "
    "[ \"$p\" = / ] && break; p=$(dirname -- \"$p\"); done; "
    "printf '%s\\n' \"$r\"; }; "
)


def probe_script() -> str:
    """One read-only shell script: report uid, arch, a py-spy and a Python we may run. Creates nothing.

    Candidates: python3 on the SSH user's PATH, then the usual system locations; each must pass `trusted`
    before it is run at all, and is run only as `-I -S` to check its version. A candidate that fails the
    ownership rule is reported as `skipped=` (said on screen), never run.
    """
    need = ", ".join(str(n) for n in MIN_NODE_PYTHON)
    return (
        TRUSTED_FN
        + "echo \"uid=$me\"; echo \"arch=$(uname -m)\"; "
        "s=$(command -v py-spy 2>/dev/null); if [ -n \"$s\" ]; then "
        "t=$(trusted \"$s\") && echo \"pyspy=$t\" || echo \"skipped=$s\"; fi; "
        "for c in \"$(command -v python3 2>/dev/null)\" /usr/bin/python3 /usr/local/bin/python3 /bin/python3; do "
        "[ -n \"$c\" ] && [ -e \"$c\" ] || continue; t=$(trusted \"$c\") || { echo \"skipped=$c\"; continue; }; "
        f"\"$t\" -I -S -c 'import sys; sys.exit(sys.version_info < ({need}))' </dev/null >/dev/null 2>&1 "
        "&& { echo \"python=$t\"; break; } || echo \"old=$t\"; done; true"
    )


@dataclass(frozen=True)
class ProbeResult:
    arch: str
    node_pyspy: str
    python: str = ""  # the interpreter the agent runs under; "" when none may be used
    skipped: tuple[str, ...] = ()  # candidates refused by the ownership rule (never run)
    too_old: tuple[str, ...] = ()

    def no_python_reason(self) -> str:
        parts = [f"no Python >= {'.'.join(map(str, MIN_NODE_PYTHON))} the SSH user may safely run"]
        if self.skipped:
            parts.append("refused as writable by another user: " + ", ".join(self.skipped))
        if self.too_old:
            parts.append("too old: " + ", ".join(self.too_old))
        return "; ".join(parts)


def parse_probe(text: str) -> ProbeResult:
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and value.strip():
            fields.setdefault(key, []).append(value.strip())
    if "arch" not in fields:
        raise ValueError("the probe printed nothing (no POSIX shell on the node?)")
    skipped = tuple(dict.fromkeys(fields.get("skipped", [])))
    return ProbeResult((fields.get("arch") or [""])[0], (fields.get("pyspy") or [""])[0],
                       (fields.get("python") or [""])[0], skipped, tuple(dict.fromkeys(fields.get("old", []))))


def local_pyspy_binary() -> Optional[str]:
    """The local py-spy executable itself (not a pyenv shim script, which would be useless on the node),
    and only one this user may trust (it is about to run as the SSH user on the node)."""
    for candidate in (shutil.which(PYSPY_NAME), os.path.join(sysconfig.get_path("scripts"), PYSPY_NAME)):
        if candidate and os.path.isfile(candidate) and untrusted_reason(candidate) is None:
            with open(candidate, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    return candidate
    return None


def pyspy_upload_plan(probe: ProbeResult) -> tuple[Optional[str], str]:
    """(local binary to upload or None, a note saying why). The node's own trusted py-spy wins.

    An uploaded py-spy lives in the connection's private directory and goes with it: it is never reused
    across connections (a copy left in a shared place could be swapped by another user)."""
    if probe.node_pyspy:
        return None, f"using the node's py-spy ({probe.node_pyspy})"
    local = local_pyspy_binary()
    if local is None:
        return None, "no py-spy on the node and none here to upload: stacks unavailable"
    if probe.arch != platform.machine():
        return None, f"no py-spy on the node; ours is {platform.machine()}, the node is {probe.arch}: not uploaded"
    return local, "py-spy uploaded to the connection's private directory"


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def agent_command(python: str) -> str:
    # no tty: the agent's stdin is the channel; EOF on it means the client is gone
    return f"exec {shlex.quote(python)} -I -S -c {shlex.quote(BOOTSTRAP)}"


def cleanup_command(private_dir: str, agent_pid: Optional[int] = None) -> str:
    """Client-side cleanup after the agent: remove the directory (and end our own agent if still there)."""
    # Only our agent: the PID's cwd must still be our private directory (a reused PID is left alone).
    kill = (f"[ \"$(readlink /proc/{int(agent_pid)}/cwd 2>/dev/null)\" = {shlex.quote(private_dir)} ] && "
            f"kill {int(agent_pid)}; ") if agent_pid else ""
    return f"{kill}rm -rf -- {shlex.quote(private_dir)}"

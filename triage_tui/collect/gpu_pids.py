"""Map the PIDs NVML and nvidia-smi report (the root PID namespace) to the PIDs our /proc shows.

Replaces reading `/proc/PID/status` NSpid lines by hand to find which container process a
GPU PID is. The kernel writes NSpid starting at the PID namespace of the procfs mount, so a
process's first NSpid entry is its /proc directory name, and its last entry is the PID it
sees for itself. NVML's PID is the one in the root namespace. So:

- our procfs belongs to the root namespace (kernel threads such as kthreadd are visible):
  NVML's PID P is the process whose first NSpid entry is P, i.e. /proc/P, when it exists;
- our procfs belongs to a nested namespace (a container with its own /proc): root PIDs are
  not visible at all, and a /proc/P there is a different process unless the driver already
  translated the PID. It is accepted only when that process has a /dev/nvidia* file open.
A PID that maps to nothing gives None: the GPU process is still listed, with no local PID.
"""

from __future__ import annotations

import os
from typing import Optional


def read_nspid(pid: int, proc_root: str = "/proc") -> tuple[int, ...]:
    """The NSpid line of /proc/PID/status ((): no such process or no NSpid line)."""
    try:
        with open(os.path.join(proc_root, str(pid), "status"), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return tuple(int(x) for x in line.split()[1:])
    except (OSError, ValueError):
        return ()
    return ()


def procfs_is_root_namespace(proc_root: str = "/proc") -> bool:
    """True when this procfs shows the root PID namespace (kthreadd, PID 2, is visible)."""
    try:
        with open(os.path.join(proc_root, "2", "stat"), encoding="utf-8", errors="replace") as f:
            return f.read().split(" ", 2)[1] == "(kthreadd)"
    except (OSError, IndexError):
        return False


def holds_nvidia_device(pid: int, proc_root: str = "/proc") -> bool:
    """True when the process has a /dev/nvidia* file open (it really is a GPU process)."""
    fd_dir = os.path.join(proc_root, str(pid), "fd")
    try:
        names = os.listdir(fd_dir)
    except OSError:
        return False
    for name in names:
        try:
            if os.readlink(os.path.join(fd_dir, name)).startswith("/dev/nvidia"):
                return True
        except OSError:
            continue
    return False


class GpuPidMapper:
    """Maps root-namespace PIDs to the PIDs of our /proc; one instance per poll (it caches)."""

    def __init__(self, proc_root: str = "/proc") -> None:
        self.proc_root = proc_root
        self.root_namespace = procfs_is_root_namespace(proc_root)
        self._cache: dict[int, Optional[int]] = {}

    def local_pid(self, host_pid: int) -> Optional[int]:
        if host_pid not in self._cache:
            self._cache[host_pid] = self._map(host_pid)
        return self._cache[host_pid]

    def _map(self, host_pid: int) -> Optional[int]:
        if host_pid <= 0:
            return None
        nspid = read_nspid(host_pid, self.proc_root)
        if not nspid:
            # an old kernel without NSpid still has the directory: trust it in the root namespace
            exists = os.path.isdir(os.path.join(self.proc_root, str(host_pid)))
            return host_pid if exists and self.root_namespace else None
        if nspid[0] != host_pid:  # cannot happen for a sane procfs; refuse rather than guess
            return None
        if self.root_namespace:
            return host_pid
        return host_pid if holds_nvidia_device(host_pid, self.proc_root) else None

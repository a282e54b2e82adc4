"""What each blocked thread of the target waits on, as the kernel shows it (raw collector data).

One `Wait` per blocked thread (threads of one process waiting on the same thing are one item with a
count). `peer_pids` are the processes that would have to act for the wait to end: the holders of a
pipe's write end, a unix socket's peer, the process behind a local TCP address, the child of a wait4,
the other processes mapping a shared futex. The wait-for graph is built from these by the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .unavailable import Unavailable

# The kinds a wait can be (docs/report-schema.md): what the thread is blocked on.
WAIT_KINDS = ("pipe", "unix", "tcp", "udp", "child", "futex", "file", "epoll", "eventfd", "sleep", "running",
              "unknown")

NETWORK_FS = ("nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "lustre", "9p", "afs", "beegfs",
              "gpfs", "orangefs", "ocfs2", "gfs2", "davfs", "virtiofs")


def is_network_fs(fs_type: str) -> bool:
    """nfs, cifs, ceph, … and every FUSE filesystem (sshfs, s3fs, gcsfuse: a daemon answers each read)."""
    return fs_type in NETWORK_FS or fs_type.startswith("fuse")


@dataclass(frozen=True)
class Wait:
    """One thread (or `threads` threads of one process) blocked on one object."""

    pid: int
    tid: int
    kind: str  # one of WAIT_KINDS
    object: str  # "pipe:[88122]", "127.0.0.1:41234 → 127.0.0.1:29500", "child PID 12", "/dev/shm/sem.x+0x40"
    peer_pids: tuple[int, ...] = ()  # who has to act for the wait to end; empty when none is known
    detail: str = ""  # one line a person reads: "write end held by PID 12 (fd 4)"
    syscall: str = ""  # "read", "futex", "wait4", ... as /proc/PID/task/TID/syscall says
    state: str = ""  # the thread's kernel state letter: S, D, R
    threads: int = 1  # threads of this process waiting on the same object
    fd: Optional[int] = None  # the fd waited on (the first, for poll/select/epoll)
    address: str = ""  # tcp/udp: the remote address "HOST:PORT" waited on
    socket_state: str = ""  # tcp: ESTABLISHED, SYN_SENT, CLOSE_WAIT, ...
    not_accepted: bool = False  # tcp: the connection sits in the listener's accept queue
    peer_outside: tuple[int, ...] = ()  # peer_pids that are not processes of the target
    peers_more: int = 0  # peers left out of peer_pids (it keeps the first MAX_PEERS): fork-inherited ends
    path: str = ""  # file: the path read; futex: the shared file mapped
    fs_type: str = ""  # file: the filesystem type of `path` (nfs, fuse.sshfs, ext4, ...)
    shared_key: str = ""  # futex on a shared mapping: "dev:inode+offset", the same for every process
    kernel_stack: tuple[str, ...] = ()  # D state: the kernel stack where readable (root)
    error: Optional[Unavailable] = None  # why this thread's wait could not be read (permission, ...)


@dataclass(frozen=True)
class WaitSource:
    """How the waits of one refresh were read: threads looked at, cost, and what could not be read."""

    blocked_threads: int = 0  # threads in S or D state looked at
    duration_ms: float = 0.0
    error: Optional[Unavailable] = None  # the whole source: not collected, not supported here

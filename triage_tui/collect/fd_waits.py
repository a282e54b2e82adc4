"""What a waited-on fd is, and who holds its other end.

A pipe's other end (`ls -l /proc/*/fd | grep pipe:[N]`, fdinfo's flags for the direction), a unix socket's peer
(`ss -xpn`), a TCP connection's server side or the accept queue it sits in (`ss -tanp`), a file with its offset and
filesystem (fdinfo's `pos:`, mountinfo), an eventfd or a timer. Nothing is attached to: every fact is a /proc file
or a netlink dump already read for this refresh (wait_reads.WaitReads).

Standard library only and Python 3.8-compatible: the SSH agent ships this module to the node.
"""

from __future__ import annotations

import os
import stat as stat_module
from collections.abc import Sequence
from typing import NamedTuple, Optional

from .socket_table import SocketEnd
from .wait_reads import FdHolder, WaitReads

WRITES = frozenset({"write", "writev", "pwrite64", "sendto", "sendmsg", "sendfile", "splice"})


class WaitTarget(NamedTuple):
    """One fd as a wait: kind, object, peers, detail and the TCP facts the engine reads."""

    kind: str
    object: str
    peers: tuple[int, ...] = ()
    detail: str = ""
    address: str = ""
    socket_state: str = ""
    not_accepted: bool = False
    path: str = ""
    fs_type: str = ""



def holders_text(refresh: WaitReads, holders: Sequence[FdHolder], end: str) -> str:
    by_pid: dict[int, list[int]] = {}
    for h in holders:
        by_pid.setdefault(h.pid, []).append(h.fd)
    parts = [f"{refresh.who(pid)} fd {', '.join(str(f) for f in fds[:4])}" for pid, fds in list(by_pid.items())[:6]]
    more = f" and {len(by_pid) - 6} more processes" if len(by_pid) > 6 else ""
    return f"{end} held by " + "; ".join(parts) + more


def _pipe(refresh: WaitReads, pid: int, fd: int, link: str, writing: bool) -> WaitTarget:
    """A pipe (or FIFO): the reader waits on the holders of the write end, a writer on the readers."""
    readers, writers = refresh.pipe_ends(link)
    ends = readers if writing else writers
    if not [h for h in ends if h.pid != pid]:
        refresh.scan_outside()
        readers, writers = refresh.pipe_ends(link)
        ends = readers if writing else writers
    ends = [h for h in ends if (h.pid, h.fd) != (pid, fd)]
    end = "read end" if writing else "write end"
    others = [h for h in ends if h.pid != pid]
    own = [h for h in ends if h.pid == pid]
    peers = tuple(sorted({h.pid for h in others}))
    if others:
        detail = holders_text(refresh, others, end)
        if own:
            detail += f"; this process holds the {end} too (fd {', '.join(str(h.fd) for h in own)})"
    elif own:
        detail = (f"the only {end} is this process's own fd {', '.join(str(h.fd) for h in own)}: "
                  f"{'nobody will read' if writing else 'no EOF will come and no one else writes'}")
    else:
        detail = f"no {end} is open in any process readable here"
    verb = "writes" if writing else "reads"
    return WaitTarget("pipe", link, peers, f"{verb} {link}: {detail}")


def _socket(refresh: WaitReads, pid: int, fd: int, link: str, accepting: bool) -> WaitTarget:
    try:
        inode = int(link[len("socket:["):-1])
    except ValueError:
        return WaitTarget("unknown", link)
    end = refresh.sockets.find(inode)
    if end is None:
        why = refresh.sockets.error or "not in this network namespace's socket tables (netlink, TCP, UDP, unix)"
        return WaitTarget("unknown", link, detail=f"{link}: {why}")
    if end.proto == "unix":
        return _unix(refresh, pid, link, end, accepting)
    return _inet(refresh, pid, link, end, accepting)


def _unix(refresh: WaitReads, pid: int, link: str, end: SocketEnd, accepting: bool) -> WaitTarget:
    name = f" {end.local}" if end.local else ""
    if end.state == "LISTEN" or accepting:
        return WaitTarget("unix", f"{link}{name}",
                         detail=f"accepts connections on unix {end.kind}{name or ' ' + link} (waits on clients)")
    if not end.peer_inode:
        return WaitTarget("unix", f"{link}{name}", detail=f"unix {end.kind}{name} with no peer (unconnected)")
    peer_link = f"socket:[{end.peer_inode}]"
    holders = refresh.owners(peer_link)
    if not holders:
        refresh.scan_outside()
        holders = refresh.owners(peer_link)
    others = [h for h in holders if h.pid != pid]
    peers = tuple(sorted({h.pid for h in others}))
    queued = f", {end.rqueue} bytes unread" if end.rqueue else ""
    if others:
        detail = f"unix {end.kind}{name}: peer {peer_link} " + holders_text(refresh, others, "")[1:]
    elif holders:
        detail = f"unix {end.kind}{name}: the peer {peer_link} is held by this process itself"
    else:
        detail = f"unix {end.kind}{name}: the peer {peer_link} is held by no process readable here"
    return WaitTarget("unix", f"{link}{name}", peers, detail + queued)


def _is_loopback(address: str) -> bool:
    host = address.rpartition(":")[0]
    return host.startswith("127.") or host == "[::1]"


def _inet(refresh: WaitReads, pid: int, link: str, end: SocketEnd, accepting: bool) -> WaitTarget:
    if end.state == "LISTEN" or accepting:
        queued = f", {end.rqueue} waiting to be accepted" if end.rqueue else ""
        return WaitTarget(end.proto, f"{end.proto} {end.local}",
                         detail=f"accepts connections on {end.local} (waits on clients{queued})",
                         socket_state=end.state)
    what = f"{end.proto} {end.local} → {end.remote}"
    queues = f" (recv-q {end.rqueue}, send-q {end.wqueue})" if end.rqueue or end.wqueue else ""
    if end.proto == "udp" and end.remote.endswith(":0"):
        return WaitTarget("udp", f"udp {end.local}", detail=f"udp {end.local}: datagrams from anyone{queues}",
                         socket_state=end.state)
    server = refresh.sockets.server_side(end) if end.proto == "tcp" else None
    if server is not None and server.inode == 0 and server.state in ("ESTABLISHED", "SYN_RECV"):
        listener = refresh.sockets.listener(end.remote)
        owners = refresh.owners(f"socket:[{listener.inode}]") if listener is not None else []
        if listener is not None and not owners:
            refresh.scan_outside()
            owners = refresh.owners(f"socket:[{listener.inode}]")
        peers = tuple(sorted({h.pid for h in owners}))
        who = ", ".join(refresh.who(p) for p in peers) or "a process not readable here"
        return WaitTarget("tcp", what, peers,
                         f"{what}: the connection sits in the accept queue of the listener on {end.remote} "
                         f"({who}), which never accepted it{queues}",
                         address=end.remote, socket_state=end.state, not_accepted=True)
    if server is not None and server.inode:
        owners = refresh.owners(f"socket:[{server.inode}]")
        if not owners:
            refresh.scan_outside()
            owners = refresh.owners(f"socket:[{server.inode}]")
        peers = tuple(sorted({h.pid for h in owners if h.pid != pid}))
        who = ", ".join(refresh.who(p) for p in peers) or "no process readable here"
        state = f" [{end.state}]" if end.state != "ESTABLISHED" else ""
        return WaitTarget(end.proto, what, peers, f"{what}{state}: the other end is held by {who}{queues}",
                         address=end.remote, socket_state=end.state)
    where = "on this machine, other end not found" if _is_loopback(end.remote) else "remote"
    state = {"SYN_SENT": ": connecting, no answer yet", "CLOSE_WAIT": ": the peer closed its end"}.get(end.state, "")
    return WaitTarget(end.proto, what, (), f"{what} ({where}){state}{queues}", address=end.remote,
                     socket_state=end.state)


def _file(refresh: WaitReads, pid: int, fd: int, link: str) -> WaitTarget:
    pos = ""
    for line in refresh.fdinfo(pid, fd).splitlines():
        if line.startswith("pos:"):
            pos = line.split()[1]
            break
    fs = refresh.fs_type(pid, link) if link.startswith("/") else ""
    at = f" at offset {pos}" if pos else ""
    on = f" on {fs}" if fs else ""
    return WaitTarget("file", link, (), f"{link}{at}{on}", path=link, fs_type=fs)


def _eventfd(refresh: WaitReads, pid: int, fd: int) -> WaitTarget:
    """An eventfd is written by whoever shares it: other processes of the tree holding the same one (by
    fdinfo's eventfd-id), else a thread of this process."""
    holders = refresh.eventfd_holders(pid, fd)
    if holders is None:
        return WaitTarget("eventfd", f"eventfd (fd {fd})",
                          detail="eventfd: woken by whoever shares it (a thread, or a process it was passed to; "
                                 "this kernel gives no eventfd-id to tell which)")
    ident = refresh.eventfd_id(pid, fd)
    others = [h for h in holders if h.pid != pid]
    peers = tuple(sorted({h.pid for h in others}))
    if others:
        detail = f"eventfd {ident}: also {holders_text(refresh, others, '')[1:]}"
    else:
        detail = f"eventfd {ident}: held by this process only (one of its own threads would write it)"
    return WaitTarget("eventfd", f"eventfd {ident} (fd {fd})", peers, detail)


def resolve_fd(refresh: WaitReads, pid: int, fd: int, syscall: str) -> Optional[WaitTarget]:
    """What `fd` of `pid` is, as a wait; None when it closed meanwhile."""
    link = refresh.links(pid).get(fd)
    if link is None:
        try:
            link = os.readlink(f"{refresh.proc}/{pid}/fd/{fd}")
        except OSError:
            return None
    writing = syscall in WRITES
    if link.startswith("pipe:"):
        return _pipe(refresh, pid, fd, link, writing)
    if link.startswith("socket:"):
        return _socket(refresh, pid, fd, link, syscall in ("accept", "accept4"))
    if link.startswith("anon_inode:"):
        what = link[len("anon_inode:"):].strip("[]")
        if what == "eventfd":
            return _eventfd(refresh, pid, fd)
        if what == "eventpoll":
            return WaitTarget("epoll", f"epoll (fd {fd})")
        if what == "timerfd":
            return WaitTarget("sleep", f"timerfd (fd {fd})", detail="a timer")
        if what == "signalfd":
            return WaitTarget("unknown", f"signalfd (fd {fd})", detail="waits for a signal")
        return WaitTarget("unknown", link)
    if link.startswith("/"):
        try:
            if stat_module.S_ISFIFO(os.stat(f"{refresh.proc}/{pid}/fd/{fd}").st_mode):
                return _pipe(refresh, pid, fd, link, writing)
        except OSError:
            return None
        return _file(refresh, pid, fd, link)
    return WaitTarget("unknown", link)


def merge_fds(refresh: WaitReads, pid: int, fds: Sequence[int], syscall: str, kind: str) -> Optional[WaitTarget]:
    """A wait on several fds (poll, select, epoll): the peers of all, the TCP facts of the first."""
    parts: list[tuple[int, WaitTarget]] = []
    for fd in fds:
        got = resolve_fd(refresh, pid, fd, "read")
        if got is not None:
            parts.append((fd, got))
    if not parts:
        return None
    if len(parts) == 1 and kind != "epoll":
        return parts[0][1]
    peers = tuple(sorted({p for _, r in parts for p in r.peers}))
    first_net = next((r for _, r in parts if r.address), None)
    objects = ", ".join(f"fd {fd} {r.object}" for fd, r in parts[:6]) + (" …" if len(parts) > 6 else "")
    details = "; ".join(r.detail for _, r in parts if r.detail)
    main = kind if kind == "epoll" else next((r.kind for _, r in parts if r.peers or r.address), parts[0][1].kind)
    return WaitTarget(main, f"{syscall} on {len(parts)} fds: {objects}", peers, details,
                     address=first_net.address if first_net else "",
                     socket_state=first_net.socket_state if first_net else "",
                     not_accepted=any(r.not_accepted for _, r in parts))

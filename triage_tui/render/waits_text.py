"""The wait-for graph as one line per process, for every face (Markdown report, the Stacks pane):

  PID 1234 (rank3) → reads pipe:[88122] ← write end held by PID 1200 (launcher: itself waits for any child)

A process in a cycle is marked; the peers' own waits follow each peer, so a line reads as the chain.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Optional

from ..model.snapshot import Snapshot
from ..model.unavailable import Unavailable
from ..model.waits import Wait

_VERBS = {"pipe": "reads", "unix": "reads", "tcp": "reads", "udp": "reads", "child": "waits for",
          "futex": "waits on", "file": "reads", "epoll": "polls", "eventfd": "waits on", "sleep": "sleeps in",
          "running": "is", "unknown": "is in"}
_BORING = ("sleep", "running")


class WaitLine(NamedTuple):
    pid: int
    text: str
    mark: str  # "cycle" | "hub" | "network" | "" (how a face may highlight it)


def by_process(waits: Sequence[Wait]) -> dict[int, list[Wait]]:
    out: dict[int, list[Wait]] = {}
    for w in waits:
        out.setdefault(w.pid, []).append(w)
    return out


def main_wait(waits: Sequence[Wait], pid: int, index: Optional[dict[int, list[Wait]]] = None) -> Optional[Wait]:
    """The wait that says most about `pid`: the main thread's, unless it only sleeps, runs, or sits
    on an in-process lock while another thread waits on someone."""
    own = (index if index is not None else by_process(waits)).get(pid, [])
    if not own:
        return None
    main = next((w for w in own if w.tid == pid), own[0])
    if main.peer_pids or main.address:
        return main
    better = next((w for w in own if w.peer_pids or w.address), None)
    return better or main


def _short(wait: Optional[Wait]) -> str:
    if wait is None:
        return "no wait read"
    if wait.kind == "running":
        return "running"
    if wait.kind == "sleep":
        return "sleeping"
    verb = _VERBS.get(wait.kind, "waits on")
    if wait.kind == "child":
        return f"itself waits for {wait.object}"
    return f"itself {verb} {wait.object}"


def _peer_label(wait: Wait) -> str:
    if wait.kind == "pipe":
        return "read end held by " if wait.syscall in ("write", "writev") else "write end held by "
    if wait.not_accepted:
        return "never accepted by the listener "
    if wait.kind in ("unix", "tcp", "udp"):
        return "other end held by "
    if wait.kind == "futex":
        return "shared with "
    return ""


def wait_lines(snapshot: Snapshot) -> list[WaitLine]:
    """One line per process of the tree that has a wait, in tree order; cycles first."""
    waits = snapshot.waits
    from ..diagnose.wait_graph import deadlocks, hub  # with the engine's vocabulary: not before the app's first frame

    cycles = deadlocks(snapshot) if waits else []
    in_cycle = {pid for members in cycles for pid in members}
    center = hub(snapshot) if waits else None
    names = {p.pid: p.name for p in snapshot.processes}
    index = by_process(waits)
    out: list[WaitLine] = []
    for members in cycles:
        out.append(WaitLine(members[0], "CYCLE: PIDs " + ", ".join(str(m) for m in members)
                            + " wait on each other; nobody outside the cycle can end it", "cycle"))
    for p in snapshot.processes:
        if p.exited:
            continue
        wait = main_wait(waits, p.pid, index)
        if wait is None:
            continue
        head = f"PID {p.pid} ({p.name})"
        if wait.error is not None:
            out.append(WaitLine(p.pid, f"{head}: {wait.error}", ""))
            continue
        count = len(index.get(p.pid, ()))
        extra = f" [+{count - 1} more waits]" if count > 1 else ""
        if wait.kind in _BORING:
            out.append(WaitLine(p.pid, f"{head} → {_VERBS[wait.kind]} {wait.object}{extra}", ""))
            continue
        text = f"{head} → {_VERBS.get(wait.kind, 'waits on')} {wait.object}"
        if wait.peer_pids:
            peers = []
            for peer in wait.peer_pids[:6]:
                name = names.get(peer, "outside the target" if peer in wait.peer_outside else "?")
                peers.append(f"PID {peer} ({name}: {_short(main_wait(waits, peer, index))})")
            left = len(wait.peer_pids) - 6 + wait.peers_more
            more = f" and {left} more" if left > 0 else ""
            text += " ← " + _peer_label(wait) + "; ".join(peers) + more
        elif wait.detail:
            text += f": {wait.detail}"
        mark = "cycle" if p.pid in in_cycle else "hub" if center is not None and center in wait.peer_pids else (
            "network" if wait.address and (wait.not_accepted or not wait.peer_pids) else "")
        out.append(WaitLine(p.pid, text + extra, mark))
    return out


def waits_unavailable(snapshot: Snapshot) -> Optional[Unavailable]:
    """Why there are no waits to show, when the source says so."""
    return snapshot.waits_source.error if not snapshot.waits else None

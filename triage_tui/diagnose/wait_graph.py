"""The wait-for graph of the tree ("A waits on B") from the raw waits, and what it says.

Pure: reads `Snapshot.waits` (collect/waits.py) and the history, never the machine. The graph's
nodes are the tree's live processes; an edge A → B means some blocked thread of A waits on B (holds
the other end of its pipe or socket, is the child it waits for, maps the shared futex and is not
itself waiting on the same word). Facts drawn from it:
- a cycle no member of which waits on anyone outside it (a knot: nobody left to act) → deadlock;
- every waiting process waiting on one process that itself waits on nothing of the tree → the hub;
- a wait on a peer that has exited since it was first seen → a crashed worker;
- a TCP connection still in a listener's accept queue, or to an address outside the tree → network
  (rendezvous when a command line of the tree announces that port, an upstream otherwise);
- a D-state read of a file on a network filesystem → I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Optional

from ..model.diagnosis import Observation
from ..model.snapshot import ExitedProcess, ProcessInfo, Snapshot
from ..model.waits import Wait, is_network_fs
from .figures import fmt_s
from .same_rows import kept_for
from .vocabulary import register

NOT_EDGES = frozenset({"sleep", "running", "unknown"})


def _obs(oid: str, text: str, at: float, pids: Sequence[int], **figures: object) -> Observation:
    clean = {k: v for k, v in figures.items() if isinstance(v, (int, float, str))}
    return Observation(id=register(oid), text=text, source="waits", at=at, figures=clean, pids=tuple(pids))


def edges(snapshot: Snapshot) -> dict[int, dict[int, Wait]]:
    """A → {B: the wait of A that points at B}, between live processes of the tree (worked out once for the
    same tuples of waits and rows: asked three times a tick, and a quiet tree's are last tick's)."""
    return kept_for("wait-edges", (snapshot.waits, snapshot.processes), lambda: _edges(snapshot))


def _edges(snapshot: Snapshot) -> dict[int, dict[int, Wait]]:
    live = {p.pid for p in snapshot.processes if not p.exited}
    co_waiters: dict[str, set[int]] = {}
    for w in snapshot.waits:
        if w.shared_key:
            co_waiters.setdefault(w.shared_key, set()).add(w.pid)
    out: dict[int, dict[int, Wait]] = {}
    for w in snapshot.waits:
        if w.kind in NOT_EDGES or w.pid not in live:
            continue
        skip = co_waiters.get(w.shared_key, set()) if w.shared_key else set()
        for peer in w.peer_pids:
            if peer != w.pid and peer in live and peer not in skip:
                out.setdefault(w.pid, {}).setdefault(peer, w)
    return out


def _components(graph: Mapping[int, Mapping[int, Wait]]) -> list[list[int]]:
    """Strongly connected components (Tarjan, iterative: a tree of thousands must not recurse)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    found: list[list[int]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, {}))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, {})))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    members.append(top)
                    if top == node:
                        break
                found.append(sorted(members))
    return found


def deadlocks(snapshot: Snapshot) -> list[list[int]]:
    """Cycles of two or more processes none of which waits on anyone outside the cycle, nor runs."""
    graph = edges(snapshot)
    running = {w.pid for w in snapshot.waits if w.kind == "running" and w.tid == w.pid}
    outside_waits = {w.pid for w in snapshot.waits if w.peer_outside or w.peers_more}  # a cut list: not a knot
    out = []
    for members in _components(graph):
        if len(members) < 2:
            continue
        inside = set(members)
        if any(m in running or m in outside_waits for m in members):
            continue
        if all(set(graph.get(m, {})) <= inside for m in members):
            out.append(members)
    return out


def _name(snapshot: Snapshot, pid: int) -> str:
    row = snapshot.process(pid)
    return f"PID {pid} ({row.name})" if row is not None else f"PID {pid}"


def cycle_text(snapshot: Snapshot, members: Sequence[int]) -> str:
    """"PID 12 (a) reads pipe:[5] ← PID 13 (b); PID 13 (b) reads pipe:[6] ← PID 12 (a)"."""
    graph = edges(snapshot)
    inside = set(members)
    parts = []
    for m in members:
        targets = [(peer, w) for peer, w in sorted(graph.get(m, {}).items()) if peer in inside]
        if targets:
            peer, w = targets[0]
            who = ", ".join(_name(snapshot, p) for p, _ in targets)
            verb = {"read": "reads", "write": "writes", "wait4": "waits for", "waitid": "waits for"}.get(w.syscall, "waits on")
            parts.append(f"{_name(snapshot, m)} {verb} {w.object} ← {who}")
    return "; ".join(parts)


def hub(snapshot: Snapshot) -> Optional[int]:
    """The one process every waiting process (two or more) waits on, itself waiting on nothing of the tree."""
    graph = edges(snapshot)
    waiting = [pid for pid, targets in graph.items() if targets]
    candidates: Optional[set[int]] = None
    for pid in waiting:
        targets = set(graph[pid])
        candidates = targets if candidates is None else candidates & targets
    if not candidates:
        return None
    free = [c for c in candidates if not set(graph.get(c, {})) - {c}]
    if len(free) != 1 or len([p for p in waiting if p != free[0]]) < 2:
        return None
    return free[0]


def _doing(snapshot: Snapshot, pid: int) -> str:
    main = next((w for w in snapshot.waits if w.pid == pid and w.tid == pid), None)
    if main is None:
        row = snapshot.process(pid)
        return f"state {row.state}" if row is not None else "not seen"
    if main.kind == "running":
        return "it is running"
    if main.kind == "sleep":
        return f"it sleeps ({main.syscall})"
    return f"it is in {main.syscall or main.kind} on {main.object}"


def first_seen(history: Sequence[Snapshot], wait: Wait) -> float:
    """When this same wait (process, thread, object) was first seen in the history, unbroken to now."""
    since = history[-1].taken_at
    for snap in reversed(history[:-1]):
        if not any(w.pid == wait.pid and w.tid == wait.tid and w.object == wait.object for w in snap.waits):
            break
        since = snap.taken_at
    return since


def _waited(history: Sequence[Snapshot], wait: Wait) -> tuple[float, str]:
    seconds = history[-1].taken_at - first_seen(history, wait)
    return seconds, (f"≥ {fmt_s(seconds)} (since triage first saw it)" if seconds > 0 else "since the first look")


def wait_observations(history: Sequence[Snapshot]) -> list[Observation]:
    """The graph's facts about the newest snapshot (its history says how long and who has left)."""
    if not history or not history[-1].waits:
        return []
    snap = history[-1]
    at = snap.taken_at
    out: list[Observation] = []
    cycles, center = kept_for("wait-graph", (snap.waits, snap.processes), lambda: (deadlocks(snap), hub(snap)))
    for members in cycles[:1]:
        pids = ", ".join(str(m) for m in members)
        text = f"wait cycle between PIDs {pids}: {cycle_text(snap, members)} (nobody outside the cycle can end it)"
        out.append(_obs("wait-cycle", text, at, members, wait_cycle=f"PIDs {pids} wait on each other — "
                        + cycle_text(snap, members), cycle_pids=pids))
    if center is not None:
        waiters = sorted(p for p, t in edges(snap).items() if center in t and p != center)
        doing = _doing(snap, center)
        text = (f"{len(waiters)} processes (PIDs {', '.join(str(p) for p in waiters)}) wait on {_name(snap, center)}, which waits on nothing of the tree "
                f"({doing})")
        out.append(_obs("wait-hub", text, at, [center, *waiters], hub_pid=center, hub_name=_name(snap, center),
                        hub_doing=doing))
    out += _exited_peers(history)
    out += _network(history)
    out += _netfs(snap)
    return out


def _exited_peers(history: Sequence[Snapshot]) -> list[Observation]:
    """A wait that still stands on an object it shared with a process that has exited since: the
    waits of the last snapshot in which that process was alive name it among their peers."""
    snap = history[-1]
    live, names, gone = kept_for("wait-gone", (snap.processes, snap.exited), lambda: _gone(snap))
    if not gone:
        return []
    now = {(w.pid, w.tid, w.object): w for w in snap.waits if w.kind not in NOT_EDGES}
    for w in now.values():  # a zombie peer, right now
        dead = sorted(set(w.peer_pids) & gone)
        if dead:
            return [_exited(snap, w, dead[0], names.get(dead[0], ""))]
    unresolved = set(gone)
    for old in reversed(history[:-1]):
        present = {pid for pid in unresolved if (row := old.process(pid)) is not None and not row.exited
                   and row.state not in ("Z", "X")}
        for w in old.waits:
            current = now.get((w.pid, w.tid, w.object))
            dead = sorted(set(w.peer_pids) & present)
            if current is not None and dead:
                return [_exited(snap, current, dead[0], names.get(dead[0], ""))]
        unresolved -= present
        if not unresolved:
            break
    return []


def _gone(snap: Snapshot) -> tuple[set[int], dict[int, str], set[int]]:
    """The live PIDs, the names of the others (exited, zombies), and those that are gone: from the rows and the
    exits alone, so worked out once for the same ones (a quiet tree's rows are last tick's tuple)."""
    live = {p.pid for p in snap.processes if not p.exited and p.state not in ("Z", "X")}
    names = {e.pid: e.name for e in snap.exited}
    names.update({p.pid: p.name for p in snap.processes if p.pid not in live})
    return live, names, set(names) - live


def _exited(snap: Snapshot, w: Wait, dead: int, name: str) -> Observation:
    text = f"PID {w.pid} still waits on {w.object}, shared with PID {dead} ({name}), which exited"
    return _obs("wait-on-exited", text, snap.taken_at, [dead, w.pid], exited_pid=dead, exited_name=name,
                exited_waiter=w.pid, exited_object=w.object)


def _network(history: Sequence[Snapshot]) -> list[Observation]:
    snap = history[-1]
    out: list[Observation] = []
    not_accepted, addressed = kept_for("wait-network", (snap.waits,), lambda: (
        [w for w in snap.waits if w.not_accepted],
        [w for w in snap.waits if w.kind in ("tcp", "udp", "epoll", "pipe", "unix") and w.address
         and not w.not_accepted and w.socket_state != "LISTEN"]))
    if not_accepted:
        w = not_accepted[0]
        seconds, waited = _waited(history, w)
        listener = ", ".join(str(p) for p in w.peer_pids) or "?"
        text = (f"PID {w.pid} blocked {waited} reading {w.object}: the connection sits in the accept queue of "
                f"{listener} listening on {w.address}, which never accepted it")
        out.append(_obs("wait-not-accepted", text, snap.taken_at, [w.pid, *w.peer_pids], net_address=w.address,
                        listener_pid=listener, net_waited=waited, net_waited_s=round(seconds, 1)))
    tree = {p.pid for p in snap.processes if not p.exited} if addressed else set()
    upstream = [w for w in addressed if not (set(w.peer_pids) & tree)]
    if upstream:
        by_address: dict[str, list[Wait]] = {}
        for w in upstream:
            by_address.setdefault(w.address, []).append(w)
        address, waits = max(by_address.items(), key=lambda kv: len(kv[1]))
        seconds, waited = _waited(history, waits[0])
        pids = sorted({w.pid for w in waits})
        who = f"{len(pids)} processes" if len(pids) > 1 else f"PID {pids[0]}"
        outside = ", ".join(f"PID {p}" for p in waits[0].peer_pids)
        where = f"held by {outside} outside the target" if outside else "not on this machine"
        announced = announced_by(snap, address)
        if announced:
            text = (f"{who} blocked {waited} reading a connection to {address} ({where}), the rendezvous address "
                    f"the command line announces ({announced})")
            out.append(_obs("wait-rendezvous", text, snap.taken_at, pids, net_address=address, net_waiters=who,
                            net_waited=waited, net_waited_s=round(seconds, 1)))
        else:
            text = (f"{who} blocked {waited} reading a connection to {address} ({where}): an upstream that does "
                    "not answer")
            out.append(_obs("wait-upstream", text, snap.taken_at, pids, net_address=address, net_waiters=who,
                            net_waited=waited, net_waited_s=round(seconds, 1)))
    return out


# a word that names a rendezvous or master address, not inside another word ("import" is no "port")
_RENDEZVOUS_WORDS = re.compile(r"(?<![a-z])(port|addr|address|endpoint|init_method|init-method|master|rdzv|store)"
                               r"(?![a-z])|tcp://", re.IGNORECASE)


def announced_by(snapshot: Snapshot, address: str) -> str:
    """The command-line argument of a tree process that names `address`'s port as a rendezvous or master
    address (`--master-port 29500`, `--dist-init-addr h:29500`, `init_method=tcp://h:29500`); "" if none."""
    port = address.rpartition(":")[2]
    if not port.isdecimal():
        return ""
    pattern = re.compile(rf"(?<![0-9]){port}(?![0-9])")
    for p in snapshot.processes:
        args = p.cmdline
        for i, arg in enumerate(args):
            if len(arg) > 200 or not pattern.search(arg):
                continue  # a long argument is a program text (python -c), not an address
            context = (args[i - 1] if i and len(args[i - 1]) <= 200 else "") + " " + arg
            if _RENDEZVOUS_WORDS.search(context.replace("_", "-").replace("-", " ")):
                return " ".join(a for a in args[max(0, i - 1):i + 1])
    return ""


def _netfs(snap: Snapshot) -> list[Observation]:
    w = kept_for("wait-netfs", (snap.waits,), lambda: next(
        (w for w in snap.waits if w.state == "D" and w.kind == "file" and w.fs_type and is_network_fs(w.fs_type)), None))
    if w is None:
        return []
    text = f"PID {w.pid} in D state on {w.path} ({w.fs_type}, a network filesystem)"
    return [_obs("wait-netfs-io", text, snap.taken_at, [w.pid], io_pid=w.pid, io_path=w.path, io_fs=w.fs_type)]

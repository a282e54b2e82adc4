"""Observations from the machine's resources: ports, GPUs, memory (the RSS illusion, real pressure), kernel."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..model.diagnosis import Observation
from ..model.snapshot import Snapshot
from ..model.unavailable import is_known
from .figures import fmt_bytes, fmt_s, quote
from .gpu_history import GpuHistory
from .roles import replacements
from .thresholds import Thresholds
from .vocabulary import register

GPU_LOOKS = 10  # the GPU facts look this many snapshots back


def _obs(oid: str, text: str, source: str, at: float, pids: Sequence[int] = (), **figures: object) -> Observation:
    clean = {k: v for k, v in figures.items() if isinstance(v, (int, float, str))}
    return Observation(id=register(oid), text=text, source=source, at=at, figures=clean, pids=tuple(pids))


def _answered(p) -> bool:
    """A reply to a request: our HTTP probe's, or a pasted curl's `HTTP/1.1 200` line."""
    return p.result == "answered" or (p.result == "accepted" and p.detail.startswith("HTTP "))


def port_observations(history: Sequence[Snapshot]) -> list[Observation]:
    """Per port: answered (a reply to a request), accepts but does not answer, accepts (connect only: a
    store or a pasted probe), refused. A store port's state is shown but is no evidence of a server."""
    now = history[-1]
    out: list[Observation] = []
    by_port: dict[int, list] = {}
    for p in now.ports.probes:
        by_port.setdefault(p.port, []).append(p)
    for port, probes in by_port.items():
        where = ", ".join(f"{p.address} {p.result}" for p in probes)
        origin = next((p.origin for p in probes if p.origin), "")
        named = f" (named by {origin})" if origin else ""
        store = "rendezvous store" in origin
        answered = [p for p in probes if _answered(p)]
        if answered:
            out.append(_obs("port-answering", f"port {port} accepts connections and answers a request: "
                            f"{answered[0].detail or 'replied'}{named}", "ports", now.taken_at, port=port))
            out.append(_obs("port-accepting", f"port {port} accepts connections ({where})", "ports", now.taken_at,
                            port=port))
        elif any(p.result == "no answer" for p in probes):
            silent = next(p for p in probes if p.result == "no answer")
            out.append(_obs("port-not-answering", f"port {port} {silent.detail}{named}", "ports", now.taken_at,
                            port=port))
        elif any(p.result == "accepted" for p in probes):
            oid = "store-accepting" if store else "port-accepting"
            what = "the rendezvous store accepts connections" if store else "accepts connections"
            out.append(_obs(oid, f"port {port} {what} ({where}){named}", "ports", now.taken_at, port=port))
        elif store:
            out.append(_obs("store-refused", f"rendezvous store port {port} refuses connections ({where}){named}",
                            "ports", now.taken_at, port=port))
        else:
            out.append(_obs("port-refused", f"port {port} not answering: {where}{named}", "ports", now.taken_at,
                            port=port))
    return out


def served_observations(history: Sequence[Snapshot]) -> list[Observation]:
    """A port the tree serves whose clients were sent bytes (or whose connections it closed after serving them)
    during the watch: a server answering requests is progressing, whatever its log and CPU say. Summed over
    the looks after the first (each look counts what moved since the one before; triage's probe left out)."""
    if len(history) < 2:
        return []
    sent: dict[int, int] = {}
    closed: dict[int, int] = {}
    conns: dict[int, int] = {}
    excluded: dict[int, int] = {}
    for snap in history[1:]:
        for t in snap.ports.served:
            if t.baseline:
                continue
            sent[t.port] = sent.get(t.port, 0) + t.bytes_sent
            closed[t.port] = closed.get(t.port, 0) + t.closed
            conns[t.port] = max(conns.get(t.port, 0), t.connections)
            excluded[t.port] = excluded.get(t.port, 0) + t.probes_excluded
    span = history[-1].taken_at - history[0].taken_at
    out: list[Observation] = []
    for port in sorted(sent):
        if sent[port] <= 0 and closed[port] <= 0:
            continue
        parts = []
        if sent[port] > 0:
            parts.append(f"{fmt_bytes(sent[port])} sent to clients (up to {conns[port]} open connection(s))")
        if closed[port] > 0:
            parts.append(f"{closed[port]} connection(s) closed by the server after serving them")
        out.append(_obs("requests-served", f"port {port} served its clients during the {fmt_s(span)} watch: "
                        + ", ".join(parts) + " — tcp_info byte counters, triage's own probe connections left out",
                        "ports", history[-1].taken_at, port=port, bytes_sent=sent[port], closed=closed[port]))
    return out


def gpu_observations(history: Sequence[Snapshot], th: Thresholds) -> list[Observation]:
    now = history[-1]
    out: list[Observation] = []
    devices = [d for d in now.gpus.devices if d.error is None and not d.lost]
    loaded = [d for d in devices if is_known(d.memory_used_bytes) and d.memory_used_bytes >= th.gpu_loaded_bytes]
    if loaded:
        flat = [d for d in loaded if _util_always(history, d.index, lambda u: u == 0)]
        if len(flat) == len(loaded):
            used = ", ".join(sorted({fmt_bytes(d.memory_used_bytes) for d in loaded}))
            out.append(_obs("gpu-loaded-idle", f"{len(loaded)} GPUs hold {used} each at 0 % utilisation "
                            f"over {len(history)} look(s): the GPUs wait for the host", "gpus", now.taken_at,
                            gpus=len(loaded)))
    # A spin-wait is a run of samples, not one look (a kernel between two launches can read 100 % at low
    # power once); pasted text is the one look there is. Stale repeats of a blocked NVML read add nothing.
    gpu_history = GpuHistory(max_samples=GPU_LOOKS, thresholds=th)
    for snapshot in history[-GPU_LOOKS:]:
        gpu_history.record(snapshot.gpus, snapshot.taken_at)
    spin = []
    for d in devices:
        run = gpu_history.spin_wait(d.index)
        if run is not None:
            if run.for_s > 0 or th.one_look:
                spin.append(run)
            continue
        util, draw, limit = d.utilization_gpu_percent, d.power_draw_w, d.power_limit_w
        if (isinstance(util, (int, float)) and util >= th.gpu_spin_util and isinstance(draw, (int, float))
                and isinstance(limit, (int, float)) and limit):
            out.append(_obs("gpu-computing", f"GPU {d.index} at {util} % with {draw:.0f} W of {limit:.0f} W: real compute",
                            "gpus", now.taken_at))
    if spin:
        s = spin[0]
        held = f" for {fmt_s(s.for_s)}" if s.for_s > 0 else ""
        out.append(_obs("gpu-spin", f"{len(spin)} GPU(s) pinned at {s.util_percent:.0f} % utilisation at "
                        f"{s.power_w:.0f} W of {s.power_limit_w:.0f} W ({s.power_w / s.power_limit_w * 100:.0f} %){held}: "
                        "a spin-wait, not compute", "gpus", now.taken_at, gpus=len(spin)))
    return out


def _util_always(history: Sequence[Snapshot], index: int, test) -> bool:
    values = [d.utilization_gpu_percent for s in history[-GPU_LOOKS:] for d in s.gpus.devices if d.index == index]
    known = [v for v in values if is_known(v)]
    return bool(known) and all(test(v) for v in known)


def memory_observations(history: Sequence[Snapshot], th: Thresholds) -> list[Observation]:
    now = history[-1]
    at = now.taken_at
    sysm, tgt, cg = now.memory.system, now.memory.target, now.memory.cgroup
    out: list[Observation] = []
    total = sysm.total_bytes if is_known(sysm.total_bytes) else None
    avail = sysm.available_bytes if is_known(sysm.available_bytes) else None
    rss = tgt.rss_sum_bytes if is_known(tgt.rss_sum_bytes) else None
    # a ratio only over figures read for the same processes: RSS of all against a PSS sum read for some
    # of them (smaps_rollup still pending, or denied for a few) read as "53.7x" under churn
    pss = (tgt.pss_sum_bytes if is_known(tgt.pss_sum_bytes) and tgt.pss_covered and tgt.pss_covered >= tgt.processes
           else None)
    if total and avail is not None:
        if avail < th.memory_low_ratio * total:
            out.append(_obs("memory-low", f"only {fmt_bytes(avail)} available of {fmt_bytes(total)} RAM "
                            f"({avail / total * 100:.1f} %)", "memory", at, available=avail, total=total))
        else:
            used = f", used {fmt_bytes(sysm.used_bytes)}" if is_known(sysm.used_bytes) else ""
            out.append(_obs("memory-ample", f"{fmt_bytes(avail)} available of {fmt_bytes(total)} RAM{used}: "
                            "no memory pressure", "memory", at, available=avail, total=total))
    several = isinstance(tgt.processes, int) and tgt.processes >= 2  # one process shares its pages with nobody
    if rss and (pss or total) and several:
        parts = []
        if pss and rss >= th.illusion_ratio * pss:
            parts.append(f"PSS sum {fmt_bytes(pss)}")
        if total and rss > total:
            parts.append(f"{rss / total:.1f}× the machine's {fmt_bytes(total)} RAM")
        file_b = tgt.file_sum_bytes if is_known(tgt.file_sum_bytes) else 0
        anon_b = tgt.anon_sum_bytes if is_known(tgt.anon_sum_bytes) else 0
        if parts:
            shared = f"; file-backed {fmt_bytes(file_b)} vs anonymous {fmt_bytes(anon_b)}" if file_b or anon_b else ""
            out.append(_obs("rss-illusion", f"RSS summed over {tgt.processes or '?'} processes is {fmt_bytes(rss)}, "
                            f"{', '.join(parts)}{shared}: shared pages counted once per process", "memory", at,
                            rss_sum=rss, pss_sum=pss, total=total))  # an unknown one (None) is left out, not 0
    anon = [s.memory.target.anon_sum_bytes for s in history[-6:] if is_known(s.memory.target.anon_sum_bytes)]
    if len(anon) >= 3 and all(b > a for a, b in zip(anon, anon[1:], strict=False)) and anon[-1] - anon[0] > 64 << 20:
        out.append(_obs("anon-growing", f"anonymous memory of the tree grew {fmt_bytes(anon[-1] - anon[0])} "
                        f"over {len(anon)} looks", "memory", at))
    if is_known(cg.current_bytes) and is_known(cg.max_bytes) and cg.max_bytes:
        if cg.current_bytes >= th.cgroup_full_ratio * cg.max_bytes:
            out.append(_obs("cgroup-at-limit", f"cgroup {cg.path} at {fmt_bytes(cg.current_bytes)} of its "
                            f"{fmt_bytes(cg.max_bytes)} limit", "memory", at))
    kills = [s.memory.cgroup.oom_kills for s in history if is_known(s.memory.cgroup.oom_kills)]
    start = history[0].taken_at
    watched_kills = [e for e in (*now.kernel.events, *now.kernel.unseen)
                     if e.kind == "oom-kill" and (not is_known(e.at) or e.at >= start - 1.0)]
    below = False
    if watched_kills:  # every PID of the watch only when there is a kill to place (300 snapshots of 1,000 rows)
        tree_pids = {p.pid for snap in history for p in snap.processes} | {x.pid for snap in history for x in snap.exited}
        below = all(_other_cgroup(e.cgroup, cg.path) and e.pid not in tree_pids for e in watched_kills)
    if kills and len(kills) >= 2 and kills[-1] > kills[0] and below:
        # the counter is hierarchical: a kill in a cgroup below the tree's (a sandbox, a test's, another job's)
        # counts here too, and the kernel line says the killed task was not in the tree's own cgroup
        out.append(_obs("cgroup-oom-below", f"cgroup {cg.path} counted {kills[-1] - kills[0]} new OOM kill(s) during "
                        f"the watch, in another cgroup ({watched_kills[-1].cgroup}): not the tree's processes",
                        "memory", at, kills=kills[-1]))
    elif kills and len(kills) >= 2 and kills[-1] > kills[0]:
        out.append(_obs("oom-kill", f"cgroup {cg.path} counted {kills[-1] - kills[0]} new OOM kill(s) during the watch "
                        f"({kills[-1]} in all)", "memory", at, kills=kills[-1]))
    elif kills and kills[-1] > 0 and len(history) == 1:
        # one look (a paste of memory.events, or the first refresh): the count is all there is to go on
        out.append(_obs("oom-kill", f"cgroup {cg.path} counts {kills[-1]} OOM kill(s)", "memory", at, kills=kills[-1]))
    elif kills and kills[-1] > 0:
        # a count from before triage came: the cgroup may hold other jobs; kernel lines naming the job's PIDs
        # (kernel_observations) are what ties such a kill to this job
        out.append(_obs("cgroup-oom-before", f"cgroup {cg.path} counts {kills[-1]} OOM kill(s) from before the watch "
                        "(not necessarily this job's: no kernel line names one of its PIDs)", "memory", at,
                        kills=kills[-1]))
    return out


def kernel_observations(history: Sequence[Snapshot]) -> list[Observation]:
    now = history[-1]
    out: list[Observation] = []
    seen: set[str] = set()
    for snap in history:
        for ev in snap.kernel.events:
            if ev.text in seen:
                continue
            seen.add(ev.text)
            pid = (ev.pid,) if ev.pid else ()
            if ev.kind == "oom-kill":
                out.append(_obs("oom-kill", f"kernel OOM killer: {quote(ev.text, 100)}", "kernel", now.taken_at, pid))
            elif ev.kind == "segfault":
                out.append(_obs("segfault", f"kernel: {quote(ev.text, 100)}", "kernel", now.taken_at, pid))
    unseen = _unseen_deaths(history)
    out.extend(unseen)
    if now.kernel.error is None and not seen and not any(o.id == "oom-kill-unseen" for o in unseen):
        out.append(_obs("no-oom-kill", "no OOM-kill line in the kernel log", "kernel", now.taken_at))
    return out


REPLACED_WITHIN_S = 30.0  # a replacement that started this soon after a death links the death to the pool


def _cgroup_parts(path: object) -> list[str]:
    return [p for p in path.split("/") if p] if isinstance(path, str) else []


def _other_cgroup(event_cgroup: str, tree_dir: object) -> bool:
    """An OOM kill's task_memcg that is plainly not the tree's cgroup (nor one below it). False when either is
    unknown, or when the tree's is a mount's root (a container sees its own cgroup as the root)."""
    tree, event = _cgroup_parts(tree_dir), _cgroup_parts(event_cgroup)
    if not event or not tree or tree[-1] in ("cgroup", "memory", "unified"):
        return False
    return tree[-1] != event[-1]


def _same_cgroup(event_cgroup: str, tree_dir: object) -> bool:
    """An OOM kill's task_memcg that is the tree's own (non-root) cgroup. Not one below it: a child cgroup of
    the tree's is another job's as often as not (a test's, a sandbox's), and the tree's processes live in its own."""
    tree, event = _cgroup_parts(tree_dir), _cgroup_parts(event_cgroup)
    return bool(event and tree and tree[-1] not in ("cgroup", "memory", "unified") and tree[-1] == event[-1])


def _link(pid: int, when: float, events: Sequence, history: Sequence[Snapshot]) -> str:
    """What ties a death of a PID never seen to this tree, beyond its name and time ("" when nothing does):
    a replacement that started soon after it, a log line of the tree that names the PID, or (an OOM kill)
    the tree's own cgroup."""
    now = history[-1]
    for r in replacements(now.processes):
        if 0.0 <= r.started_at - when <= REPLACED_WITHIN_S:
            return f"PID {r.pid} started {fmt_s(r.started_at - when)} later in its place"
    number = re.compile(rf"(?<![\d.]){pid}(?![\d.])")
    for snap in (history[0], now):
        for tail in snap.logs:
            for line in tail.lines[-200:]:
                if number.search(line.text):
                    return f"{tail.source} names it: {quote(line.text, 80)}"
    if any(_same_cgroup(e.cgroup, now.memory.cgroup.path) for e in events):
        return "the kill was in the tree's own cgroup"
    return ""


def _unseen_deaths(history: Sequence[Snapshot]) -> list[Observation]:
    """Kernel lines about a PID triage never saw, matched to the tree by name and time (the collector's
    `unseen`): a member that died before the first look, or between two looks. Tied to the tree by a
    replacement, a log line naming the PID or the tree's cgroup, it is evidence (oom-kill-unseen,
    segfault-unseen); by name and time alone it may be another program's, and says so (death-nearby)."""
    now = history[-1]
    first_look = history[0].taken_at
    by_pid: dict[int, list] = {}
    for snap in history:
        for ev in snap.kernel.unseen:
            if ev.pid is not None and ev.text not in {e.text for e in by_pid.get(ev.pid, [])}:
                by_pid.setdefault(ev.pid, []).append(ev)
    out: list[Observation] = []
    for pid, events in sorted(by_pid.items()):
        if any(_other_cgroup(e.cgroup, now.memory.cgroup.path) for e in events):
            continue  # another cgroup's OOM kill: another job's process of the same name
        ev = next((e for e in events if e.kind == "oom-kill" and not e.cgroup), events[0])
        when = float(ev.at) if isinstance(ev.at, (int, float)) else first_look
        ago = f"{fmt_s(first_look - when)} before triage's first look" if when <= first_look else "during the watch"
        what = "kernel OOM killer" if ev.kind == "oom-kill" else "kernel"
        link = _link(pid, when, events, history)
        if not link:
            out.append(_obs("death-nearby", f"{what}: {quote(ev.text, 100)} — PID {pid} ({ev.comm}) has the name of "
                            f"the tree's processes and died {ago}, after the tree started; nothing else ties it to "
                            "the tree (it may be another program's)", "kernel", now.taken_at, (pid,), dead_pid=pid,
                            died_at=round(when, 2), kind=ev.kind))
            continue
        how = (f"PID {pid} ({ev.comm}) was never seen in the tree; it died {ago}, after the tree started, "
               f"with the tree's name, and {link}")
        oid = "oom-kill-unseen" if ev.kind == "oom-kill" else "segfault-unseen"
        out.append(_obs(oid, f"{what}: {quote(ev.text, 100)} — {how}", "kernel", now.taken_at, (pid,), dead_pid=pid,
                        died_at=round(when, 2)))
    return out

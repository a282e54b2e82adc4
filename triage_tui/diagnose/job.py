"""The job-level engine: given what each node's own engine concluded, name the node (and rank) that differs.

Pure functions, no I/O. The reasoning is comparative, the way an operator reads `pdsh -w gpu[01-16] …`:
on a job whose ranks wait for each other, the nodes that look alike are usually waiting, and the node that
looks different — unreachable, its own top cause different, a rank gone, its port refused, a stack that
departs — is where to look first. Each job hypothesis shows the rows that made its score:
the node's own score, and one row per way the node differs from the others.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Sequence
from typing import Optional

from ..model.job import JobDiagnosis, JobHypothesis, JobStackGroup, NodeEvidence, NodeSummary, RankRef
from ..model.diagnosis import Hypothesis
from ..model.snapshot import Snapshot
from ..model.stacks import ProcessStacks
from ..model.text_format import clock
from .hypotheses import status_for
from .rules import CATALOGUE
from .stack_groups import group_stacks

DIFFERS_WEIGHT = 0.15  # one row per way a node differs from the majority of the job's nodes
UNREACHABLE_SCORE = 0.7
COMMON_DISCOUNT = 0.25  # the majority's common state is most often the consequence of the node that differs
_CAUSES = frozenset(spec.id for spec in CATALOGUE if spec.kind == "cause")
_PID_STRIDE = 10_000_000  # PIDs repeat across nodes: rank (node i, PID p) is grouped as i * stride + p


def _numbers(values: Sequence[object]) -> list[float]:
    """The figures that were read (an Unavailable is left out, never counted as 0)."""
    return [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]


def top_cause(hypotheses: Sequence[Hypothesis]) -> Optional[Hypothesis]:
    """The node's best cause above unlikely (findings never count: they explain nothing)."""
    for h in hypotheses:
        if h.id in _CAUSES and h.status in ("likely", "possible"):
            return h
    return None


def _gpu_text(snapshot: Snapshot) -> str:
    report = snapshot.gpus
    if not report.devices:
        return f"none: {report.error.reason}" if report.error is not None else "none"
    used = _numbers([d.memory_used_bytes for d in report.devices])
    util = _numbers([d.utilization_gpu_percent for d in report.devices])
    parts = [f"{len(report.devices)} GPU{'s' if len(report.devices) != 1 else ''}"]
    if used:
        parts.append(f"{sum(used) / 2**30:.0f} GiB used")
    if util:
        parts.append(f"{sum(util) / len(util):.0f} % util")
    return ", ".join(parts)


def _port_state(snapshot: Snapshot) -> str:
    results = {p.result for p in snapshot.ports.probes}
    for state in ("answers", "answered", "accepted", "accepts"):
        if state in results:
            return "accepts" if state.startswith("accept") else "answers"
    if "refused" in results:
        return "refused"
    return sorted(results)[0] if results else ""


def _log_silence(snapshot: Snapshot) -> Optional[float]:
    silences = _numbers([t.seconds_since_last_byte for t in snapshot.logs])
    return min(silences) if silences else None


def summarise(evidence: NodeEvidence) -> NodeSummary:
    """The Nodes view's row for one node."""
    snap = evidence.snapshot
    if snap is None or not evidence.reachable:
        return NodeSummary(evidence.node, evidence.reachable, evidence.mode, evidence.reason, evidence.last_answer_at,
                           tick_ms=evidence.tick_ms, bytes_received=evidence.bytes_received)
    states = Counter(p.state for p in snap.processes if not p.exited)
    if snap.exited:
        states["exited"] = len(snap.exited)
    top = top_cause(evidence.hypotheses)
    return NodeSummary(
        node=evidence.node, reachable=True, mode=evidence.mode, reason=evidence.reason,
        last_answer_at=evidence.last_answer_at, processes=sum(1 for p in snap.processes if not p.exited),
        states=dict(sorted(states.items())), gpus=_gpu_text(snap), log_silent_s=_log_silence(snap),
        port_state=_port_state(snap), top_cause=top.id if top else "", top_title=top.title if top else "",
        top_status=top.status if top else "", top_score=top.score if top else 0.0,
        tick_ms=evidence.tick_ms, bytes_received=evidence.bytes_received,
    )


def _gone_ranks(evidence: NodeEvidence) -> list[RankRef]:
    """Ranks of the node that died: exited rows, zombies (their parent has not reaped them)."""
    snap = evidence.snapshot
    if snap is None:
        return []
    pids = [e.pid for e in snap.exited] + [p.pid for p in snap.processes if p.state == "Z" or p.exited]
    return [RankRef(evidence.node, pid) for pid in dict.fromkeys(pids)]


def _odd_stack_ranks(evidence: NodeEvidence) -> list[RankRef]:
    if evidence.stacks is None:
        return []
    pids = [pid for g in evidence.stacks.groups if g.odd_one_out for pid in g.pids]
    return [RankRef(evidence.node, pid) for pid in dict.fromkeys(pids)]


def _features(summary: NodeSummary, evidence: NodeEvidence) -> dict[str, str]:
    """What is compared between nodes: each a short text, equal when the nodes look alike."""
    return {
        "top cause": summary.top_cause or "none",
        "port": summary.port_state or "not probed",
        "ranks gone": "yes" if _gone_ranks(evidence) else "no",
        "processes": str(summary.processes),
    }


def _majority(values: Sequence[str]) -> Optional[str]:
    """The value more than half of the nodes share; None when there is no such majority."""
    if not values:
        return None
    value, count = Counter(values).most_common(1)[0]
    return value if count * 2 > len(values) else None


def cross_node_groups(evidence: Sequence[NodeEvidence]) -> tuple[tuple[JobStackGroup, ...], list[RankRef]]:
    """Every reachable node's latest capture grouped as one: the odd rank named with its node.

    Only when every reachable node has a capture: comparing the ranks of half the job would call the
    captured half's minority odd."""
    captured = [e for e in evidence if e.reachable and e.snapshot is not None]
    if len(captured) < 2 or any(e.stacks is None for e in captured):
        return (), []
    index: dict[int, RankRef] = {}
    merged: list[ProcessStacks] = []
    for i, e in enumerate(captured, 1):
        assert e.stacks is not None
        for p in e.stacks.processes:
            uid = i * _PID_STRIDE + p.pid
            index[uid] = RankRef(e.node, p.pid)
            threads = tuple(dataclasses.replace(t, pid=uid) for t in p.threads)
            merged.append(dataclasses.replace(p, pid=uid, ppid=i * _PID_STRIDE + p.ppid if p.ppid else 0,
                                              threads=threads))
    groups = group_stacks(merged)
    out: list[JobStackGroup] = []
    odd: list[RankRef] = []
    for g in groups:
        ranks = tuple(index[pid] for pid in g.pids if pid in index)
        nodes = tuple(dict.fromkeys(r.node for r in ranks))
        out.append(JobStackGroup(g.frames, ranks, nodes, g.wait_kind, g.odd_one_out, g.departs_at))
        if g.odd_one_out:
            odd.extend(r for r in ranks if r not in odd)
    return tuple(out), odd


def _clock(at: Optional[float]) -> str:
    return clock(at) if at else "never"


def diagnose_job(evidence: Sequence[NodeEvidence], taken_at: float = 0.0) -> JobDiagnosis:
    """The job's causes, best first: unreachable nodes, the node that differs, the common state."""
    summaries = {e.node: summarise(e) for e in evidence}
    hypotheses: list[JobHypothesis] = []

    reachable = [e for e in evidence if e.reachable and e.snapshot is not None]
    unreachable = [e for e in evidence if not e.reachable]
    empty = [e for e in evidence if e.reachable and e.snapshot is None]  # answers, but runs nothing of the job
    for e in empty:
        score = 0.6 if reachable else 0.3
        empty_rows: tuple[str, ...] = (f"+{score:.2f} {e.node} answers but {e.reason or 'runs no process of the target'}",)
        if reachable:
            empty_rows += (f"the job runs on {_nodes_text([x.node for x in reachable])}: its piece on {e.node} has gone "
                     "or never started",)
        hypotheses.append(JobHypothesis(
            "crashed-worker", f"{e.node} runs no process of the job", status_for(score), score, node=e.node,
            for_=empty_rows, next_check=f"ssh {e.node} 'ps -ef; dmesg | tail'",
        ))
    for e in unreachable:
        score = UNREACHABLE_SCORE if reachable else 0.9
        down_rows: tuple[str, ...] = (f"+{score:.2f} {e.node} does not answer: {e.reason or 'no answer yet'} "
                f"(last answer {_clock(e.last_answer_at)})",)
        if reachable:
            down_rows += (f"the other {len(reachable)} node(s) answer: their ranks may be waiting on {e.node}'s",)
        hypotheses.append(JobHypothesis(
            "node-unreachable", f"{e.node} is unreachable: {e.reason or 'no answer'}", status_for(score), score,
            node=e.node, for_=down_rows, next_check=f"ssh {e.node} uptime; check the node in the scheduler (sinfo -N)",
        ))

    stack_groups, odd_stack = cross_node_groups(evidence)
    features = {e.node: _features(summaries[e.node], e) for e in reachable}
    majority = {name: _majority([f[name] for f in features.values()]) for name in
                (next(iter(features.values())).keys() if features else ())}
    differing: dict[str, list[str]] = {}
    if len(reachable) >= 2:
        for e in reachable:
            rows: list[str] = []
            for name, value in features[e.node].items():
                common = majority.get(name)
                if common is not None and value != common:
                    others = [x.node for x in reachable if features[x.node][name] == common]
                    rows.append(f"+{DIFFERS_WEIGHT:.2f} {name}: {value} on {e.node}, {common} on {_nodes_text(others)}")
            if any(r.node == e.node for r in odd_stack):
                rows.append(f"+{DIFFERS_WEIGHT:.2f} stacks: a rank on {e.node} departs from the job's other ranks")
            if rows:
                differing[e.node] = rows

    for e in reachable:
        if e.node not in differing:
            continue
        top = top_cause(e.hypotheses)
        base = top.score if top else 0.0
        diff_rows = differing[e.node]
        score = round(min(1.0, base + DIFFERS_WEIGHT * len(diff_rows)), 2)
        ranks = _odd_stack_ranks(e) or [r for r in odd_stack if r.node == e.node] or _gone_ranks(e)
        if top is not None:
            ident, title = top.id, f"{e.node} differs: {top.title}"
            own = (f"+{base:.2f} {e.node}'s own engine: {top.id} {top.status}", *(f"  {t}" for t in top.for_[:3]))
            next_check = top.next_check or f"triage --ssh {e.node}"
        else:
            ident, title = "node-differs", f"{e.node} differs from the other nodes"
            own = (f"+0.00 {e.node}'s own engine ranks no cause above unlikely",)
            next_check = f"triage --ssh {e.node}"
        if ranks:
            title += f" (rank{'s' if len(ranks) > 1 else ''} PID {', '.join(str(r.pid) for r in ranks[:4])})"
        hypotheses.append(JobHypothesis(ident, title, status_for(score), score, node=e.node, ranks=tuple(ranks),
                                        for_=(*own, *diff_rows), next_check=next_check))

    alike = [e for e in reachable if e.node not in differing]
    common_top = [top_cause(e.hypotheses) for e in alike]
    if alike and all(t is not None for t in common_top) and len({t.id for t in common_top if t}) == 1:
        first = common_top[0]
        assert first is not None
        base = min(t.score for t in common_top if t)
        common_rows = [f"+{base:.2f} {len(alike)} of {len(evidence)} nodes: {first.id} (lowest node score)"]
        score = base
        if differing or unreachable:
            common_rows.append(f"-{COMMON_DISCOUNT:.2f} another node differs: the common state is most often its consequence")
            score = max(0.0, base - COMMON_DISCOUNT)
        score = round(score, 2)
        hypotheses.append(JobHypothesis(first.id, f"{_nodes_text([e.node for e in alike])}: {first.title}",
                                        status_for(score), score, for_=tuple(common_rows), next_check=first.next_check))

    # The engine's order: best score first; a named node before the common state at equal score.
    hypotheses.sort(key=lambda h: (-h.score, h.node == ""))
    named = [h.node for h in hypotheses if h.node]
    order = {n: i for i, n in enumerate(dict.fromkeys(named))}
    nodes = sorted(summaries.values(), key=lambda s: (order.get(s.node, len(order)), [e.node for e in evidence].index(s.node)))
    return JobDiagnosis(taken_at or time.time(), tuple(nodes), tuple(hypotheses), stack_groups, tuple(odd_stack))


def _nodes_text(nodes: Sequence[str]) -> str:
    return ", ".join(nodes[:6]) + (f" and {len(nodes) - 6} more" if len(nodes) > 6 else "") if nodes else "no node"

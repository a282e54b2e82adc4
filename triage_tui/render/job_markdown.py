"""The Markdown of a multi-node `report` / `stacks`: the job's verdict first (the node and rank that
differ), then one row per node, then the cross-node stack groups, then each node's own top causes."""

from __future__ import annotations

from collections.abc import Sequence

from ..model.job import JobHypothesis, JobMoment, JobStackGroup, NodeSummary
from ..model.text_format import clock
from .figures import duration
from .plain_text import md_code, md_inline, terminal_text, visible


def _clock(at: float | None) -> str:
    return clock(at) if at else "never"


def _cell(text: object) -> str:
    # a node's reason and states quote what the node said: literal, one line, no cell break
    return md_inline(text)


def _states(summary: NodeSummary) -> str:
    return " ".join(f"{k}:{v}" for k, v in summary.states.items()) or "—"


def _verdict(hypotheses: Sequence[JobHypothesis]) -> list[str]:
    if not hypotheses:
        return ["**No job-level verdict yet**: no node has a cause above unlikely."]
    top = hypotheses[0]
    lines = [f"**Verdict: {md_inline(top.title)}** — {md_inline(top.id)}, {top.status} ({top.score:.2f})", ""]
    lines += [f"- {md_inline(row.strip())}" for row in top.for_[:6]]
    if top.next_check:
        lines += ["", f"Next check: {md_code(top.next_check)}"]
    return lines


def _nodes(nodes: Sequence[NodeSummary]) -> list[str]:
    lines = ["## Nodes", "", "| node | answers | mode | processes | states | GPUs | log silent | port | top cause |",
             "|---|---|---|---|---|---|---|---|---|"]
    for s in nodes:
        answers = "yes" if s.reachable and not s.reason else (s.reason or "no")
        if not s.reachable:
            answers = f"no: {s.reason} (last answer {_clock(s.last_answer_at)})"
        top = f"{s.top_cause} {s.top_status} {s.top_score:.2f}" if s.top_cause else "—"
        silent = duration(s.log_silent_s) if s.log_silent_s is not None else "—"
        lines.append("| " + " | ".join(_cell(x) for x in (s.node, answers, s.mode or "—", s.processes, _states(s),
                                                            s.gpus or "—", silent, s.port_state or "—", top)) + " |")
    return lines


def _groups(groups: Sequence[JobStackGroup]) -> list[str]:
    if not groups:
        return []
    lines = ["## Stacks across the job", ""]
    for g in groups[:12]:
        where = md_inline(", ".join(f"{r.node}:{r.pid}" for r in g.ranks[:8])) + (" …" if len(g.ranks) > 8 else "")
        odd = f" — **odd one out**, departs at {md_code(g.departs_at)}" if g.odd_one_out else ""
        inner = g.frames[0].function if g.frames else "kernel"
        lines.append(f"- {len(g.ranks)} ranks on {len(g.nodes)} node(s) in {md_code(inner)} ({g.wait_kind}): {where}{odd}")
    if len(groups) > 12:
        lines.append(f"- {len(groups) - 12} more groups")
    return lines


def _job_hypotheses(hypotheses: Sequence[JobHypothesis]) -> list[str]:
    lines = ["## Job hypotheses", ""]
    for n, h in enumerate(hypotheses, 1):
        lines.append(f"{n}. **{md_inline(h.title)}** — {md_inline(h.id)}, {h.status} ({h.score:.2f})")
        lines += [f"   - {md_inline(row.strip())}" for row in h.for_[:6]]
    return lines if hypotheses else []


def render_job_markdown(moment: JobMoment) -> str:
    d = moment.diagnosis
    reachable = sum(1 for s in d.nodes if s.reachable)
    sections = [
        [f"# triage report: a job on {len(d.nodes)} nodes", "",
         f"{reachable} of {len(d.nodes)} nodes answered; last refresh {_clock(moment.taken_at)} "
         f"({moment.wall_ms:.0f} ms for all nodes in parallel).", ""] + _verdict(d.hypotheses),
        _nodes(d.nodes),
        _groups(d.stack_groups),
        _job_hypotheses(d.hypotheses[1:]) if len(d.hypotheses) > 1 else [],
    ]
    return terminal_text("\n\n".join("\n".join(s) for s in sections if s) + "\n")


def render_job_stacks(moment: JobMoment) -> str:
    d = moment.diagnosis
    lines = [f"Stacks of {len(d.nodes)} nodes, captured at {_clock(moment.taken_at)}."]
    for s in d.nodes:
        if not s.reachable:
            lines.append(visible(f"{s.node}: not captured: {s.reason}"))
    if d.odd_ranks:
        lines.append(visible("Odd one out: " + ", ".join(f"PID {r.pid} on {r.node}" for r in d.odd_ranks)))
    lines += _groups(d.stack_groups) or ["No stack group across nodes (a node had no capture)."]
    return "\n".join(lines) + "\n"

"""The JSON of a multi-node `report` / `stacks` (docs/report-schema.md, "Multi-node"): a `nodes` list whose
items are single-node reports plus how the node answered, and the job-level `hypotheses` and `stacks`."""

from __future__ import annotations

import json
from typing import Any

from ..model.codec import to_data
from ..model.diagnosis import Diagnosis
from ..model.job import JobHypothesis, JobMoment, JobStackGroup, NodeEvidence, NodeSummary
from ..model.moment import Moment
from .report_json import render_report_json

JOB_SCHEMA_VERSION = 1


def _node_item(summary: NodeSummary, evidence: NodeEvidence) -> dict[str, Any]:
    item: dict[str, Any] = {}
    if evidence.snapshot is not None:
        moment = Moment(evidence.snapshot, Diagnosis(hypotheses=evidence.hypotheses), evidence.stacks)
        item = json.loads(render_report_json(moment))
    item.update({
        "node": summary.node,
        "reachable": summary.reachable,
        "mode": summary.mode,
        "reason": summary.reason,
        "last_answer_at": summary.last_answer_at,
        "summary": to_data(summary),
    })
    return item


def _hypothesis(h: JobHypothesis) -> dict[str, Any]:
    data = to_data(h)
    if "for_" in data:  # the codec writes for_ as "for" already; keep the key the single-node report uses
        data["for"] = data.pop("for_")
    return data


def _group(g: JobStackGroup) -> dict[str, Any]:
    return to_data(g)


def job_data(moment: JobMoment) -> dict[str, Any]:
    evidence = {e.node: e for e in moment.evidence}
    diagnosis = moment.diagnosis
    return {
        "schema_version": JOB_SCHEMA_VERSION,
        "kind": "job",
        "taken_at": moment.taken_at,
        "nodes": [_node_item(s, evidence[s.node]) for s in diagnosis.nodes],
        "hypotheses": [_hypothesis(h) for h in diagnosis.hypotheses],
        "stacks": {
            "groups": [_group(g) for g in diagnosis.stack_groups],
            "odd_ranks": [to_data(r) for r in diagnosis.odd_ranks],
        },
        "refresh": {"wall_ms": round(moment.wall_ms, 1), "late": list(moment.nodes_late)},
    }


def render_job_json(moment: JobMoment) -> str:
    return json.dumps(job_data(moment), indent=2, default=str)

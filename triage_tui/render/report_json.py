"""The JSON of `triage report --format json` (docs/report-schema.md): the last snapshot, hypotheses by score."""

from __future__ import annotations

import dataclasses

from ..model.codec import to_json
from ..model.snapshot import Snapshot
from .markdown import sorted_hypotheses


def render_report_json(snapshot: Snapshot) -> str:
    ranked = dataclasses.replace(snapshot, hypotheses=tuple(sorted_hypotheses(snapshot.hypotheses)))
    return to_json(ranked, indent=2)

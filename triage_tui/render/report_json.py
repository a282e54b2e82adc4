"""The JSON of `triage report --format json` (docs/report-schema.md): the last Moment as one object.

The snapshot's fields, with the engine's `observations` and `hypotheses` (in the engine's order,
each with its evidence rows) and the latest `stacks` where schema 1 had them, before `sources`.
"""

from __future__ import annotations

import json
from typing import Any

from ..model.codec import to_data
from ..model.moment import Moment


def report_data(moment: Moment) -> dict[str, Any]:
    snapshot = to_data(moment.snapshot)
    sources = snapshot.pop("sources")
    diagnosis = moment.diagnosis
    return {
        **snapshot,
        "observations": to_data(diagnosis.observations),
        "hypotheses": [to_data(h) for h in diagnosis.hypotheses],  # never re-sorted: the engine ranks
        "stacks": to_data(moment.stacks) if moment.stacks is not None else None,
        "sources": sources,
    }


def render_report_json(moment: Moment) -> str:
    return json.dumps(report_data(moment), indent=2, allow_nan=False)

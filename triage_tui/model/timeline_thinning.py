"""Which Moments a long live watch keeps to look back through (#18: the app's memory of a long watch).

A Moment holds its snapshot and its diagnosis; kept whole, a 1 s watch of 1,000 processes held 2,000 of them
(33 minutes) and the app grew with every one. Looking back needs the recent past refresh by refresh, the
refreshes where the diagnosis or the stacks moved, and an even sampling of the quiet ones before: so a
timeline keeps the first and the last Moment, every Moment of the last RECENT_S, every turn (see `turn`),
and of the older quiet ones the first of each SPACING bucket (one per 30 s within the hour, one per 5 min
before it). The record on disk keeps every Moment; a replay is never thinned.

`thinned` is idempotent and stable: a Moment it keeps is kept by every later thinning until it is old
enough for a wider bucket, so what one looked at a minute ago is still there. The turn test compares a
Moment with the one before it in the tuple it is given; a turn stays a turn after thinning because every
Moment between two turns reads the same (the rule only asks what changed, and the first of a run is kept).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Collection, Optional, Sequence, Tuple

if TYPE_CHECKING:  # the model's dataclasses: imported after the app's first frame (#18)
    from .moment import Moment

RECENT_S = 300.0  # every Moment this recent is kept (the engine's history reaches as far back at 1 s)
# (age up to, one Moment per): an even sampling of the quiet past, coarser with age
SPACING: Tuple[Tuple[float, float], ...] = ((3600.0, 30.0), (math.inf, 300.0))
THIN_EVERY_S = 30.0  # a timeline is thinned when its latest Moment enters a new bucket of this width


def ranking(moment: Moment) -> Tuple[Tuple[str, str], ...]:
    """What the verdict says, in order: the hypotheses still in play (not unlikely), with their status."""
    return tuple((h.id, h.status) for h in moment.diagnosis.hypotheses if h.status != "unlikely")


def turn(previous: Moment, moment: Moment) -> bool:
    """The diagnosis or the stacks moved at `moment`: a status changed (its changelog lines), the
    hypotheses in play or their order changed, or a new stack capture arrived."""
    if moment.diagnosis.changes or moment.stacks is not previous.stacks:
        return True
    if moment.diagnosis.hypotheses is previous.diagnosis.hypotheses:
        return False
    return ranking(moment) != ranking(previous)


def _spacing(age_s: float) -> float:
    for up_to, every in SPACING:
        if age_s <= up_to:
            return every
    return SPACING[-1][1]


def thinned(timeline: Sequence[Moment], keep: Collection[float] = ()) -> Tuple[Moment, ...]:
    """The Moments of `timeline` (oldest first) a long watch keeps (module doc); `keep`: `taken_at`s kept
    whatever they are (the Moment on screen while looking back)."""
    if len(timeline) < 3:
        return tuple(timeline)
    latest = timeline[-1].taken_at
    out = [timeline[0]]
    previous = timeline[0]
    every = _spacing(latest - previous.taken_at)
    last_bucket = (every, math.floor(previous.taken_at / every))  # the first's bucket: it is kept anyway
    for i in range(1, len(timeline)):
        moment = timeline[i]
        age = latest - moment.taken_at
        if age <= RECENT_S:
            out.extend(timeline[i:])  # the recent ones whole, and the last among them
            break
        every = _spacing(age)
        bucket = (every, math.floor(moment.taken_at / every))
        if bucket != last_bucket or turn(previous, moment) or moment.taken_at in keep:
            out.append(moment)
        last_bucket = bucket
        previous = moment
    return tuple(out)


def appended(timeline: Sequence[Moment], moment: Moment, max_count: Optional[int] = None,
             keep: Collection[float] = ()) -> Tuple[Moment, ...]:
    """`timeline` with `moment` appended, thinned when its latest time enters a new THIN_EVERY_S bucket (a
    pass over the old part, not every tick), then at most `max_count` of the newest (None: no limit)."""
    out = tuple(timeline) + (moment,)
    if timeline and math.floor(timeline[-1].taken_at / THIN_EVERY_S) != math.floor(moment.taken_at / THIN_EVERY_S):
        out = thinned(out, keep)
    return out[-max_count:] if max_count is not None else out

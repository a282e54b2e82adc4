"""The verdict line under the header: the top cause, its status, its strongest evidence, the next
check and the key that does it — or what is missing before there is one. One or two lines."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Optional

from rich.text import Text

from ..render.verdict import Verdict, verdict

if TYPE_CHECKING:  # the model's dataclasses: imported after the app's first frame (#18)
    from ..model.moment import Moment

STATUS_STYLE = {"likely": "bold red", "possible": "bold yellow"}
_PAREN = re.compile(r"\s*\((?:[^()]|\([^()]*\))*\)")  # "(it is in Condition.wait (threading.py:327) …)"


def verdict_of(shown: Optional[Moment], timeline: Sequence[Moment], has_stacks: bool = False) -> Verdict:
    """The verdict at the Moment shown, from the refreshes up to it (the engine's hypotheses then)."""
    if shown is None:
        return verdict((), 0)
    first = timeline[0].taken_at if timeline else shown.taken_at
    return verdict(shown.diagnosis.hypotheses, len(timeline), shown.taken_at - first, has_stacks,
                   shown.diagnosis.idle_after_s)


def render_verdict_line(v: Verdict, width: int = 0) -> Text:
    """The verdict in at most two lines of `width` (0: no limit): the title, status and key always;
    the evidence and the next check shortened, in that order, to what room is left."""
    out = Text(no_wrap=False, overflow="fold")
    if not v.reached:
        out.append("no verdict yet: ", style="bold")
        out.append(v.missing, style="dim")
        return out
    room = 2 * width - 3 if width > 0 else 10_000  # two lines, less the padding and a cell to spare
    key = f" · press {v.next_check.key}" if v.next_check.key else ""
    title = v.title
    if len(f"▶ {v.status}: {title}") + len(key) > room // 2 + 20:  # a long title: its asides go first
        title = _PAREN.sub("", title).strip() or title
    title = _cut(title, room - len(key) - len(f"▶ {v.status}: ")) or title[: max(10, room - len(key) - 12)]
    head = f"▶ {v.status}: {title}"
    left = room - len(head) - len(key)
    nxt = f" · next: {v.next_check.shell}" if v.next_check.shell else ""
    ev = f" · {v.evidence}" if v.evidence else ""
    if len(ev) + len(nxt) > left:
        nxt = _cut(nxt, max(0, left - min(len(ev), 28)))
        ev = _cut(ev, max(0, left - len(nxt)))
    out.append("▶ ")
    out.append(v.status, style=STATUS_STYLE.get(v.status, "bold"))
    out.append(": ")
    out.append(title, style="bold")
    if ev:
        out.append(ev)
    if nxt:
        out.append(" · next: ", style="dim")
        out.append(nxt.removeprefix(" · next: "), style="cyan")
    if key:
        out.append(" · press ", style="dim")
        out.append(v.next_check.key, style="bold reverse")
    return out


def _cut(piece: str, limit: int) -> str:
    """`piece` in `limit` characters, cut at a word with …; "" when not even a word fits."""
    if len(piece) <= limit:
        return piece
    if limit < 12:
        return ""
    cut = piece[: limit - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[limit // 2:] else cut) + "…"


def stacks_summary(capture: Any) -> str:
    """One line for the toast when a capture lands: how many, and the odd one out."""
    processes = getattr(capture, "processes", ())
    read = sum(1 for p in processes if getattr(p, "error", None) is None)
    line = f"stacks captured: {read} of {len(processes)} processes"
    odd = next((g for g in getattr(capture, "groups", ()) if g.odd_one_out), None)
    if odd is not None:
        line += f"; odd one out PID {', '.join(map(str, odd.pids[:3]))}" + (f" at {odd.departs_at}" if odd.departs_at else "")
    return line

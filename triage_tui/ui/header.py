"""The header line (host, target, interval, last good snapshot, stale sources) and the look-back banner."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from rich.text import Text

from ..render.plain_text import visible
from . import format as fmt

if TYPE_CHECKING:  # the model's dataclasses: imported after the app's first frame (#18)
    from ..model.snapshot import Snapshot


def render_header(
    snapshot: Optional[Snapshot],
    interval_s: float,
    now: float,
    paused: bool = False,
    collecting_since: Optional[float] = None,
    last_error: str = "",
    host: str = "",
    live: bool = True,
    recording: str = "",
) -> Text:
    """The header line. It is asked for twice a refresh (the timer's tick and the Moment's arrival) and
    is most often what it was: the last one made is kept, by the snapshot object and every input, with
    `now` reduced to what it changes on screen (stale or not and for how long, a slow refresh's time)."""
    stale = ""
    if snapshot is not None and live:
        age = now - snapshot.taken_at
        if age > max(3 * interval_s, interval_s + 5):
            stale = fmt.duration(age)
    slow = fmt.duration(now - collecting_since) if collecting_since is not None and now - collecting_since > 2 * interval_s else ""
    key = (interval_s, stale, slow, paused, last_error, host, live, recording)
    kept = _last[2]
    if _last[0] is snapshot and _last[1] == key and isinstance(kept, Text):
        return kept
    text = _render(snapshot, interval_s, stale, slow, paused, last_error, host, live, recording)
    _last[:] = [snapshot, key, text]
    return text


_last: list[object] = [None, None, None]  # (the snapshot, the other inputs, the header made from them)


def _render(snapshot: Optional[Snapshot], interval_s: float, stale: str, slow: str, paused: bool, last_error: str,
            host: str, live: bool, recording: str) -> Text:
    out = Text()
    out.append("triage ", style="bold")
    out.append(f"{visible(snapshot.host if snapshot else host)} ", style="bold cyan")
    mode = next((s.detail for s in snapshot.sources if s.name == "mode"), "") if snapshot is not None else ""
    if mode:  # over SSH: agent or agentless, and why (the first clause of the mode source)
        out.append(f"· {visible(mode.split(';')[0].strip()[:70])} ", style="magenta")
    if snapshot is not None:
        roots = ", ".join(f"{r.pid} ({r.reason})" for r in snapshot.target.roots) or "no root"
        specs = [s for s in snapshot.target.specs if s not in {str(r.pid) for r in snapshot.target.roots}]
        prefix = " ".join(specs) + " → " if specs else ("auto → " if snapshot.target.auto_picked else "")
        out.append(f"· {visible(prefix + roots)} ")
    if live:
        out.append(f"· every {interval_s:g}s ")
    else:
        out.append("· replay ")
    if snapshot is not None:
        out.append(f"· last good {fmt.clock(snapshot.taken_at)}", style="bold red" if stale else "")
        if stale:
            out.append(f" ({stale} ago)", style="bold red")
        bad = [s for s in snapshot.sources if s.status != "ok"]
        if bad:
            out.append(" · ")
            out.append(visible(", ".join(f"{s.name} {s.status}" + (f" ({s.detail})" if s.detail else "") for s in bad)),
                       style="yellow")
    else:
        out.append("· waiting for the first refresh", style="dim")
    if slow:
        out.append(f" · refresh slow: {slow}", style="bold yellow")
    if last_error:
        out.append(f" · refresh failed: {visible(last_error)}", style="bold red")
    if recording.startswith("recording to"):
        out.append(" · rec", style="red")
    elif recording:
        out.append(f" · {visible(recording)}", style="yellow")
    if paused:
        out.append(" · PAUSED (p resumes)", style="reverse bold")
    return out


def render_banner(shown: Snapshot, index: int, count: int, latest: Optional[Snapshot], live: bool = True) -> Text:
    behind = (latest.taken_at - shown.taken_at) if latest is not None else 0.0
    tail = "End back to live · collection continues" if live else "End: the last moment recorded"
    return Text(
        f"LOOKING BACK: refresh {index + 1} of {count} at {fmt.clock(shown.taken_at)}, {fmt.duration(behind)} before the latest "
        f"· [ ] step · {{ }} minute · {tail}",
        style="bold",
    )

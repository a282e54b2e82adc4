"""One point of an incident's timeline: what was read, what the engine made of it, the stacks then."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .diagnosis import Diagnosis
from .snapshot import Snapshot
from .stacks import StackCapture


@dataclass(frozen=True)
class Moment:
    """Every face renders Moments: live ones from an Incident, recorded ones from a replay."""

    snapshot: Snapshot
    diagnosis: Diagnosis = field(default_factory=Diagnosis)
    stacks: Optional[StackCapture] = None  # the latest capture at this moment, when one was taken

    @property
    def taken_at(self) -> float:
        return self.snapshot.taken_at

    def idle_for(self, pid: int) -> Optional[float]:
        """Seconds `pid` has done nothing at this moment by the engine's rule; None: it just worked."""
        since = self.diagnosis.idle_since.get(pid)
        return None if since is None else max(0.0, self.snapshot.taken_at - since)

    def named_by_top_cause(self) -> tuple[int, ...]:
        """The PIDs hypothesis 1's title names (the odd rank, the dead or stopped one): the rows to mark."""
        top = next((h for h in self.diagnosis.hypotheses if h.kind == "cause"), None)
        return top.pids if top is not None and top.status in ("likely", "possible") else ()

    def is_idle(self, pid: int) -> bool:
        """Idle by the engine's rule (the one all-idle uses): what the Processes pane marks idle."""
        secs = self.idle_for(pid)
        return secs is not None and secs >= self.diagnosis.idle_after_s

"""A job across nodes: each node's state as triage last saw it, and what the job-level engine concluded.

Nodes are named as the user typed them (`n2`, `gpu07`, a Slurm node name); a rank is (node, PID) because
PIDs repeat across nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .diagnosis import Hypothesis
from .snapshot import Snapshot
from .stacks import Frame, StackCapture


@dataclass(frozen=True)
class RankRef:
    """One process of the job: which node, which PID there."""

    node: str
    pid: int


@dataclass(frozen=True)
class NodeSummary:
    """One row of the Nodes view: how the node answered and what its own engine ranks first."""

    node: str
    reachable: bool
    mode: str = ""  # local | agent | agentless; "" before the first answer
    reason: str = ""  # why it is unreachable or late; "" when it answered this refresh
    last_answer_at: Optional[float] = None  # when it last answered (None: never)
    processes: int = 0
    states: dict[str, int] = field(default_factory=dict)  # {"R": 1, "S": 7, "idle": 7}
    gpus: str = ""  # "8 GPUs, 608 GiB used, 0 % util" or why none
    log_silent_s: Optional[float] = None
    port_state: str = ""  # "refused", "accepts", "answers", "" when nothing was probed
    top_cause: str = ""  # the node's best cause id ("" when none above unlikely)
    top_title: str = ""
    top_status: str = ""
    top_score: float = 0.0
    tick_ms: float = 0.0  # how long its last refresh took, as seen from here
    bytes_received: int = 0  # over the connection, since the start (0 for the local node)


@dataclass(frozen=True)
class JobHypothesis:
    """A cause for the whole job, naming the node (and ranks) it points at; its evidence is the rows shown."""

    id: str
    title: str
    status: str  # likely | possible | unlikely
    score: float
    node: str = ""  # the node that differs ("" when the cause is common to all)
    ranks: tuple[RankRef, ...] = ()
    for_: tuple[str, ...] = ()
    against: tuple[str, ...] = ()
    next_check: str = ""


@dataclass(frozen=True)
class JobStackGroup:
    """Threads with identical stacks across every node of the job."""

    frames: tuple[Frame, ...]
    ranks: tuple[RankRef, ...]
    nodes: tuple[str, ...]
    wait_kind: str = "unknown"
    odd_one_out: bool = False
    departs_at: str = ""


@dataclass(frozen=True)
class JobDiagnosis:
    taken_at: float = 0.0
    nodes: tuple[NodeSummary, ...] = ()  # the node that differs first
    hypotheses: tuple[JobHypothesis, ...] = ()  # the engine's order: best cause first
    stack_groups: tuple[JobStackGroup, ...] = ()  # empty until every reachable node was captured
    odd_ranks: tuple[RankRef, ...] = ()


@dataclass(frozen=True)
class NodeEvidence:
    """What the fleet knows of one node this refresh (the input of the job engine)."""

    node: str
    reachable: bool
    reason: str = ""
    mode: str = ""
    last_answer_at: Optional[float] = None
    snapshot: Optional[Snapshot] = None
    hypotheses: tuple[Hypothesis, ...] = ()
    stacks: Optional[StackCapture] = None
    tick_ms: float = 0.0
    bytes_received: int = 0


@dataclass(frozen=True)
class JobMoment:
    """One refresh of the whole job: each node's evidence and the job-level diagnosis."""

    taken_at: float
    evidence: tuple[NodeEvidence, ...]
    diagnosis: JobDiagnosis
    wall_ms: float = 0.0  # how long the refresh took, all nodes in parallel
    nodes_late: tuple[str, ...] = ()  # nodes still in flight when it was taken

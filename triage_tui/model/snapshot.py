"""The snapshot: everything one refresh saw, as frozen, JSON-serialisable dataclasses.

Collectors fill these; the diagnosis engine reads them (what it derives lives in diagnosis.py,
joined to the snapshot in a moment.Moment); the UI and the command-line faces render them.
Raw collector data only: no observation, hypothesis or stack capture is part of a Snapshot. Every figure that could not be read is an `Unavailable` with a reason, never 0.
Sizes are bytes, times are seconds, timestamps are Unix epoch seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, Field, dataclass, field, fields
from functools import cached_property
from typing import Any, Optional, TypeVar, Union

from .unavailable import Unavailable
from .waits import Wait, WaitSource

SCHEMA_VERSION = 1
_C = TypeVar("_C", bound=type)

Int = Union[int, Unavailable]
Float = Union[float, Unavailable]
Str = Union[str, Unavailable]


# ---------------------------------------------------------------- target
@dataclass(frozen=True)
class TargetRoot:
    """One root of the watched tree and why it was chosen ("PID 123", "listens on :8000")."""

    pid: int
    reason: str


@dataclass(frozen=True)
class Target:
    """What is being watched: the user's specs, the roots they resolved to, and how."""

    specs: tuple[str, ...] = ()
    roots: tuple[TargetRoot, ...] = ()
    auto_picked: bool = False  # no spec given: candidates were picked (reasons in roots)


def slotted(cls: _C) -> _C:
    """`cls` (a frozen dataclass) made again with __slots__ of its fields, as dataclass(slots=True) does on 3.10+
    (the node's agent runs on 3.8). A row of 42 fields holds its values in 42 slots (~0.4 KB) instead of a dict
    of 42 keys (~1.6 KB; more than 30 keys are never shared between instances): a long watch keeps tens of
    thousands of rows (every Moment kept holds its tuple, and re-read rows are new objects)."""
    names = tuple(f for f in cls.__dataclass_fields__)  # type: ignore[attr-defined]
    namespace = {k: v for k, v in cls.__dict__.items() if k not in names and k not in ("__dict__", "__weakref__")}
    namespace["__slots__"] = names

    def __getstate__(self: object) -> list[object]:  # pickle and copy: a frozen class's slots are set as __init__ does
        return [getattr(self, name) for name in names]

    def __setstate__(self: object, state: list[object]) -> None:
        for name, value in zip(names, state):  # noqa: B905 - zip(strict=) is 3.10+: the agent runs on 3.8
            object.__setattr__(self, name, value)

    namespace["__getstate__"], namespace["__setstate__"] = __getstate__, __setstate__
    made = type(cls)(cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__
    init = _slot_init(made, fields(cls))
    if init is not None:
        setattr(made, "__init__", init)  # noqa: B010 - mypy refuses an assignment to a class's __init__
    return made


def _slot_init(made: type, dataclass_fields: tuple[Field[Any], ...]) -> Optional[Callable[..., None]]:
    """The dataclass's own __init__ for `made`, its slots set through their member descriptors: the same
    signature, defaults and default factories (None, keep the dataclass's, for a class with __post_init__ or a
    field not in __init__). A frozen dataclass's generated __init__ sets each field by
    `object.__setattr__(self, 'name', name)` (a global, an attribute and a call a field): 42 fields cost ~8 us
    a row here against ~3.5 this way, for every row a tick builds (1,000 when every process changes). The same
    values land in the same slots; the frozen __setattr__ still refuses any later set."""
    if hasattr(made, "__post_init__") or not all(f.init for f in dataclass_fields):
        return None
    params, body = [], []
    scope: dict[str, Any] = {"_NO_VALUE": _NO_VALUE}
    for f in dataclass_fields:
        name = f.name
        scope[f"_set_{name}"] = vars(made)[name].__set__
        if f.default is not MISSING:
            scope[f"_default_{name}"] = f.default
            params.append(f"{name}=_default_{name}")
        elif f.default_factory is not MISSING:
            scope[f"_factory_{name}"] = f.default_factory
            params.append(f"{name}=_NO_VALUE")
            body.append(f"    if {name} is _NO_VALUE:\n        {name} = _factory_{name}()\n")
        else:
            params.append(name)
        body.append(f"    _set_{name}(self, {name})\n")
    exec(f"def __init__(self, {', '.join(params)}):\n{''.join(body)}", scope)  # noqa: S102 - our own field names
    init = scope["__init__"]
    init.__qualname__ = f"{made.__qualname__}.__init__"
    return init


class _NoValue:
    def __repr__(self) -> str:
        return "<no value: the field's default factory>"


_NO_VALUE = _NoValue()


# ---------------------------------------------------------------- processes
@dataclass(frozen=True)
class GpuHolding:
    """One GPU a process holds, and how much of its memory (from NVML or nvidia-smi)."""

    gpu_index: int
    used_bytes: Int = Unavailable("not reported")


@slotted
@dataclass(frozen=True)
class ProcessInfo:
    """One process of the target tree. Mirrors `ps -o`, /proc/PID/status and smaps_rollup."""

    pid: int
    ppid: int
    name: str
    cmdline: tuple[str, ...] = ()
    state: str = "?"  # kernel state letter: R S D Z T t I X
    thread_states: dict[str, int] = field(default_factory=dict)  # {"R": 1, "S": 40}
    cpu_percent: Float = Unavailable("first sample")  # over the last interval, 100 = one core
    cpu_time_s: Float = Unavailable("not read")  # user + system
    # the CPU of the children it has reaped (stat's cutime + cstime): above 0, some child of it has ended
    reaped_children_cpu_s: Float = Unavailable("not read")
    user_time_s: Float = Unavailable("not read")
    system_time_s: Float = Unavailable("not read")
    threads: Int = Unavailable("not read")
    start_time: Float = Unavailable("not read")
    wchan: Str = Unavailable("not read")
    ctx_voluntary: Int = Unavailable("not read")
    ctx_involuntary: Int = Unavailable("not read")
    ctx_voluntary_delta: Int = Unavailable("first sample")
    ctx_involuntary_delta: Int = Unavailable("first sample")
    read_bytes: Int = Unavailable("not read")
    write_bytes: Int = Unavailable("not read")
    read_bytes_delta: Int = Unavailable("first sample")
    write_bytes_delta: Int = Unavailable("first sample")
    major_faults: Int = Unavailable("not read")
    major_faults_delta: Int = Unavailable("first sample")
    num_fds: Int = Unavailable("not read")
    nspid: tuple[int, ...] = ()  # NSpid: this PID as seen from each nested PID namespace
    user: Str = Unavailable("not read")
    # memory, from /proc/PID/status every tick
    rss_bytes: Int = Unavailable("not read")
    rss_anon_bytes: Int = Unavailable("not read")
    rss_file_bytes: Int = Unavailable("not read")
    rss_shmem_bytes: Int = Unavailable("not read")
    vms_bytes: Int = Unavailable("not read")
    # memory, from smaps_rollup on a budget; pss_read_at says when it was read (its age: taken_at - pss_read_at)
    pss_bytes: Int = Unavailable("not read yet")
    uss_bytes: Int = Unavailable("not read yet")
    swap_bytes: Int = Unavailable("not read yet")
    pss_read_at: Float = Unavailable("not read yet")  # epoch s; a time, not an age, so an idle row stays unchanged
    gpus: tuple[GpuHolding, ...] = ()
    exit_status: Int = Unavailable("alive")  # a zombie's wait status (/proc/PID/stat field 52): exit code or signal
    exited: bool = False  # vanished during this read; the row stays so it can be explained
    error: Optional[Unavailable] = None  # whole-row problem (access denied, vanished mid-read)


@dataclass(frozen=True)
class ExitedProcess:
    """A process of the tree that was seen before and is gone now."""

    pid: int
    name: str
    cmdline: tuple[str, ...] = ()
    last_seen: float = 0.0
    exit_code: Int = Unavailable("not our child: exit status unknown")


# ---------------------------------------------------------------- memory
@dataclass(frozen=True)
class SystemMemory:
    """What `free -b` prints, from /proc/meminfo."""

    total_bytes: Int = Unavailable("not read")
    used_bytes: Int = Unavailable("not read")
    free_bytes: Int = Unavailable("not read")
    available_bytes: Int = Unavailable("not read")
    buff_cache_bytes: Int = Unavailable("not read")
    shared_bytes: Int = Unavailable("not read")
    swap_total_bytes: Int = Unavailable("not read")
    swap_used_bytes: Int = Unavailable("not read")


@dataclass(frozen=True)
class CgroupMemory:
    """The target's memory cgroup: memory.current / memory.max (v2) or usage / limit (v1)."""

    path: Str = Unavailable("not read")
    version: Int = Unavailable("not read")  # 1 or 2
    current_bytes: Int = Unavailable("not read")
    max_bytes: Union[int, None, Unavailable] = Unavailable("not read")  # None: no limit ("max")
    oom_kills: Int = Unavailable("not read")


@dataclass(frozen=True)
class TargetMemory:
    """Sums over the target tree: the figures that tell the RSS illusion from real pressure."""

    processes: int = 0
    rss_sum_bytes: Int = Unavailable("not read")
    pss_sum_bytes: Int = Unavailable("not read yet")
    uss_sum_bytes: Int = Unavailable("not read yet")
    anon_sum_bytes: Int = Unavailable("not read")
    file_sum_bytes: Int = Unavailable("not read")
    shmem_sum_bytes: Int = Unavailable("not read")
    pss_covered: int = 0  # how many processes have a PSS figure in pss_sum_bytes


@dataclass(frozen=True)
class MemoryReport:
    system: SystemMemory = field(default_factory=SystemMemory)
    cgroup: CgroupMemory = field(default_factory=CgroupMemory)
    target: TargetMemory = field(default_factory=TargetMemory)
    smaps_budget_ms: float = 100.0
    smaps_spent_ms: float = 0.0  # measured time spent in smaps_rollup reads this tick


# ---------------------------------------------------------------- logs
@dataclass(frozen=True)
class LogLine:
    text: str
    seen_at: float  # when triage read it
    level: str = "info"  # info | warning | error | traceback


@dataclass(frozen=True)
class LogTail:
    """One followed log file: its last lines and how long it has been silent."""

    path: str
    source: str = "--log"  # "--log" or "stdout of PID 123" / "stderr of PID 123"
    lines: tuple[LogLine, ...] = ()
    partial: str = ""  # bytes after the last newline (a progress bar in flight), decoded
    size_bytes: Int = Unavailable("not read")
    seconds_since_last_byte: Float = Unavailable("nothing read yet")
    last_byte_at: Float = Unavailable("nothing read yet")
    error: Optional[Unavailable] = None


# ---------------------------------------------------------------- ports
@dataclass(frozen=True)
class ListeningSocket:
    pid: int
    address: str
    port: int
    family: str = "tcp"  # tcp or tcp6


@dataclass(frozen=True)
class PortProbe:
    """What a connection to the port gets on one address: accepted, refused, timed out, error."""

    port: int
    address: str
    result: str  # accepted | answered (a reply to a request) | no answer (accepts, never replies) | refused | ...
    detail: str = ""
    origin: str = ""  # who named the port: "--port", "--port 8000 in PID 12's command line", "listening socket", ...


@dataclass(frozen=True)
class ServedTraffic:
    """What the connections on one port the tree serves moved since the previous look (tcp_info's byte
    counters, triage's own probe connections left out). The first look is a baseline: nothing is counted."""

    port: int
    connections: int = 0  # open client connections now
    bytes_sent: int = 0  # acknowledged by the clients since the last look
    bytes_received: int = 0
    closed: int = 0  # connections the server closed (TIME_WAIT) since the last look
    probes_excluded: int = 0  # connections of triage's own probe, not counted
    baseline: bool = False


@dataclass(frozen=True)
class PortReport:
    listening: tuple[ListeningSocket, ...] = ()  # sockets the tree listens on
    probes: tuple[PortProbe, ...] = ()  # for a :PORT target or --port
    error: Optional[Unavailable] = None
    served: tuple[ServedTraffic, ...] = ()  # per served port (not a rank's, not a rendezvous store's)
    served_error: Optional[Unavailable] = None  # why the byte counters could not be read


# ---------------------------------------------------------------- gpus
@dataclass(frozen=True)
class GpuProcess:
    pid: int  # as NVML reports it (host PID namespace)
    local_pid: Optional[int] = None  # mapped through NSpid into ours; None: maps to nothing here
    used_bytes: Int = Unavailable("not reported")
    kind: str = "compute"  # compute | graphics
    name: str = ""


@dataclass(frozen=True)
class GpuDevice:
    index: int
    name: Str = Unavailable("not read")
    uuid: Str = Unavailable("not read")
    pci_bus_id: Str = Unavailable("not read")
    memory_total_bytes: Int = Unavailable("not read")
    memory_used_bytes: Int = Unavailable("not read")
    memory_free_bytes: Int = Unavailable("not read")
    memory_reserved_bytes: Int = Unavailable("not read")
    utilization_gpu_percent: Int = Unavailable("not read")
    utilization_memory_percent: Int = Unavailable("not read")
    temperature_c: Int = Unavailable("not read")
    power_draw_w: Float = Unavailable("not read")
    power_limit_w: Float = Unavailable("not read")
    processes: tuple[GpuProcess, ...] = ()
    lost: bool = False
    error: Optional[Unavailable] = None
    # when these figures were read; an older read_at than the snapshot's means stale figures kept
    # while NVML was blocked (error says so); None: nothing was read
    read_at: Optional[float] = None


@dataclass(frozen=True)
class GpuReport:
    """All GPUs of the host, or the one line that says why there are none to show."""

    source: str = "none"  # nvml | nvidia-smi | none
    driver_version: Str = Unavailable("not read")
    cuda_driver_version: Str = Unavailable("not read")
    devices: tuple[GpuDevice, ...] = ()
    error: Optional[Unavailable] = None  # no driver, no library, version mismatch, timed out


# ---------------------------------------------------------------- kernel
@dataclass(frozen=True)
class KernelEvent:
    """An OOM-killer or segfault line from the kernel log that names a PID of the tree."""

    kind: str  # oom-kill | segfault | other
    pid: Optional[int]
    text: str
    at: Float = Unavailable("no timestamp")
    comm: str = ""  # the process's name as the kernel wrote it ("python3", at most 15 characters); "" when the line has none
    cgroup: str = ""  # an OOM kill's task_memcg; "" when the line does not say


@dataclass(frozen=True)
class KernelReport:
    events: tuple[KernelEvent, ...] = ()
    # lines naming a PID triage never saw in the tree, whose name is that of a process of the tree and logged
    # after the tree's oldest process started: a member that died before triage looked (matched by name and time)
    unseen: tuple[KernelEvent, ...] = ()
    error: Optional[Unavailable] = None


# ---------------------------------------------------------------- sources
@dataclass(frozen=True)
class SourceStatus:
    """How one source fared this tick: ok, stale (slow, last value kept) or failing."""

    name: str
    status: str = "ok"
    duration_ms: float = 0.0
    detail: str = ""


# ---------------------------------------------------------------- the snapshot
@dataclass(frozen=True)
class Snapshot:
    schema_version: int = SCHEMA_VERSION
    host: str = ""
    taken_at: float = 0.0
    interval_s: float = 0.0
    target: Target = field(default_factory=Target)
    processes: tuple[ProcessInfo, ...] = ()
    exited: tuple[ExitedProcess, ...] = ()
    memory: MemoryReport = field(default_factory=MemoryReport)
    logs: tuple[LogTail, ...] = ()
    ports: PortReport = field(default_factory=PortReport)
    gpus: GpuReport = field(default_factory=GpuReport)
    kernel: KernelReport = field(default_factory=KernelReport)
    waits: tuple[Wait, ...] = ()  # what each blocked thread waits on (collect/waits.py)
    waits_source: WaitSource = field(default_factory=lambda: WaitSource(error=Unavailable("waits were not read")))
    sources: tuple[SourceStatus, ...] = ()

    def live_pids(self) -> tuple[int, ...]:
        """The PIDs of the tree still alive in this snapshot (what a stack capture of the target takes)."""
        return tuple(p.pid for p in self.processes if not p.exited)

    def process(self, pid: int) -> Optional[ProcessInfo]:
        """The row of `pid` (the first, were a PID listed twice), or None."""
        return self._rows_by_pid.get(pid)

    @cached_property
    def exited_rows(self) -> tuple[ProcessInfo, ...]:
        """Rows of processes that vanished during this read (cached like _rows_by_pid: the engine
        looks for them in every snapshot of its history every tick)."""
        return tuple(p for p in self.processes if p.exited)

    def share_index(self, previous: Snapshot) -> None:
        """Take `previous`'s index of rows by PID when this snapshot holds the same tuple of rows (a quiet
        tree, handed on by the collector): one index for a long watch's snapshots, not one each."""
        if self.processes is previous.processes and "_rows_by_pid" in previous.__dict__:
            self.__dict__["_rows_by_pid"] = previous.__dict__["_rows_by_pid"]

    @cached_property
    def _rows_by_pid(self) -> dict[int, ProcessInfo]:
        # Built once per snapshot: the engine looks rows up by PID for every process of every
        # snapshot in its history, and a scan per lookup made a tick of 1,000 processes quadratic.
        # cached_property writes the instance __dict__ directly, so the frozen dataclass allows it;
        # it is no field, so equality, replace() and the JSON codec never see it.
        index: dict[int, ProcessInfo] = {}
        for p in self.processes:
            index.setdefault(p.pid, p)
        return index

"""GPUs through NVML (the pynvml module of nvidia-ml-py): what `nvidia-smi` shows, as data.

Replaces `nvidia-smi` (the table) and `nvidia-smi --query-compute-apps=pid,used_memory`:
driver and CUDA versions; per GPU its name, UUID, PCI bus id, memory (total, reserved,
used, free), utilisation, temperature, power draw and limit, and the compute and graphics
processes with their GPU memory, their PIDs mapped into our PID namespace.

NVML is initialised lazily, on the first call, on the call thread (nvmlInit can block too);
it never exits or raises because NVML is missing: the report carries one line saying why.
Where the binding cannot load at all (no library, no nvidia-ml-py), `nvidia-smi` is tried.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any, Optional

from ..model import Unavailable
from ..model.snapshot import GpuDevice, GpuHolding, GpuProcess, GpuReport, ProcessInfo
from ..model.text_format import clock as time_of_day  # self.clock is the injectable time source
from .gpu_pids import GpuPidMapper
from .nvml_calls import (
    ARGUMENT_VERSION_MISMATCH,
    FUNCTION_NOT_FOUND,
    GPU_IS_LOST,
    LIBRARY_NOT_FOUND,
    UNKNOWN,
    NvmlBusy,
    NvmlCallError,
    NvmlCallThread,
    NvmlTimeout,
    field_unavailable,
    global_unavailable,
    translate,
)

MIB = 1024 * 1024
BLOCKED_HINT = "a sick GPU or driver can block NVML; check `dmesg` for Xid errors"
LOST_HINT = "the GPU fell off the bus or hung: check `dmesg` for Xid 79/48; a GPU reset or reboot is needed"


class _GpuLost(Exception):
    """Raised inside a device read to stop querying a GPU that answered GPU_IS_LOST."""


def cuda_version_text(value: int) -> str:
    """12080 -> "12.8" (NVML encodes major*1000 + minor*10)."""
    return f"{value // 1000}.{(value % 1000) // 10}"


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _forget_frames(exc: BaseException) -> None:
    """Drop the tracebacks of a kept exception and of those it was raised from. The init failure is kept and
    raised again on every poll until the retry; each raise added that poll's frames to it, and through their
    callers (f_back) every earlier poll's collect frame stayed alive with its /proc table: ~1 MiB a tick at
    1,000 processes on a host without NVML (#18)."""
    seen: set[int] = set()
    todo: list[Optional[BaseException]] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        e.__traceback__ = None
        todo += [e.__context__, e.__cause__]


class GpuCollector:
    """`collector() -> GpuReport`: one NVML poll, each call off this thread with a timeout.

    call_timeout_s bounds one NVML call; poll_budget_s bounds the whole poll. After a call
    times out, the worker stays blocked until the driver lets go: later polls start no new
    call and return the last good figures, each device saying since when it is stale.
    `fallback` (nvidia-smi) is used when the binding cannot load at all.
    One caller at a time (the tick thread); nvmlShutdown is never called, so no call still
    blocked in the driver can outlive the library state it uses (the OS reclaims it at exit).
    """

    def __init__(
        self,
        call_timeout_s: float = 2.0,
        poll_budget_s: float = 5.0,
        fallback: Optional[Callable[[], GpuReport]] = None,
        proc_root: str = "/proc",
        init_retry_s: float = 10.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.call_timeout_s = call_timeout_s
        self.poll_budget_s = poll_budget_s
        self.fallback = fallback
        self.proc_root = proc_root
        self.init_retry_s = init_retry_s
        self.clock = clock
        self.calls = NvmlCallThread()
        self.functions_not_found: list[str] = []  # which binding calls the library lacked
        self._nvml: Any = None  # the pynvml module once initialised
        self._init_failed: Optional[tuple[float, BaseException]] = None
        self._last: dict[int, GpuDevice] = {}  # last fresh read of each GPU, for stale reports
        self._count = 0  # GPUs the last poll counted
        self._versions: tuple[Any, Any] = (Unavailable("not read"), Unavailable("not read"))
        self._identity: dict[int, tuple[Any, Any, Any]] = {}  # name, uuid, pci: shown for a lost GPU
        self._deadline = 0.0

    # ------------------------------------------------------------------ calls
    def _call(self, name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """One guarded NVML call; raises NvmlTimeout, NvmlBusy or NvmlCallError."""
        remaining = self._deadline - time.monotonic()
        try:
            return self.calls.run(name, fn, *args, timeout_s=min(self.call_timeout_s, remaining), **kwargs)
        except (NvmlTimeout, NvmlBusy):
            raise
        except Exception as exc:  # noqa: BLE001 - NVMLError, NVMLLibraryMismatchError, decode errors
            err = translate(name, exc)
            if err.code == FUNCTION_NOT_FOUND and name not in self.functions_not_found:
                self.functions_not_found.append(name)
            raise err from None

    def _field(self, name: str, fn: Callable[..., Any], *args: Any, convert: Callable[[Any], Any] = lambda v: v,
               **kwargs: Any) -> Any:
        """A figure, or Unavailable; GPU_IS_LOST aborts the device read."""
        try:
            return convert(self._call(name, fn, *args, **kwargs))
        except NvmlCallError as exc:
            if exc.code == GPU_IS_LOST:
                raise _GpuLost(exc.call) from None
            return field_unavailable(exc)
        except (NvmlTimeout, NvmlBusy) as exc:
            return field_unavailable(exc)

    # ------------------------------------------------------------------ init
    def _ensure_init(self) -> Any:
        if self._nvml is not None:
            return self._nvml
        if self._init_failed is not None and self.clock() - self._init_failed[0] < self.init_retry_s:
            raise self._init_failed[1]  # its frames are dropped where it is caught (_forget_frames)
        try:
            import pynvml  # noqa: PLC0415 - lazily: importing triage must not need the binding

            self._call("nvmlInit", pynvml.nvmlInit)
        except (ImportError, NvmlCallError) as exc:
            self._init_failed = (self.clock(), exc)
            raise
        self._nvml = pynvml
        self._init_failed = None
        return pynvml

    # ------------------------------------------------------------------ poll
    def __call__(self) -> GpuReport:
        self._deadline = time.monotonic() + self.poll_budget_s
        stuck = self.calls.stuck()
        if stuck is not None:
            return self._stale_report(*stuck)
        try:
            nvml = self._ensure_init()
        except (ImportError, NvmlCallError) as exc:
            _forget_frames(exc)
            code = exc.code if isinstance(exc, NvmlCallError) else None
            if self.fallback is not None and (isinstance(exc, ImportError) or code == LIBRARY_NOT_FOUND):
                return self._fall_back(global_unavailable(exc))
            return GpuReport(source="nvml", error=global_unavailable(exc))
        except (NvmlTimeout, NvmlBusy) as exc:
            return GpuReport(source="nvml", error=global_unavailable(exc))
        return self._poll(nvml)

    def _fall_back(self, why: Unavailable) -> GpuReport:
        assert self.fallback is not None
        report = self.fallback()
        if report.error is not None and not report.devices:
            # neither way worked: say both, NVML's reason first (it is the usual one)
            return dataclasses.replace(report, error=Unavailable(f"{why.reason}; nvidia-smi: {report.error.reason}",
                                                                 why.hint))
        return report

    def _poll(self, nvml: Any) -> GpuReport:
        try:
            driver = self._field("nvmlSystemGetDriverVersion", nvml.nvmlSystemGetDriverVersion, convert=_text)
            cuda = self._field("nvmlSystemGetCudaDriverVersion", nvml.nvmlSystemGetCudaDriverVersion,
                               convert=cuda_version_text)
        except _GpuLost as lost:  # a system call has no GPU to lose; treat it as any other failure
            driver = cuda = Unavailable(f"NVML error: {lost}")
        try:
            count = self._call("nvmlDeviceGetCount", nvml.nvmlDeviceGetCount)
        except (NvmlCallError, NvmlTimeout, NvmlBusy) as exc:
            return GpuReport(source="nvml", driver_version=driver, cuda_driver_version=cuda,
                             error=global_unavailable(exc))
        self._count = count
        self._versions = (driver, cuda)
        mapper = GpuPidMapper(self.proc_root)
        devices = []
        error: Optional[Unavailable] = None
        for index in range(count):
            stuck = self.calls.stuck()
            if stuck is not None:
                devices.append(self._stale_device(index, *stuck))
                continue
            device = self._read_device(nvml, index, mapper)
            if self.calls.stuck() is not None:
                # this GPU's read hit the hang: its half-read figures are shown, marked
                stuck_name, since = self.calls.stuck() or ("", 0.0)
                device = dataclasses.replace(device, error=Unavailable(
                    f"timed out: {stuck_name} did not return in time (limit {self.call_timeout_s:g} s a call)",
                    BLOCKED_HINT))
            else:
                self._last[index] = device
            devices.append(device)
        stuck = self.calls.stuck()
        if stuck is not None:
            error = Unavailable(f"stale: NVML call {stuck[0]} blocked since {time_of_day(stuck[1])}",
                                BLOCKED_HINT)
        return GpuReport(source="nvml", driver_version=driver, cuda_driver_version=cuda,
                         devices=tuple(devices), error=error)

    def _stale_device(self, index: int, call: str, since: float) -> GpuDevice:
        at = time_of_day(since)
        why = Unavailable(f"stale: not read since NVML call {call} blocked at {at}",
                          BLOCKED_HINT)
        last = self._last.get(index)
        return dataclasses.replace(last, error=why) if last is not None else GpuDevice(index=index, error=why)

    def _stale_report(self, call: str, since: float) -> GpuReport:
        at = time_of_day(since)
        devices = tuple(self._stale_device(i, call, since) for i in range(self._count))
        return GpuReport(
            source="nvml", driver_version=self._versions[0], cuda_driver_version=self._versions[1], devices=devices,
            error=Unavailable(f"stale: NVML call {call} has not returned since {at}; figures are the last good read",
                              BLOCKED_HINT),
        )

    # ------------------------------------------------------------------ one device
    def _read_device(self, nvml: Any, index: int, mapper: GpuPidMapper) -> GpuDevice:
        try:
            handle = self._call("nvmlDeviceGetHandleByIndex", nvml.nvmlDeviceGetHandleByIndex, index)
        except NvmlCallError as exc:
            if exc.code in (GPU_IS_LOST, UNKNOWN):
                return self._lost_device(index, f"GPU is lost (nvmlDeviceGetHandleByIndex: {exc.message})")
            return self._known_identity(GpuDevice(index=index, error=Unavailable(f"cannot open the GPU: {exc.message}")))
        except (NvmlTimeout, NvmlBusy) as exc:
            return self._known_identity(GpuDevice(index=index, error=field_unavailable(exc)))
        try:
            return self._read_open_device(nvml, index, handle, mapper)
        except _GpuLost as lost:
            return self._lost_device(index, f"GPU is lost ({lost} answered GPU_IS_LOST)")

    def _lost_device(self, index: int, reason: str) -> GpuDevice:
        gone = Unavailable("GPU is lost")
        return self._known_identity(GpuDevice(
            index=index, name=gone, uuid=gone, pci_bus_id=gone, memory_total_bytes=gone, memory_used_bytes=gone,
            memory_free_bytes=gone, memory_reserved_bytes=gone, utilization_gpu_percent=gone,
            utilization_memory_percent=gone, temperature_c=gone, power_draw_w=gone, power_limit_w=gone,
            lost=True, error=Unavailable(reason, LOST_HINT), read_at=self.clock(),
        ))

    def _known_identity(self, device: GpuDevice) -> GpuDevice:
        """A GPU we cannot read still says which board it is, when an earlier poll saw it."""
        known = self._identity.get(device.index)
        if known is None:
            return device
        return dataclasses.replace(device, name=known[0], uuid=known[1], pci_bus_id=known[2])

    def _read_open_device(self, nvml: Any, index: int, handle: Any, mapper: GpuPidMapper) -> GpuDevice:
        name = self._field("nvmlDeviceGetName", nvml.nvmlDeviceGetName, handle, convert=_text)
        uuid = self._field("nvmlDeviceGetUUID", nvml.nvmlDeviceGetUUID, handle, convert=_text)
        pci = self._field("nvmlDeviceGetPciInfo", nvml.nvmlDeviceGetPciInfo, handle,
                          convert=lambda p: _text(p.busId))
        if all(isinstance(v, str) for v in (name, uuid, pci)):
            self._identity[index] = (name, uuid, pci)
        memory = self._memory(nvml, handle)
        util = self._field("nvmlDeviceGetUtilizationRates", nvml.nvmlDeviceGetUtilizationRates, handle)
        temp = self._field("nvmlDeviceGetTemperature", nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU)
        power = self._field("nvmlDeviceGetPowerUsage", nvml.nvmlDeviceGetPowerUsage, handle,
                            convert=lambda mw: mw / 1000.0)
        limit = self._field("nvmlDeviceGetEnforcedPowerLimit", nvml.nvmlDeviceGetEnforcedPowerLimit, handle,
                            convert=lambda mw: mw / 1000.0)
        processes = self._processes(nvml, handle, mapper)
        util_gpu = util if isinstance(util, Unavailable) else int(util.gpu)
        util_mem = util if isinstance(util, Unavailable) else int(util.memory)
        return GpuDevice(
            index=index, name=name, uuid=uuid, pci_bus_id=pci,
            memory_total_bytes=memory[0], memory_used_bytes=memory[1], memory_free_bytes=memory[2],
            memory_reserved_bytes=memory[3],
            utilization_gpu_percent=util_gpu, utilization_memory_percent=util_mem, temperature_c=temp,
            power_draw_w=power, power_limit_w=limit,
            processes=processes[0], error=processes[1], read_at=self.clock(),
        )

    def _memory(self, nvml: Any, handle: Any) -> tuple[Any, Any, Any, Any]:
        """(total, used, free, reserved): the v2 call (R510+), else v1 whose used includes reserved."""
        v2_name = "nvmlDeviceGetMemoryInfo_v2"
        if v2_name not in self.functions_not_found:
            try:
                m = self._call(v2_name, nvml.nvmlDeviceGetMemoryInfo, handle, version=nvml.nvmlMemory_v2)
                return int(m.total), int(m.used), int(m.free), int(m.reserved)
            except NvmlCallError as exc:
                if exc.code == GPU_IS_LOST:
                    raise _GpuLost(exc.call) from None
                if exc.code not in (FUNCTION_NOT_FOUND, ARGUMENT_VERSION_MISMATCH):
                    u = field_unavailable(exc)
                    return u, u, u, u
            except (NvmlTimeout, NvmlBusy) as exc:
                u = field_unavailable(exc)
                return u, u, u, u
        m = self._field("nvmlDeviceGetMemoryInfo", nvml.nvmlDeviceGetMemoryInfo, handle)
        if isinstance(m, Unavailable):
            return m, m, m, m
        reserved = Unavailable("not reported by this driver (before R510)", "used includes reserved memory here")
        return int(m.total), int(m.used), int(m.free), reserved

    def _processes(self, nvml: Any, handle: Any, mapper: GpuPidMapper) -> tuple[tuple[GpuProcess, ...], Optional[Unavailable]]:
        """Compute then graphics processes: the _v3 calls, else _v2 (drivers before 510).

        When neither call exists or answers, the list is empty and the device's error says
        why: an empty list must not read as "no process holds this GPU".
        """
        found: list[GpuProcess] = []
        problems: list[str] = []
        for kind in ("compute", "graphics"):
            base = f"nvmlDevice{'Get' + kind.capitalize()}RunningProcesses"
            entries: Any = None
            for suffix in ("_v3", "_v2"):
                name = base + suffix
                if name in self.functions_not_found:
                    continue
                try:
                    entries = self._call(name, getattr(nvml, name), handle)
                    break
                except NvmlCallError as exc:
                    if exc.code == GPU_IS_LOST:
                        raise _GpuLost(exc.call) from None
                    if exc.code == FUNCTION_NOT_FOUND:
                        continue
                    problems.append(f"{kind} processes: {field_unavailable(exc).reason}")
                    break
                except (NvmlTimeout, NvmlBusy) as exc:
                    problems.append(f"{kind} processes: {field_unavailable(exc).reason}")
                    break
            else:
                problems.append(f"{kind} processes: not in this driver")
            for entry in entries or ():
                found.append(self._process(nvml, entry, kind, mapper))
        error = Unavailable("; ".join(problems), "the process list may be incomplete") if problems else None
        return tuple(found), error

    def _process(self, nvml: Any, entry: Any, kind: str, mapper: GpuPidMapper) -> GpuProcess:
        pid = int(entry.pid)
        used = entry.usedGpuMemory
        name = self._field("nvmlSystemGetProcessName", nvml.nvmlSystemGetProcessName, pid, convert=_text)
        return GpuProcess(
            pid=pid, local_pid=mapper.local_pid(pid),
            used_bytes=int(used) if used is not None else Unavailable("not available", "NVML reports no figure"),
            kind=kind, name=name if isinstance(name, str) else "",
        )


def join_gpus_to_processes(processes: tuple[ProcessInfo, ...], report: GpuReport) -> tuple[ProcessInfo, ...]:
    """Fill ProcessInfo.gpus: one GpuHolding per GPU a process holds (compute and graphics summed)."""
    held: dict[int, dict[int, Any]] = {}
    for device in report.devices:
        for gp in device.processes:
            if gp.local_pid is None:
                continue
            per_gpu = held.setdefault(gp.local_pid, {})
            before = per_gpu.get(device.index)
            if before is None:
                per_gpu[device.index] = gp.used_bytes
            elif isinstance(before, int) and isinstance(gp.used_bytes, int):
                per_gpu[device.index] = before + gp.used_bytes
            else:  # one part unknown: the sum is unknown too
                per_gpu[device.index] = Unavailable("partly not reported")
    if not held:
        return processes
    out = []
    for p in processes:
        of_p = held.get(p.pid)
        if of_p is None:
            out.append(p)
            continue
        holdings = tuple(GpuHolding(gpu_index=i, used_bytes=of_p[i]) for i in sorted(of_p))
        out.append(dataclasses.replace(p, gpus=holdings))
    return tuple(out)


def local_gpu_collector(call_timeout_s: float = 2.0, poll_budget_s: float = 5.0) -> GpuCollector:
    """The collector LocalHost uses: NVML, with nvidia-smi where the binding cannot load."""
    from .gpu_smi import NvidiaSmiCollector  # noqa: PLC0415 - only this factory needs it

    return GpuCollector(call_timeout_s=call_timeout_s, poll_budget_s=poll_budget_s,
                        fallback=NvidiaSmiCollector(timeout_s=poll_budget_s))

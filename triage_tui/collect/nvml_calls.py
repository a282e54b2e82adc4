"""The guarded NVML call layer: every call on one dedicated thread, with a timeout.

A sick GPU can block an NVML call for minutes (the driver waits uninterruptibly), so no
NVML call runs on the caller's thread. One worker thread runs them one at a time; a call
that does not return in time leaves the worker marked busy, and every later call fails fast
with `NvmlBusy` until it returns: blocked calls never pile up behind a stuck one.

Errors are translated here, once: the binding raises `NVMLError` subclasses, and
`NVMLLibraryMismatchError` (not a subclass) from its unversioned wrappers.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Optional

from ..model import Unavailable

# NVML return codes the collector tells apart (nvml.h)
NOT_SUPPORTED = 3
NO_PERMISSION = 4
DRIVER_NOT_LOADED = 9
LIBRARY_NOT_FOUND = 12
FUNCTION_NOT_FOUND = 13
GPU_IS_LOST = 15
LIB_RM_VERSION_MISMATCH = 18
ARGUMENT_VERSION_MISMATCH = 25
UNKNOWN = 999


class NvmlTimeout(Exception):
    """The call did not return within its timeout; the worker stays busy until it does."""

    def __init__(self, call: str, after_s: float) -> None:
        super().__init__(f"{call} did not return within {after_s:g} s")
        self.call = call
        self.after_s = after_s


class NvmlBusy(Exception):
    """An earlier call is still blocked inside the driver; this one was not started."""

    def __init__(self, call: str, since: float) -> None:
        super().__init__(f"{call} has not returned for {time.time() - since:.0f} s")
        self.call = call
        self.since = since


class NvmlCallError(Exception):
    """An NVML error with its code (None when the binding gave none), as plain data."""

    def __init__(self, call: str, code: Optional[int], message: str) -> None:
        super().__init__(f"{call}: {message}")
        self.call = call
        self.code = code
        self.message = message


@dataclass
class _Job:
    name: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    future: Future
    started: float = 0.0
    done: bool = False


class NvmlCallThread:
    """Runs callables on one daemon thread, each with a timeout, never more than one blocked."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._stuck: Optional[_Job] = None
        self._thread: Optional[threading.Thread] = None

    def _ensure_thread(self) -> None:
        if self._thread is None:
            # daemon: a call stuck in the driver must never keep the interpreter from exiting
            self._thread = threading.Thread(target=self._serve, name="nvml-calls", daemon=True)
            self._thread.start()

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            job.started = time.time()
            try:
                result = job.fn(*job.args, **job.kwargs)
            except BaseException as exc:  # noqa: B036 - handed to the waiting caller, never lost
                job.future.set_exception(exc)
            else:
                job.future.set_result(result)
            with self._lock:
                job.done = True
                if self._stuck is job:
                    self._stuck = None
                    self._idle.notify_all()

    def stuck(self) -> Optional[tuple[str, float]]:
        """(call name, when it started) of the call still blocked after its timeout, if any."""
        with self._lock:
            return (self._stuck.name, self._stuck.started) if self._stuck is not None else None

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until no call is stuck (for shutdown and tests); False if one still is."""
        with self._idle:
            return self._idle.wait_for(lambda: self._stuck is None, timeout=timeout_s)

    def run(self, name: str, fn: Callable[..., Any], *args: Any, timeout_s: float, **kwargs: Any) -> Any:
        """fn(*args) on the worker; its result, its exception, NvmlTimeout or NvmlBusy."""
        with self._lock:
            if self._stuck is not None:
                raise NvmlBusy(self._stuck.name, self._stuck.started)
            self._ensure_thread()
            job = _Job(name, fn, args, kwargs, Future())
            self._jobs.put(job)
        try:
            return job.future.result(timeout=max(timeout_s, 0.001))
        except FutureTimeout:
            with self._lock:
                if not job.done:
                    self._stuck = job
            raise NvmlTimeout(name, timeout_s) from None


def error_code(exc: BaseException) -> Optional[int]:
    value = getattr(exc, "value", None)
    return value if isinstance(value, int) else None


def translate(call: str, exc: BaseException) -> NvmlCallError:
    """Any exception out of the binding as an NvmlCallError (FunctionNotFound for a mismatch)."""
    if type(exc).__name__ == "NVMLLibraryMismatchError":
        return NvmlCallError(call, FUNCTION_NOT_FOUND, str(exc))
    code = error_code(exc)
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - str() of an NVMLError calls into the library again
        message = f"NVML error {code}"
    return NvmlCallError(call, code, message or type(exc).__name__)


def field_unavailable(exc: BaseException) -> Unavailable:
    """What a field shows when its call failed (the GPU-lost case is handled by the caller)."""
    if isinstance(exc, NvmlTimeout):
        return Unavailable(f"timed out: {exc.call} did not return within {exc.after_s:g} s",
                           "a sick GPU or driver can block NVML; check `dmesg` for Xid errors")
    if isinstance(exc, NvmlBusy):
        return Unavailable(f"not read: {exc.call} is still blocked in the driver",
                           "a sick GPU or driver can block NVML; check `dmesg` for Xid errors")
    if isinstance(exc, NvmlCallError):
        if exc.code == NOT_SUPPORTED:
            return Unavailable("not supported", "this board or driver does not report it")
        if exc.code == NO_PERMISSION:
            return Unavailable("permission denied", "run triage as root")
        if exc.code == FUNCTION_NOT_FOUND:
            return Unavailable(f"not in this driver: {exc.call}", "an older driver; upgrade it for this figure")
        return Unavailable(f"NVML error: {exc.message}", "")
    return Unavailable(f"{type(exc).__name__}: {exc}", "")


def global_unavailable(exc: BaseException) -> Unavailable:
    """The one line for the whole GPU pane when NVML cannot be used at all."""
    if isinstance(exc, ImportError):
        return Unavailable("NVML binding missing: the Python package nvidia-ml-py is not installed",
                           "pip install nvidia-ml-py")
    if isinstance(exc, (NvmlTimeout, NvmlBusy)):
        return field_unavailable(exc)
    code = exc.code if isinstance(exc, NvmlCallError) else error_code(exc)
    if code == LIBRARY_NOT_FOUND:
        return Unavailable("no NVIDIA driver library: libnvidia-ml.so.1 not found",
                           "no NVIDIA driver on this host, or its library is not on the loader path "
                           "(`ldconfig -p | grep nvidia-ml`)")
    if code == DRIVER_NOT_LOADED:
        return Unavailable("NVIDIA driver not loaded",
                           "is the kernel module loaded? `lsmod | grep nvidia`; `dmesg | grep -i nvrm`")
    if code == LIB_RM_VERSION_MISMATCH:
        return Unavailable("driver/library version mismatch: libnvidia-ml differs from the loaded kernel module",
                           "the driver was upgraded without reloading its module: reboot (or reload the nvidia modules)")
    if code == NO_PERMISSION:
        return Unavailable("NVML: permission denied", "run triage as root or a user with access to /dev/nvidia*")
    if code == FUNCTION_NOT_FOUND:
        return Unavailable("NVML library too old for this binding (function not found)",
                           "upgrade the NVIDIA driver, or use an older nvidia-ml-py")
    message = exc.message if isinstance(exc, NvmlCallError) else str(exc)
    return Unavailable(f"NVML failed: {message}", "")

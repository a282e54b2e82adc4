"""GPUs through the `nvidia-smi` command: the fallback where the NVML binding cannot load.

Replaces running by hand
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,memory.total,... --format=csv,noheader,nounits
  nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory --format=csv,noheader,nounits
Each run has a hard timeout. nvidia-smi stuck in the driver may not die even when killed (an
uninterruptible wait): while an earlier run is still alive, no new one is started and the
report says so, so stuck processes never pile up.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import time
from typing import Optional

from ..model import Unavailable
from ..model.snapshot import GpuProcess, GpuReport
from ..parse.nvidia_smi import (
    COMPUTE_APPS_ARGS,
    QUERY_GPU_ARGS,
    NvidiaSmiParseError,
    parse_compute_apps_csv,
    parse_query_gpu_csv,
)
from .gpu_pids import GpuPidMapper

SMI_HINT = "a sick GPU or driver can block nvidia-smi; check `dmesg` for Xid errors"


class _SmiFailed(Exception):
    def __init__(self, why: Unavailable) -> None:
        super().__init__(why.reason)
        self.why = why


class NvidiaSmiCollector:
    """`collector() -> GpuReport(source="nvidia-smi")`; never raises."""

    def __init__(self, binary: str = "nvidia-smi", timeout_s: float = 5.0, proc_root: str = "/proc") -> None:
        self.binary = binary
        self.timeout_s = timeout_s
        self.proc_root = proc_root
        self._stuck: Optional[tuple[subprocess.Popen, float]] = None

    def _run(self, args: tuple[str, ...]) -> str:
        if self._stuck is not None:
            proc, since = self._stuck
            if proc.poll() is None:
                at = time.strftime("%H:%M:%S", time.localtime(since))
                raise _SmiFailed(Unavailable(f"nvidia-smi started at {at} (PID {proc.pid}) has still not exited", SMI_HINT))
            self._stuck = None
        path = shutil.which(self.binary)
        if path is None:
            raise _SmiFailed(Unavailable("nvidia-smi not found on PATH", "no NVIDIA driver installed on this host"))
        started = time.time()
        proc = subprocess.Popen([path, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", stdin=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"})
        try:
            out, _ = proc.communicate(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()  # our own child; a process in D state ignores even this, hence _stuck
            try:
                proc.communicate(timeout=0.5)
            except subprocess.TimeoutExpired:
                self._stuck = (proc, started)
            raise _SmiFailed(Unavailable(f"nvidia-smi did not answer within {self.timeout_s:g} s", SMI_HINT)) from None
        if proc.returncode != 0:
            first = next((ln.strip() for ln in out.splitlines() if ln.strip()), f"exit status {proc.returncode}")
            raise _SmiFailed(Unavailable(f"nvidia-smi failed: {first}", "see `nvidia-smi` and `dmesg`"))
        return out

    def __call__(self) -> GpuReport:
        try:
            gpu_text = self._run(QUERY_GPU_ARGS)
            devices = parse_query_gpu_csv(gpu_text)
        except _SmiFailed as failed:
            return GpuReport(source="nvidia-smi", error=failed.why)
        except NvidiaSmiParseError as exc:
            return GpuReport(source="nvidia-smi", error=Unavailable(f"unexpected nvidia-smi output: {exc}"))
        driver = next((d for d in _driver_versions(gpu_text)), Unavailable("not reported"))
        apps_error: Optional[Unavailable] = None
        try:
            apps = parse_compute_apps_csv(self._run(COMPUTE_APPS_ARGS))
        except _SmiFailed as failed:
            apps, apps_error = (), failed.why
        except NvidiaSmiParseError as exc:
            apps, apps_error = (), Unavailable(f"unexpected nvidia-smi output: {exc}")
        mapper = GpuPidMapper(self.proc_root)
        by_uuid: dict[str, list[GpuProcess]] = {}
        for uuid, process in apps:
            by_uuid.setdefault(uuid, []).append(dataclasses.replace(process, local_pid=mapper.local_pid(process.pid)))
        now = time.time()
        # Unavailable is falsy by design: test against None, never with `or`
        processes_error = None if apps_error is None else Unavailable(f"processes: {apps_error.reason}", apps_error.hint)
        devices = tuple(
            dataclasses.replace(
                d, processes=tuple(by_uuid.get(d.uuid, ())) if isinstance(d.uuid, str) else (),
                error=d.error if d.error is not None else processes_error,
                read_at=now,
            )
            for d in devices
        )
        return GpuReport(source="nvidia-smi", driver_version=driver,
                         cuda_driver_version=Unavailable("nvidia-smi's CSV query does not report it"), devices=devices)


def _driver_versions(gpu_text: str) -> list[str]:
    """driver_version is the last query field; every row repeats it."""
    out = []
    for line in gpu_text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if cells and cells[-1] and cells[-1][0].isdigit():
            out.append(cells[-1])
    return out

"""GPUs through the `nvidia-smi` command: the fallback where the NVML binding cannot load.

Replaces running by hand
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,memory.total,... --format=csv,noheader,nounits
  nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory --format=csv,noheader,nounits
Each run has a hard timeout. nvidia-smi stuck in the driver may not die even when killed (an
uninterruptible wait): while an earlier run is still alive, no new one is started and the
report says so, so stuck processes never pile up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from typing import Optional

from ..model import Unavailable
from ..model.snapshot import GpuReport
from ..model.text_format import clock
from ..parse.nvidia_smi import COMPUTE_APPS_ARGS, QUERY_GPU_ARGS, gpu_report_from_csv
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
                at = clock(since)
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
        except _SmiFailed as failed:
            return GpuReport(source="nvidia-smi", error=failed.why)
        apps_text: Optional[str] = None
        apps_error: Optional[Unavailable] = None
        try:
            apps_text = self._run(COMPUTE_APPS_ARGS)
        except _SmiFailed as failed:
            apps_error = failed.why
        mapper = GpuPidMapper(self.proc_root)
        return gpu_report_from_csv(gpu_text, apps_text, mapper.local_pid, apps_error, read_at=time.time())

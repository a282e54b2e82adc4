"""Fixtures for the GPU tests: a fake libnvidia-ml.so.1 built from C, its state file, the
collector run in a subprocess against it, and real worker processes for the join."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pytest

from triage_tui.model import from_data
from triage_tui.model.snapshot import GpuReport

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MIB = 1024 * 1024
# the reference incident: 8 x RTX PRO 6000 Blackwell, 76017 MiB used of 97887 MiB, 0 %
TOTAL_MIB = 97887
USED_MIB = 76017
RESERVED_MIB = 535


@dataclass(frozen=True)
class FakeDriver:
    lib_dir: Path  # a current driver
    old_lib_dir: Path  # a pre-510 driver: no _v3 process calls, no memory _v2
    empty_dir: Path  # no library at all


def _build(out_dir: Path, *defines: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = ["gcc", "-shared", "-fPIC", "-O1", *defines, "-o", str(out_dir / "libnvidia-ml.so.1"),
           str(HERE / "fake_nvml.c"), "-lpthread"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        pytest.fail(f"building the fake libnvidia-ml failed:\n{done.stderr}")


@pytest.fixture(scope="session")
def fake_driver(tmp_path_factory: pytest.TempPathFactory) -> FakeDriver:
    if shutil.which("gcc") is None:
        pytest.fail("gcc is needed to build the fake libnvidia-ml (scripts/test.sh installs it)")
    root = tmp_path_factory.mktemp("fake-nvml")
    driver = FakeDriver(root / "current", root / "old", root / "empty")
    _build(driver.lib_dir)
    _build(driver.old_lib_dir, "-DFAKE_OLD_DRIVER")
    driver.empty_dir.mkdir()
    return driver


class GpuState:
    """The fake driver's state file; `write` replaces it atomically (temp file, rename)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._n = 0

    def write(self, text: str) -> None:
        self._n += 1
        tmp = self.path.with_name(f"{self.path.name}.{self._n}.tmp")
        tmp.write_text(text)
        os.replace(tmp, self.path)


def incident_state(pids: list[int], extra: str = "", used_mib: int = USED_MIB, util: int = 0) -> str:
    """Eight GPUs of the reference incident, GPU i held by pids[i]."""
    lines = ["driver 570.86.15", "cuda 12080", f"count {len(pids)}"]
    for i, pid in enumerate(pids):
        lines += [
            f"gpu {i} name NVIDIA RTX PRO 6000 Blackwell Server Edition",
            f"gpu {i} uuid GPU-{i:08x}-1111-2222-3333-444455556666",
            f"gpu {i} pci 00000000:{0x11 + i:02X}:00.0",
            f"gpu {i} mem {TOTAL_MIB * MIB} {RESERVED_MIB * MIB} {used_mib * MIB}",
            f"gpu {i} util {util} 0",
            f"gpu {i} temp {34 + i}",
            f"gpu {i} power 31000 600000",
            f"gpu {i} proc compute {pid} {(used_mib - 9) * MIB}",
        ]
    return "\n".join(lines) + "\n" + extra


class Scenario:
    """The collector in a subprocess on the fake driver; `poll()` returns (report, functions not found)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc

    def _ask(self, command: str) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise AssertionError(f"the scenario process died: {err}")
        return json.loads(line)

    def poll_raw(self) -> dict[str, Any]:
        return self._ask("poll")

    def poll(self, allow_missing: Optional[set[str]] = None) -> GpuReport:
        """One poll. Any function the fake lacks fails the test, unless explicitly allowed."""
        answer = self._ask("poll")
        missing = set(answer["functions_not_found"]) - (allow_missing or set())
        assert not missing, f"the collector called functions the fake driver lacks: {sorted(missing)}"
        return from_data(GpuReport, answer["report"])

    def wait_idle(self) -> bool:
        return bool(self._ask("idle")["idle"])


@pytest.fixture
def gpu_state(tmp_path: Path) -> GpuState:
    return GpuState(tmp_path / "gpu-state")


@pytest.fixture
def scenario(fake_driver: FakeDriver, gpu_state: GpuState) -> Iterator[Callable[..., Scenario]]:
    started: list[subprocess.Popen] = []

    def start(lib: str = "current", timeout_s: float = 2.0, budget_s: float = 5.0, with_smi: bool = False,
              path_dirs: tuple[Path, ...] = (), init_retry_s: float = 10.0) -> Scenario:
        lib_dir = {"current": fake_driver.lib_dir, "old": fake_driver.old_lib_dir, "none": fake_driver.empty_dir}[lib]
        env = {**os.environ, "LD_LIBRARY_PATH": str(lib_dir), "FAKE_NVML_STATE": str(gpu_state.path),
               "PYTHONPATH": str(REPO)}
        if path_dirs:
            env["PATH"] = os.pathsep.join([*map(str, path_dirs), env.get("PATH", "")])
        elif with_smi:  # no nvidia-smi may be found by accident
            env["PATH"] = "/usr/bin:/bin"
        cmd = [sys.executable, str(HERE / "nvml_scenario.py"), "--timeout", str(timeout_s), "--budget", str(budget_s),
               "--init-retry", str(init_retry_s)]
        if with_smi:
            cmd.append("--with-smi")
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, cwd=REPO)
        started.append(proc)
        return Scenario(proc)

    try:
        yield start
    finally:
        for proc in started:
            proc.kill()
            proc.wait()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream:
                    stream.close()


@pytest.fixture
def workers() -> Iterator[Callable[[int], list[int]]]:
    """Spawn N real idle processes (ready handshake: each prints 'ready'); their PIDs."""
    procs: list[subprocess.Popen] = []

    def spawn(n: int) -> list[int]:
        new = [subprocess.Popen(["sh", "-c", "echo ready; exec cat >/dev/null"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True) for _ in range(n)]
        procs.extend(new)
        for p in new:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        return [p.pid for p in new]

    try:
        yield spawn
    finally:
        for p in procs:
            p.kill()
            p.wait()
            for stream in (p.stdin, p.stdout):
                if stream:
                    stream.close()


def real_nvml_installed() -> bool:
    """A real libnvidia-ml in the loader cache defeats the 'library missing' staging."""
    import ctypes.util

    return ctypes.util.find_library("nvidia-ml") is not None

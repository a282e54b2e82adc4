"""The app's GPU pane and the Processes pane's GPU column, on the fake driver (issue 5, "in the app").

Each scenario runs the real app (LocalHost + Incident + TriageApp headless at 200x50) in its own
interpreter (app_gpu_scenario.py: the binding caches the library per process) over a real launcher
with eight workers, the fake NVML saying worker i holds GPU i. The script rewrites the fake's state
between refreshes and records what the panes show after each one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pytest

from .conftest import HERE, REPO, TOTAL_MIB, USED_MIB, FakeDriver, incident_state, real_nvml_installed

pytestmark = pytest.mark.timeout(180)

# eight idle workers; then, each time a line arrives on IN, one more child whose PID is answered on OUT
LAUNCHER = ('pids=""; for i in 1 2 3 4 5 6 7 8; do sleep 600 & pids="$pids $!"; done; echo "ready$pids"; '
            'while read go < "$1"; do sleep 600 & echo "$!" > "$2"; done')


@dataclass(frozen=True)
class Tree:
    launcher: int
    workers: list[int]
    fifo_in: str
    fifo_out: str


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[Tree]:
    fifo_in, fifo_out = tmp_path / "more-in", tmp_path / "more-out"
    os.mkfifo(fifo_in)
    os.mkfifo(fifo_out)
    launcher = subprocess.Popen(["sh", "-c", LAUNCHER, "launcher", str(fifo_in), str(fifo_out)],
                                stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert launcher.stdout is not None
        words = launcher.stdout.readline().split()
        assert words and words[0] == "ready", words
        yield Tree(launcher.pid, [int(w) for w in words[1:]], str(fifo_in), str(fifo_out))
    finally:
        os.killpg(launcher.pid, signal.SIGKILL)
        launcher.wait()
        if launcher.stdout:
            launcher.stdout.close()


def run_app(fake_driver: FakeDriver, tmp_path: Path, tree: Tree, steps: list[dict[str, Any]],
            lib_dir: Optional[Path] = None) -> list[dict[str, Any]]:
    steps_file, out_file = tmp_path / "steps.json", tmp_path / "records.json"
    steps_file.write_text(json.dumps(steps))
    env = {**os.environ, "LD_LIBRARY_PATH": str(lib_dir or fake_driver.lib_dir),
           "FAKE_NVML_STATE": str(tmp_path / "gpu-state"), "PYTHONPATH": str(REPO), "TZ": "UTC",
           "PATH": "/usr/bin:/bin"}  # no nvidia-smi found by accident
    done = subprocess.run([sys.executable, str(HERE / "app_gpu_scenario.py"), str(tree.launcher), str(steps_file),
                           str(out_file)], capture_output=True, text=True, env=env, cwd=REPO, timeout=150)
    assert done.returncode == 0, done.stderr[-4000:]
    records = json.loads(out_file.read_text())
    assert len(records) == len(steps)
    for i, rec in enumerate(records):
        assert rec["snapshots"] == i + 1, rec  # every step was a fresh refresh
        assert rec["last_error"] == "", rec
    return records


def gpu_lines(text: str) -> dict[int, str]:
    """The GPU pane's rows by GPU index (the header line and blank lines left out)."""
    rows = {}
    for line in text.splitlines():
        first = line.split(maxsplit=1)[0] if line.strip() else ""
        if first.isdigit():
            rows[int(first)] = line
    return rows


def test_reference_incident_in_the_gpu_pane_and_the_gpu_column(fake_driver, tmp_path, tree) -> None:
    [rec] = run_app(fake_driver, tmp_path, tree, [{"state": incident_state(tree.workers)}])
    assert rec["gpu_error"] is None
    lines = gpu_lines(rec["gpu_text"])
    assert sorted(lines) == list(range(8)), rec["gpu_text"]
    for i, worker in enumerate(tree.workers):
        cells = lines[i].split()
        assert f"{USED_MIB}/{TOTAL_MIB}MiB" in cells, lines[i]
        assert "0%" in cells, lines[i]
        assert str(worker) in cells, lines[i]  # the worker holding it, by PID
        assert "31/600W" in cells, lines[i]
    column = rec["process_gpu_column"]
    assert {int(pid): gpu for pid, gpu in column.items() if int(pid) in tree.workers} == {
        w: str(i) for i, w in enumerate(tree.workers)}
    assert column[str(tree.launcher)] == "-"


def test_lost_gpus_say_so_while_the_others_keep_updating(fake_driver, tmp_path, tree) -> None:
    # GPU 3: the handle fails (GPU_IS_LOST); GPU 5: the handle works and every query answers GPU_IS_LOST
    later = incident_state(tree.workers, used_mib=50000, util=37, extra="gpu 3 fail handle 15\ngpu 5 fail all 15\n")
    before, after = run_app(fake_driver, tmp_path, tree, [{"state": incident_state(tree.workers)}, {"state": later}])
    assert all("lost" not in line.lower() for line in gpu_lines(before["gpu_text"]).values())
    lines = gpu_lines(after["gpu_text"])
    assert sorted(lines) == list(range(8)), after["gpu_text"]
    for i in (3, 5):
        assert "GPU is lost" in lines[i], lines[i]
        assert f"{USED_MIB}/" not in lines[i] and "50000/" not in lines[i]
    for i in (0, 1, 2, 4, 6, 7):
        cells = lines[i].split()
        assert f"50000/{TOTAL_MIB}MiB" in cells and "37%" in cells, lines[i]  # the new figures, not the old
        assert str(tree.workers[i]) in cells
    column = after["process_gpu_column"]
    assert column[str(tree.workers[3])] == "-" and column[str(tree.workers[5])] == "-"
    assert column[str(tree.workers[0])] == "0" and column[str(tree.workers[7])] == "7"
    assert after["taken_at"] > before["taken_at"]


def test_power_not_supported_is_not_zero_watts(fake_driver, tmp_path, tree) -> None:
    extra = "".join(f"gpu {i} fail power 3\n" for i in range(8))
    [rec] = run_app(fake_driver, tmp_path, tree, [{"state": incident_state(tree.workers, extra=extra)}])
    lines = gpu_lines(rec["gpu_text"])
    assert sorted(lines) == list(range(8)), rec["gpu_text"]
    for line in lines.values():
        cells = line.split()
        assert "n/a/600W" in cells, line  # the draw is unknown; the limit still reads
        assert not any(c.startswith("0/") or c.startswith("0W") for c in cells), line
        assert f"{USED_MIB}/{TOTAL_MIB}MiB" in cells  # the rest of the GPU still reads
    # n/a alone does not say why: the pane says it in words under the rows
    assert "n/a power draw: not supported on GPUs 0,1,2,3,4,5,6,7" in rec["gpu_text"].splitlines(), rec["gpu_text"]
    assert "power limit" not in rec["gpu_text"]


@pytest.mark.parametrize(("state", "reason"), [
    ("init_error 9\n", "NVIDIA driver not loaded"),
    ("init_error 18\n", "driver/library version mismatch"),
], ids=["driver-not-loaded", "version-mismatch"])
def test_no_driver_is_one_line_and_the_processes_pane_keeps_refreshing(fake_driver, tmp_path, tree, state,
                                                                        reason) -> None:
    steps = [{"state": state}, {"state": None, "poke": [tree.fifo_in, tree.fifo_out]}]
    before, after = run_app(fake_driver, tmp_path, tree, steps)
    for rec in (before, after):
        text = rec["gpu_text"].strip()
        assert "\n" not in text and reason in text, text
        assert text.startswith("2 GPUs: no GPUs shown:")  # one line, the pane named in front (no border)
        assert rec["gpu_height"] == 1
        assert rec["gpu_error"] is not None and reason in rec["gpu_error"]
    # the tree: the launcher and its eight workers, then the child it forked between the refreshes
    assert set(before["process_gpu_column"]) == {str(tree.launcher), *map(str, tree.workers)}
    assert set(after["process_gpu_column"]) == {*before["process_gpu_column"], str(after["poked"])}
    assert set(after["process_gpu_column"].values()) == {"-"}
    assert after["process_subtitle"].startswith("10/10 rows") and before["process_subtitle"].startswith("9/9 rows")
    assert after["taken_at"] > before["taken_at"]


def test_library_missing_is_one_line(fake_driver, tmp_path, tree) -> None:
    if real_nvml_installed():
        pytest.skip("a real libnvidia-ml is installed here: 'library missing' cannot be staged")
    [rec] = run_app(fake_driver, tmp_path, tree, [{"state": ""}], lib_dir=fake_driver.empty_dir)
    text = rec["gpu_text"].strip()
    assert "\n" not in text and "libnvidia-ml.so.1 not found" in text and "nvidia-smi" in text, text
    assert len(rec["process_gpu_column"]) == 9

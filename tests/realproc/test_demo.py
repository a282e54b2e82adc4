"""The built-in incident: real processes, renamed workers, a silent log, a refused port, and a clean end."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from triage_tui.collect.logs import LogFollower
from triage_tui.demo.incident import DemoIncident, DemoInfo

WORKERS = 3


def _gone(pids: list[int], timeout: float = 30.0) -> list[int]:
    """PIDs still alive (zombies count as gone) after waiting up to `timeout` for them to end."""
    procs = []
    for pid in pids:
        try:
            procs.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=timeout)
    return [p.pid for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]



def test_launcher_has_its_renamed_workers(demo: DemoInfo) -> None:
    launcher = psutil.Process(demo.launcher_pid)
    children = launcher.children(recursive=True)
    assert sorted(c.pid for c in children) == sorted(demo.worker_pids)
    assert len(children) + 1 == WORKERS + 1
    for rank, pid in enumerate(demo.worker_pids):
        worker = psutil.Process(pid)
        assert "python" not in " ".join(worker.cmdline()).lower()
        assert worker.cmdline()[0] == f"demo::scheduler_TP{rank}"
        assert worker.name() == f"scheduler_TP{rank}"
        assert worker.status() in (psutil.STATUS_SLEEPING, psutil.STATUS_RUNNING)
    assert f"--port {demo.port}" in " ".join(launcher.cmdline())
    assert f"--tp-size {WORKERS}" in " ".join(launcher.cmdline())


def test_workers_share_the_mapped_weights(demo: DemoInfo) -> None:
    for pid in demo.worker_pids:
        maps = Path(f"/proc/{pid}/maps").read_text()
        assert demo.weights_path in maps
        rss_file_kb = int(next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines()
                               if x.startswith("RssFile:")).split()[1])
        assert rss_file_kb >= 16 * 1024  # every page of the 16 MiB file was touched


def test_log_ends_with_a_complete_progress_bar_and_announces_the_port(demo: DemoInfo) -> None:
    tail = LogFollower(demo.log_path).poll()
    assert tail.error is None
    texts = [line.text for line in tail.lines]
    assert "100% Completed" in texts[-1]
    assert any(str(demo.port) in t for t in texts)
    assert tail.partial == ""


def test_the_announced_port_refuses(demo: DemoInfo) -> None:
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", demo.port), timeout=5).close()


def test_stop_leaves_no_process_and_no_file() -> None:
    incident = DemoIncident(workers=2, weights_mb=4)
    info = incident.start()
    incident.stop()
    assert _gone([info.launcher_pid, *info.worker_pids]) == []
    assert not os.path.exists(info.workdir)
    incident.stop()  # idempotent


PARENT = """
import json, signal, sys
from triage_tui.demo.incident import DemoIncident, exit_on_hangup_and_term
exit_on_hangup_and_term()
with DemoIncident(workers=2, weights_mb=4) as d:
    i = d.info
    print(json.dumps({"pids": [i.launcher_pid, *i.worker_pids], "workdir": i.workdir}), flush=True)
    while True:
        signal.pause()
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_demo_is_cleaned_up_however_its_parent_ends(sig: int) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    try:
        started = json.loads(parent.stdout.readline())  # the handshake: the demo is up
        parent.send_signal(sig)
        parent.wait(timeout=60)
        assert _gone(started["pids"]) == []
        # with SIGKILL the launcher cleans up by itself (PR_SET_PDEATHSIG): wait for it to finish
        assert not os.path.exists(started["workdir"])
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.wait()
        parent.stdout.close()


def test_stacks_show_one_rank_departing_from_the_barrier(demo: DemoInfo) -> None:
    """What the demo is for: py-spy finds N-1 ranks in the barrier and one in init_drafter."""
    beside = Path(sys.executable).parent / "py-spy"
    py_spy = str(beside) if beside.exists() else shutil.which("py-spy")
    assert py_spy, "py-spy is a runtime dependency of triage: pip install py-spy"
    dumps = {}
    for pid in demo.worker_pids:
        result = subprocess.run([py_spy, "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        dumps[pid] = result.stdout
    in_barrier = [pid for pid, text in dumps.items() if "all_reduce" in text and "barrier" in text]
    odd = [pid for pid, text in dumps.items() if "init_drafter" in text]
    assert odd == [demo.odd_pid]
    assert sorted(in_barrier) == sorted(p for p in demo.worker_pids if p != demo.odd_pid)

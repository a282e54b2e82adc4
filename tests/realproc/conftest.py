from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from triage_tui.collect.proc_table import read_text
from triage_tui.parse.procfs import parse_stat

from .trees import INCIDENT_TREE, started

WEIGHTS_BYTES = 16 * 2**20
WORKERS = 3


@pytest.fixture(scope="module")
def incident_tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A launcher listening on a loopback port; 3 renamed workers sharing an mmap'd file, stuck on a
    barrier; a busy child; a zombie; a stopped child."""
    weights = tmp_path_factory.mktemp("weights") / "weights.bin"
    with open(weights, "wb") as f:
        f.write(os.urandom(WEIGHTS_BYTES))
    tag = f"triage-test-{uuid.uuid4().hex[:12]}"
    with started(INCIDENT_TREE, tag, str(weights), str(WORKERS)) as (_, info):
        info["tag"] = tag
        # the ready line comes just before the launcher and workers block: wait (by polling /proc,
        # not by guessing a delay) until every one of their threads is asleep
        settle_asleep([info["launcher"], *info["workers"]])
        yield info


def settle_asleep(pids: list[int], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not all(all_threads_sleeping(pid) for pid in pids):
        if time.monotonic() > deadline:
            raise RuntimeError(f"processes {pids} never all went to sleep")
        time.sleep(0.005)


def all_threads_sleeping(pid: int) -> bool:
    states = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        stat = parse_stat(read_text(f"/proc/{pid}/task/{tid}/stat"))
        states.append(stat.state if stat else "?")
    return all(state == "S" for state in states)

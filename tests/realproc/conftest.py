from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

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
        yield info

"""Log discovery from a real child whose stdout is redirected to a file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from triage_tui.collect.logs import LogsCollector, discover_log_paths
from triage_tui.host.base import CollectOptions

CHILD = "import os, sys; print('hello from the child', flush=True); os.write(int(sys.argv[1]), b'R'); sys.stdin.read()"


def test_stdout_file_of_a_child_is_discovered_and_followed(tmp_path: Path) -> None:
    log = tmp_path / "child.out"
    extra = tmp_path / "extra.log"
    extra.write_bytes(b"from --log\n")
    ready_r, ready_w = os.pipe()
    with open(log, "wb") as out:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(ready_w)], stdin=subprocess.PIPE, stdout=out, stderr=subprocess.PIPE,
            pass_fds=(ready_w,), env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    os.close(ready_w)
    try:
        assert os.read(ready_r, 1) == b"R"
        found = discover_log_paths([child.pid, os.getpid(), 999_999_999])
        assert (str(log), f"stdout of PID {child.pid}") in found
        assert all(path != "" for path, _ in found)
        tails = LogsCollector()([child.pid], CollectOptions(logs=(str(extra),)))
        by_path = {t.path: t for t in tails}
        assert by_path[str(extra)].source == "--log"
        assert [x.text for x in by_path[str(log)].lines] == ["hello from the child"]
        assert by_path[str(log)].source == f"stdout of PID {child.pid}"
        # stderr is a pipe, not a file: not discovered
        assert not any(src == f"stderr of PID {child.pid}" for _, src in found)
    finally:
        os.close(ready_r)
        child.kill()
        child.communicate()

"""The `m` view over SSH reads the node's smaps (through the agent, or one script agentless), never the
client's /proc: the local reader is instrumented to fail the test if it is used for the remote PIDs."""

from __future__ import annotations

import builtins
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from triage_tui.collect import smaps_files
from triage_tui.host.ssh import SshHost
from triage_tui.model.unavailable import Unavailable

from .conftest import Node


@pytest.mark.parametrize("agentless", [False, True])
def test_mappings_come_from_the_node(node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentless: bool) -> None:
    mapped = tmp_path / f"mapped-{uuid.uuid4().hex[:8]}.bin"
    mapped.write_bytes(b"x" * (1 << 20))
    code = ("import mmap, sys, time\n"
            f"f = open({str(mapped)!r}, 'rb'); m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ); m[:]\n"
            "print('READY', flush=True); time.sleep(600)\n")
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "READY"
        watched = {str(p.pid) for p in procs}
        real_open = builtins.open

        def guarded_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
            parts = str(file).split("/")
            if len(parts) > 3 and parts[1] == "proc" and parts[2] in watched and parts[3] in ("smaps", "maps"):
                raise AssertionError(f"the client's /proc was read for a remote PID: {file}")
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", guarded_open)
        monkeypatch.setattr(smaps_files, "mappings_by_file", lambda *a, **k: pytest.fail("local reader used"))
        host = SshHost(node.options(), agentless=agentless)
        try:
            host.resolve([str(procs[0].pid)])
            result = host.mappings_by_file(procs[0].pid, [p.pid for p in procs])
            gone = host.mappings_by_file(2**22 + 11, [])
        finally:
            host.close()
        assert not isinstance(result, Unavailable), result
        row = next(m for m in result if m.path == str(mapped))
        assert row.rss_bytes >= 1 << 20 and row.shared_by == 2  # both processes map it
        assert isinstance(gone, Unavailable) and "no such process" in gone.reason and "on the node" in gone.reason
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=30)

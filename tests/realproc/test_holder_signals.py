"""The agentless py-spy holder leaves nothing behind when a signal lands while it starts (#16's hygiene).

A hang-up can reach the holder's shell at any moment of its start: between mktemp and the traps, or while mktemp
itself runs. Before the traps were set first (and mktemp made to ignore the signals), 30 of 300 hang-ups at moments
spread over the first 3 ms left the private directory on the node (the one agentless failure of
tests/ssh/test_ssh_hygiene.py seen under load). Each shell here is the real one the node would run, under `sh -c`
in its own session, as sshd starts a command; the whole group gets the HUP, as a dropped session's would.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from triage_tui.host.ssh_agentless_stacks import holder_command

SHELLS = [s for s in ("sh", "bash", "dash") if shutil.which(s)]


@pytest.mark.parametrize("shell", SHELLS)
def test_a_hangup_at_any_moment_of_the_holders_start_leaves_no_directory(tmp_path: Path, shell: str) -> None:
    left_after = []
    exits = set()
    for i in range(300):
        node_tmp = tmp_path / f"n{i}"
        node_tmp.mkdir()
        holder = subprocess.Popen([shell, "-c", holder_command(10)], stdin=subprocess.PIPE,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env=dict(os.environ, TMPDIR=str(node_tmp)), start_new_session=True)
        time.sleep(i * 10e-6)  # the moment the signal lands, spread over the start (not a timing assertion)
        try:
            os.killpg(holder.pid, signal.SIGHUP)
        except ProcessLookupError:
            pass
        assert holder.stdin is not None
        holder.stdin.close()  # and the session's stdin ends, as sshd's does
        exits.add(holder.wait(timeout=30))
        if list(node_tmp.iterdir()):
            left_after.append(i)
    assert left_after == [], f"{shell}: the directory stayed after the HUP at these starts: {left_after}"
    assert exits & {129, -signal.SIGHUP}  # the hang-ups did land (some before the traps, most after)

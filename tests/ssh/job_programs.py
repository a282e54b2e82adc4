"""The program each test "node" runs: a launcher and its ranks, as a job's piece on one node.

`python3 job_programs.py ROLE RANKS READY_FILE job_launcher` — every rank blocks reading a pipe nobody writes (a collective whose
peers are on other nodes, as the node sees it); with ROLE `crash` the last rank dies of SIGSEGV first (with ROLE `elsewhere` it sleeps in another function), and
the launcher, itself blocked, never reaps it (a zombie with its signal, as under a wedged launcher).
Writes READY_FILE once every rank is in place.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

RANK = """
import os, signal, sys, time
rank = int(sys.argv[1]); odd = sys.argv[2]
if odd == "crash":
    time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGSEGV)
def wait_for_peers():
    r, w = os.pipe()
    os.read(r, 1)
def somewhere_else():
    time.sleep(3600)
if odd == "elsewhere":
    somewhere_else()
wait_for_peers()
"""


def main() -> None:
    role, ranks, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    children = []
    for rank in range(ranks):
        odd = role if role in ("crash", "elsewhere") and rank == ranks - 1 else "no"
        children.append(subprocess.Popen([sys.executable, "-c", RANK, str(rank), odd, "job_rank"]))
    if role == "crash":
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the rank has died when its /proc state reads Z
            try:
                with open(f"/proc/{children[-1].pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        break
            except OSError:
                break
            time.sleep(0.05)
    with open(ready, "w") as f:  # the test waits for this file
        f.write("READY\n")
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    r, w = os.pipe()
    os.read(r, 1)  # the launcher waits too, and never reaps


if __name__ == "__main__":
    main()

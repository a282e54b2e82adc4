"""Which processes may have forked since the last pass: the parents of the PIDs the kernel handed out since.

Replaces, for the tree follower (proc_tree.py), reading the children file of every process that ran (`cat
/proc/PID/task/PID/children`: a process that ran may have forked) when few PIDs were created meanwhile. The
kernel hands PIDs out in order: the last one it gave in our PID namespace is the fifth field of /proc/loadavg
("0.20 0.18 0.12 1/80 11206"). Every fork and every new thread anywhere below our namespace takes the next one,
so the PIDs created since a pass are those after its cursor, up to the cursor now. The stat line of each such
PID that still exists names its parent process (a thread's names its process's parent: reading that parent's
children costs a file, misses nothing). A process of the tree none of them names did not fork since.

Measured on this project's VM: a thousand processes that each ran cost a thousand children files a pass; on a
node where few processes start, the PIDs since the last pass are a handful of stat reads.

When it does not answer (None): the first passes, a /proc that is not our own PID namespace's (its "self" is not
our PID), an unreadable loadavg, a wrap past pid_max, or more new PIDs than the caller would read children files
(then reading those is cheaper). A PID given out while its fork was still under way (not yet in /proc, or not
yet on its parent's list when the children were read) is covered by the window: each pass looks at the PIDs
since the cursor of the pass before last, not of the last. The tree follower's slow rotation bounds whatever
is left (a wrap of the whole PID space between two passes). Pure Python 3.8, standard library only.
"""

from __future__ import annotations

import os
from typing import Optional

from .proc_table import read_bytes


class NewPids:
    """The PID cursor of the last two passes, and the parents of the PIDs created since (see the module doc)."""

    def __init__(self, proc: str = "/proc") -> None:
        self.proc = proc
        self._cursors: list[int] = []  # the cursor at the start of the last three passes, oldest first
        self.looked = 0  # PIDs whose stat line was looked at, since start (for the tests and the benchmarks)
        self.answered = 0  # passes `parents` answered (not None), since start
        try:  # our own namespace's /proc: its "self" is our PID as the kernel gives it to us
            self._ours = os.readlink(f"{proc}/self") == str(os.getpid())
        except OSError:
            self._ours = False

    def start_pass(self) -> None:
        """Read the cursor now, before the pass reads any stat line or children file."""
        cursor = self._cursor() if self._ours else None
        if cursor is None:
            self._cursors = []
            return
        self._cursors = [*self._cursors[-2:], cursor]

    def parents(self, at_most: int) -> Optional[set[int]]:
        """The parent PIDs of every process or thread created since the cursor of the pass before last (up to
        this pass's); None when that cannot be told or would take more than `at_most` stat reads."""
        if len(self._cursors) < 3:
            return None
        since, now = self._cursors[0], self._cursors[-1]
        if now < since or now - since > at_most:  # wrapped past pid_max, or dearer than the children files
            return None
        out: set[int] = set()
        for pid in range(since + 1, now + 1):
            self.looked += 1
            try:
                raw = read_bytes(f"{self.proc}/{pid}/stat")
            except OSError:
                continue  # gone again (or not a process we may see): no child of anyone any more
            fields = raw[raw.rfind(b")") + 2:].split()
            try:
                out.add(int(fields[1]))
            except (IndexError, ValueError):
                return None  # a stat line not as expected: say nothing rather than miss a child
        self.answered += 1
        return out

    def _cursor(self) -> Optional[int]:
        try:
            return int(read_bytes(f"{self.proc}/loadavg").split()[4])
        except (OSError, IndexError, ValueError):
            return None

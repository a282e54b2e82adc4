"""The logs source of a snapshot: the `--log` files and the files the tree writes, each followed by offset.

Replaces `tail -F server.log` (and `ls -l /proc/PID/fd/1` to find where stdout went): the follower is
log_follower.py, the discovery log_discovery.py, the line levels log_levels.py.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Union

from ..model.options import CollectOptions
from ..model.snapshot import LogTail, ProcessInfo
from .log_discovery import RECHECK_TICKS, StreamLinks, discover_log_paths
from .log_follower import LogFollower
from .log_levels import classify_line
from .log_readable import check_log_readable

__all__ = ["RECHECK_TICKS", "LogFollower", "LogsCollector", "check_log_readable", "classify_line", "discover_log_paths"]

MAX_FOLLOWED = 32  # files followed for the life of an incident (a tree that churns logs stays bounded)


class LogsCollector:
    """The logs source of a snapshot: `--log` files plus discovered stdout/stderr files.

    Called once per tick by the snapshot collector as `collector(processes, options)`. Keeps one
    follower per path for the life of the incident, so a discovered log stays followed after the
    process that wrote it exits.
    """

    def __init__(self, proc_root: str = "/proc", clock: Callable[[], float] = time.time) -> None:
        self.proc_root = proc_root
        self.clock = clock
        self._followers: dict[str, LogFollower] = {}
        self._links = StreamLinks(proc_root)

    def __call__(self, processes: Sequence[Union[ProcessInfo, int]], options: CollectOptions) -> tuple[LogTail, ...]:
        wanted: list[tuple[str, str]] = [(path, "--log") for path in options.logs]
        if options.discover_logs:
            wanted += self._links.paths(processes)
        for path, source in wanted:
            key = os.path.abspath(path)
            if key not in self._followers and (source == "--log" or len(self._followers) < MAX_FOLLOWED):
                self._followers[key] = LogFollower(path, source=source, clock=self.clock)
        return tuple(follower.poll() for follower in self._followers.values())

    def close(self) -> None:
        for follower in self._followers.values():
            follower.close()
        self._followers.clear()

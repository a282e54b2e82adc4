"""One process's memory mappings summed per backing file: what the `m` key shows.

Read on demand through `Host.mappings_by_file` (this machine's /proc for LocalHost, the node's for
SshHost); never part of a refresh and never recorded, so a replay has none to show.
"""

from __future__ import annotations

from dataclasses import dataclass

ANON = "[anonymous]"


@dataclass(frozen=True)
class FileMapping:
    """All mappings of one file (or one kind of anonymous memory) in one process."""

    path: str
    mappings: int
    size_bytes: int
    rss_bytes: int
    pss_bytes: int
    shared_bytes: int  # Shared_Clean + Shared_Dirty
    private_bytes: int  # Private_Clean + Private_Dirty
    swap_bytes: int
    shared_by: int = 1  # how many target processes map this path (this one included)

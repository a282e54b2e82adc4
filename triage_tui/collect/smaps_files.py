"""A process's mappings grouped by file: what `cat /proc/PID/smaps` shows, summed per backing file.

On demand only (the `m` key): a full smaps read walks every mapping and takes the target's mm lock,
so it is never part of a refresh. The parsing is pure and tested on captured smaps text; the
"shared by" count reads the cheaper /proc/PID/maps of the other target processes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from ..model.mappings import ANON, FileMapping


def _is_header(line: str) -> bool:
    # "7f1c2a000000-7f1c2a021000 rw-p 00000000 00:00 0   [heap]"
    first = line.split(" ", 1)[0]
    return "-" in first and all(c in "0123456789abcdef-" for c in first)


def _path_of_header(line: str) -> str:
    parts = line.split(None, 5)
    if len(parts) < 6 or not parts[5].strip():
        return ANON
    return parts[5].strip()


_FIELDS = {
    "Size": "size",
    "Rss": "rss",
    "Pss": "pss",
    "Shared_Clean": "shared",
    "Shared_Dirty": "shared",
    "Private_Clean": "private",
    "Private_Dirty": "private",
    "Swap": "swap",
}


def parse_smaps(text: str) -> list[FileMapping]:
    """Group smaps text by path; largest PSS first. Sizes in smaps are kB."""
    totals: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if _is_header(line):
            path = _path_of_header(line)
            current = totals.setdefault(path, {"mappings": 0, "size": 0, "rss": 0, "pss": 0, "shared": 0, "private": 0, "swap": 0})
            current["mappings"] += 1
            continue
        if current is None or ":" not in line:
            continue
        key, _, rest = line.partition(":")
        slot = _FIELDS.get(key.strip())
        if slot is None:
            continue
        value = rest.split()
        if value and value[0].isdecimal():
            current[slot] += int(value[0]) * 1024
    result = [
        FileMapping(
            path=path,
            mappings=t["mappings"],
            size_bytes=t["size"],
            rss_bytes=t["rss"],
            pss_bytes=t["pss"],
            shared_bytes=t["shared"],
            private_bytes=t["private"],
            swap_bytes=t["swap"],
        )
        for path, t in totals.items()
    ]
    result.sort(key=lambda m: (-m.pss_bytes, -m.rss_bytes, m.path))
    return result


def paths_in_maps(text: str) -> set[str]:
    """The file paths one /proc/PID/maps text maps (anonymous and [special] regions left out)."""
    paths: set[str] = set()
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/"):
            paths.add(parts[5].strip())
    return paths


def count_sharers(mappings: Sequence[FileMapping], maps_texts: Iterable[str]) -> list[FileMapping]:
    """Set `shared_by` on each file mapping: 1 (the process itself) + the other processes mapping it."""
    others = [paths_in_maps(t) for t in maps_texts]
    out = []
    for m in mappings:
        if m.path.startswith("/"):
            n = 1 + sum(1 for paths in others if m.path in paths)
            out.append(FileMapping(**{**m.__dict__, "shared_by": n}))
        else:
            out.append(m)
    return out


def mappings_by_file(pid: int, target_pids: Sequence[int], proc_root: str = "/proc") -> list[FileMapping]:
    """`cat /proc/PID/smaps`, grouped by file, with how many of `target_pids` map each file.

    Raises OSError when the process's smaps cannot be read (exited, permission denied);
    other processes' maps that cannot be read are simply not counted.
    """
    with open(os.path.join(proc_root, str(pid), "smaps"), encoding="utf-8", errors="replace") as f:
        mappings = parse_smaps(f.read())
    texts = []
    for other in target_pids:
        if other == pid:
            continue
        try:
            with open(os.path.join(proc_root, str(other), "maps"), encoding="utf-8", errors="replace") as f:
                texts.append(f.read())
        except OSError:
            continue
    return count_sharers(mappings, texts)

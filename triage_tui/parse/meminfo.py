"""Parse /proc/meminfo (what `free -b` reads) into bytes, and derive free's columns."""

from __future__ import annotations


def parse_meminfo(text: str) -> dict[str, int]:
    """`MemTotal:  1024 kB` → {"MemTotal": 1048576}. Values without a unit are counts (HugePages_*)."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        fields = rest.split()
        if not sep or not fields or not fields[0].isdigit():
            continue
        out[key.strip()] = int(fields[0]) * (1024 if len(fields) > 1 and fields[1] == "kB" else 1)
    return out


def free_columns(info: dict[str, int]) -> dict[str, int]:
    """free(1)'s figures: used = total - free - buffers - cache (cache includes SReclaimable)."""
    out: dict[str, int] = {}
    if "MemTotal" in info and "MemFree" in info:
        cache = info.get("Cached", 0) + info.get("SReclaimable", 0)
        buff_cache = info.get("Buffers", 0) + cache
        out.update(total=info["MemTotal"], free=info["MemFree"], buff_cache=buff_cache,
                   used=max(info["MemTotal"] - info["MemFree"] - buff_cache, 0))
    for src, dst in (("MemAvailable", "available"), ("Shmem", "shared"), ("SwapTotal", "swap_total")):
        if src in info:
            out[dst] = info[src]
    if "SwapTotal" in info and "SwapFree" in info:
        out["swap_used"] = info["SwapTotal"] - info["SwapFree"]
    return out

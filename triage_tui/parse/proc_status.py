"""Parse /proc/PID/status: the memory split (VmRSS, RssAnon, RssFile, RssShmem), threads, context switches."""

from __future__ import annotations


def parse_proc_status(text: str) -> dict[str, str]:
    """`Key:\tvalue` lines → {"Key": "value"} (raw text; see status_bytes / status_int)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def status_bytes(fields: dict[str, str], key: str) -> int | None:
    """A `kB` field in bytes, or None when absent (kernel threads have no VmRSS)."""
    parts = fields.get(key, "").split()
    if not parts or not parts[0].isdigit():
        return None
    return int(parts[0]) * (1024 if len(parts) > 1 and parts[1] == "kB" else 1)


def status_int(fields: dict[str, str], key: str) -> int | None:
    value = fields.get(key, "").split()
    return int(value[0]) if value and value[0].lstrip("-").isdigit() else None

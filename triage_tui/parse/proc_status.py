"""`cat /proc/PID/status` → ProcessInfo (state, memory split, threads, context switches, NSpid)."""

from __future__ import annotations

from ..model.snapshot import ProcessInfo
from .text_errors import ParseError

_KB = {"VmRSS": "rss_bytes", "RssAnon": "rss_anon_bytes", "RssFile": "rss_file_bytes", "RssShmem": "rss_shmem_bytes",
       "VmSize": "vms_bytes", "VmSwap": "swap_bytes"}
_INT = {"Threads": "threads", "voluntary_ctxt_switches": "ctx_voluntary",
        "nonvoluntary_ctxt_switches": "ctx_involuntary"}


def looks_like_status(text: str) -> bool:
    keys = {line.split(":", 1)[0] for line in text.splitlines() if ":" in line}
    return "State" in keys and ("Pid" in keys or "Name" in keys)


def parse_proc_status(text: str) -> ProcessInfo:
    """One status file. Raises ParseError without Pid or State."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and key.strip() not in fields:
            fields[key.strip()] = value.strip()
    if "Pid" not in fields or "State" not in fields:
        raise ParseError("a /proc/PID/status needs Pid: and State: lines")
    try:
        pid = int(fields["Pid"])
        kw: dict = {"ppid": int(fields.get("PPid", "0") or 0)}
        for key, attr in _KB.items():
            if key in fields:
                kw[attr] = int(fields[key].split()[0]) * 1024
        for key, attr in _INT.items():
            if key in fields:
                kw[attr] = int(fields[key])
        if "NSpid" in fields:
            kw["nspid"] = tuple(int(x) for x in fields["NSpid"].split())
    except ValueError as exc:
        raise ParseError(f"unreadable figure in /proc/PID/status: {exc}") from None
    state = fields["State"][:1] or "?"
    return ProcessInfo(pid=pid, name=fields.get("Name", "?"), state=state, **kw)

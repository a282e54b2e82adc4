"""`ps aux` and `ps -eo pid,ppid,stat,...` output → ProcessInfo rows, driven by the header line.

Works on any column order ps prints; the last column (COMMAND/CMD/ARGS) may hold spaces.
Sizes: ps prints RSS and VSZ in KiB. TIME is `[[dd-]hh:]mm:ss` (or `m:ss` in `ps aux`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..model.snapshot import ProcessInfo
from ..model.unavailable import Unavailable
from .text_errors import ParseError

KNOWN = frozenset({
    "USER", "UID", "PID", "PPID", "%CPU", "PCPU", "%MEM", "VSZ", "VSIZE", "RSS", "RSZ", "TTY", "TT", "STAT", "S",
    "START", "STARTED", "TIME", "CPUTIME", "COMMAND", "CMD", "ARGS", "COMM", "ELAPSED", "ETIME", "ETIMES", "WCHAN",
    "NLWP", "THCNT", "MAJFLT", "MAJ_FLT", "MINFLT", "MIN_FLT", "PRI", "NI", "LWP", "TID", "PSR", "C", "F", "SZ",
    "ADDR", "PGID", "SID", "SESS", "TPGID", "LSTART", "STIME",
    # top / htop's process table
    "PR", "VIRT", "RES", "SHR", "TIME+", "SWAP", "CODE", "DATA", "P", "NTH", "nTH", "PGRP",
})
_LAST = ("COMMAND", "CMD", "ARGS")
_TIME = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$")


@dataclass(frozen=True)
class PsTable:
    headers: tuple[str, ...]
    processes: tuple[ProcessInfo, ...]
    skipped: tuple[str, ...] = ()  # lines under the header that did not parse


# ps's header for each -o keyword (procps names; `wchan:32` sets a width, `pid=` hides the header)
_O_HEADERS = {
    "pid": "PID", "ppid": "PPID", "tid": "TID", "lwp": "LWP", "user": "USER", "euser": "USER", "uid": "UID",
    "stat": "STAT", "state": "S", "s": "S", "wchan": "WCHAN", "nwchan": "WCHAN", "cmd": "CMD", "args": "COMMAND",
    "command": "COMMAND", "comm": "COMMAND", "ucomm": "COMMAND", "pcpu": "%CPU", "%cpu": "%CPU", "pmem": "%MEM",
    "%mem": "%MEM", "rss": "RSS", "rssize": "RSS", "rsz": "RSZ", "vsz": "VSZ", "vsize": "VSZ", "time": "TIME",
    "cputime": "TIME", "etime": "ELAPSED", "etimes": "ELAPSED", "nlwp": "NLWP", "thcount": "NLWP",
    "majflt": "MAJFLT", "maj_flt": "MAJFLT", "minflt": "MINFLT", "min_flt": "MINFLT", "tty": "TT", "tname": "TT",
    "ni": "NI", "nice": "NI", "pri": "PRI", "psr": "PSR", "pgid": "PGID", "sid": "SID", "lstart": "STARTED",
    "start": "START", "stime": "STIME",
}
_AUX = "USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND"
_EF = "UID PID PPID C STIME TTY TIME CMD"


def header_from_command(command: str) -> str | None:
    """The header a `ps` command line prints, for its rows pasted without it (a `| grep` or `| awk` after ps
    removes the header line): `ps aux`, `ps -ef`, `ps -eo pid,state,wchan:32,cmd`. None for anything else."""
    words = command.split("|")[0].split()
    while words and words[0] in ("sudo", "env", "command"):
        words = words[1:]
    if not words or words[0] not in ("ps", "/bin/ps", "/usr/bin/ps"):
        return None
    args = words[1:]
    for k, word in enumerate(args):
        fmt = None
        if word in ("-o", "o", "-O", "--format", "-eo", "-ao", "-axo", "axo") and k + 1 < len(args):
            fmt = args[k + 1]
        elif word.startswith("--format="):
            fmt = word.split("=", 1)[1]
        elif word.startswith("-") and "o" in word[1:] and not word.startswith("--"):
            rest = word[word.index("o", 1) + 1:]
            fmt = rest or (args[k + 1] if k + 1 < len(args) else None)
        if fmt:
            names = []
            for item in fmt.replace(" ", ",").split(","):
                key = item.split("=", 1)[0].split(":", 1)[0].strip().lower()
                if not key:
                    continue
                if key not in _O_HEADERS:
                    return None
                names.append(_O_HEADERS[key])
            return " ".join(names) if "PID" in names else None
    flags = "".join(a.lstrip("-") for a in args)
    if set("aux") <= set(flags):
        return _AUX
    if "e" in flags and "f" in flags:
        return _EF
    return None


def is_headerless_row(header: str, line: str) -> bool:
    """True when `line` reads as a row under `header` (its PID column a number)."""
    try:
        _row(tuple(header.split()), line)
    except (ParseError, ValueError, IndexError, KeyError):
        return False
    return True


def is_ps_header(line: str) -> bool:
    cols = line.split()
    return "PID" in cols and len(cols) >= 3 and sum(c in KNOWN for c in cols) >= len(cols) - 1


def parse_cputime(text: str) -> float:
    m = _TIME.match(text.strip())
    if not m:
        raise ParseError(f"not a ps TIME: {text!r}")
    days, hours, minutes, seconds = m.groups()
    return int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)


def parse_ps(text: str) -> PsTable:
    """The first ps table in `text`. Raises ParseError when there is no ps header."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if is_ps_header(line)), None)
    if start is None:
        raise ParseError("no ps header line (a line with PID and other ps column names)")
    headers = tuple(lines[start].split())
    rows: list[ProcessInfo] = []
    skipped: list[str] = []
    for line in lines[start + 1:]:
        if not line.strip():
            if rows:
                break
            continue
        if is_ps_header(line):
            break
        try:
            rows.append(_row(headers, line))
        except (ParseError, ValueError, IndexError):
            skipped.append(line)
    return PsTable(headers, tuple(rows), tuple(skipped))


_TOP_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def _top_size(text: str) -> int:
    """top prints KiB, or `1.2g`, `450m` when the number is wide."""
    unit = text[-1:].lower()
    if unit in _TOP_UNITS:
        return int(float(text[:-1]) * _TOP_UNITS[unit])
    return int(text) * 1024


def _row(headers: tuple[str, ...], line: str) -> ProcessInfo:
    last_is_cmd = headers[-1] in _LAST or headers[-1] == "COMM"
    parts = line.split(None, len(headers) - 1) if last_is_cmd else line.split()
    if len(parts) < len(headers) - (1 if last_is_cmd else 0):
        raise ParseError(f"too few columns: {line!r}")
    cells = dict(zip(headers, parts, strict=False))
    pid = int(cells["PID"])
    command = cells.get("COMMAND") or cells.get("CMD") or cells.get("ARGS") or ""
    cmdline = tuple(command.split())
    kthread = command.startswith("[") and command.endswith("]")  # ps shows a kernel thread's name in brackets
    comm = cells.get("COMM") or (command[1:-1] if kthread else os.path.basename(cmdline[0]) if cmdline else "?")
    stat = cells.get("STAT") or cells.get("S") or "?"
    if stat == "?" and command.endswith("<defunct>"):  # `ps -ef` / `docker top` have no STAT: a zombie says so in CMD
        stat = "Z"
    kw: dict = {}
    if "%CPU" in cells or "PCPU" in cells:
        kw["cpu_percent"] = float(cells.get("%CPU") or cells["PCPU"])
    for key in ("TIME", "CPUTIME", "TIME+"):
        if key in cells:
            kw["cpu_time_s"] = parse_cputime(cells[key])
    for key, field in (("RSS", "rss_bytes"), ("RSZ", "rss_bytes"), ("VSZ", "vms_bytes"), ("VSIZE", "vms_bytes")):
        if key in cells:
            kw[field] = int(cells[key]) * 1024
    for key, field in (("RES", "rss_bytes"), ("VIRT", "vms_bytes")):  # top: KiB, or with a unit suffix
        if key in cells and key not in ("RSS", "VSZ"):
            kw[field] = _top_size(cells[key])
    for key in ("MAJFLT", "MAJ_FLT"):
        if key in cells and cells[key] != "-":
            kw["major_faults"] = int(cells[key])
    for key in ("NLWP", "THCNT"):
        if key in cells:
            kw["threads"] = int(cells[key])
    if "WCHAN" in cells and cells["WCHAN"] not in ("-", "0"):
        kw["wchan"] = cells["WCHAN"]
    if "USER" in cells:
        kw["user"] = cells["USER"]
    return ProcessInfo(pid=pid, ppid=int(cells["PPID"]) if "PPID" in cells else 0, name=comm, cmdline=cmdline,
                       state=stat[0], error=None if stat[0] != "?" else Unavailable("no STAT column"), **kw)

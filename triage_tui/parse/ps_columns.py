"""Parse `ps -eo pid=,ppid=,stat=,nlwp=,rss=,vsz=,time=,user:32=,args=` (fixed columns, no header).

The agentless SSH path runs exactly that command on the node; `PS_COLUMNS_COMMAND` is the line to run.
RSS and VSZ are KiB in ps; returned in bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

PS_COLUMNS_COMMAND = "LC_ALL=C ps -eo pid=,ppid=,stat=,nlwp=,rss=,vsz=,time=,user:32=,args="


@dataclass(frozen=True)
class PsRow:
    pid: int
    ppid: int
    stat: str
    threads: int
    rss_bytes: int
    vsz_bytes: int
    cpu_time_s: float
    user: str
    args: str


def parse_cpu_time(text: str) -> float:
    """ps TIME: `[DD-]HH:MM:SS` → seconds."""
    days = 0
    if "-" in text:
        d, _, text = text.partition("-")
        days = int(d)
    parts = [int(x) for x in text.split(":")]
    seconds = 0
    for part in parts:
        seconds = seconds * 60 + part
    return float(days * 86400 + seconds)


def parse_ps_columns(text: str) -> list[PsRow]:
    """Rows of the command above; lines that do not parse are skipped (ps may print a warning)."""
    rows = []
    for line in text.splitlines():
        parts = line.split(None, 8)
        if len(parts) < 8 or not parts[0].isdigit():
            continue
        try:
            rows.append(PsRow(
                pid=int(parts[0]), ppid=int(parts[1]), stat=parts[2], threads=int(parts[3]),
                rss_bytes=int(parts[4]) * 1024, vsz_bytes=int(parts[5]) * 1024, cpu_time_s=parse_cpu_time(parts[6]),
                user=parts[7], args=parts[8] if len(parts) > 8 else "",
            ))
        except ValueError:
            continue
    return rows


def subtree(rows: list[PsRow], roots: list[int]) -> list[PsRow]:
    """The roots and all their descendants, parents before children."""
    children: dict[int, list[PsRow]] = {}
    by_pid = {r.pid: r for r in rows}
    for r in rows:
        children.setdefault(r.ppid, []).append(r)
    out: list[PsRow] = []
    seen: set[int] = set()
    stack = [by_pid[p] for p in reversed(roots) if p in by_pid]
    while stack:
        row = stack.pop()
        if row.pid in seen:
            continue
        seen.add(row.pid)
        out.append(row)
        stack.extend(reversed(children.get(row.pid, [])))
    return out

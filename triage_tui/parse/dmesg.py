"""Kernel log lines → OOM-killer and segfault events (pure; also used on pasted `dmesg` text).

Understands `dmesg` ("[  123.456] msg"), `dmesg -T` ("[Sun Nov 29 13:43:13 2026] msg"),
/dev/kmsg records ("6,1234,123456789,-;msg") and bare messages.
"""

from __future__ import annotations

import re
import time
from typing import Optional

from ..model.snapshot import KernelEvent
from ..model.unavailable import Maybe, Unavailable

_KMSG = re.compile(r"^\s*\d+,\d+,(?P<usec>\d+),[^;]*;(?P<msg>.*)$")
_DMESG = re.compile(r"^\s*\[\s*(?P<secs>\d+\.\d+)\]\s?(?P<msg>.*)$")
_DMESG_T = re.compile(r"^\s*\[(?P<date>[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\]\s?(?P<msg>.*)$")

_OOM_KILLED = re.compile(r"(?:Out of memory|Memory cgroup out of memory):\s+Killed process (?P<pid>\d+)"
                         r"(?: \((?P<comm>[^()\n]{1,64})\))?")
_OOM_KILL_SUMMARY = re.compile(r"\boom-kill:[^\n]{0,512}?\bpid=(?P<pid>\d{1,10})")
_OOM_REAPER = re.compile(r"oom_reaper: reaped process (?P<pid>\d+)(?: \((?P<comm>[^()\n]{1,64})\))?")
_SUMMARY_TASK = re.compile(r"[,:]task=(?P<comm>[^,\n]{1,64})")
_SUMMARY_MEMCG = re.compile(r"[,:]task_memcg=(?P<cgroup>[^,\n]{1,512})")
# bounded quantifiers: an unbounded lazy `\S+?` before the PID is quadratic on a long line without spaces
# (a kernel comm is at most 15 characters; 64 leaves room for a thread name with a suffix)
_SEGFAULT = re.compile(r"(?P<comm>[^\s\[\]]{1,64})\[(?P<pid>\d{1,10})\]: segfault at ")
_TRAP = re.compile(r"traps: (?P<comm>[^\s\[\]]{1,64})\[(?P<pid>\d{1,10})\] (?P<what>general protection|trap )")


def _split(line: str, boot_time: Optional[float]) -> tuple[str, Maybe[float]]:
    """(message, epoch or Unavailable) for one line in any of the accepted formats."""
    no_boot = Unavailable("kernel timestamp is seconds since boot", "boot time unknown for pasted text")
    m = _KMSG.match(line)
    if m:
        secs = int(m.group("usec")) / 1e6
        return m.group("msg"), (boot_time + secs) if boot_time is not None else no_boot
    m = _DMESG.match(line)
    if m:
        secs = float(m.group("secs"))
        return m.group("msg"), (boot_time + secs) if boot_time is not None else no_boot
    m = _DMESG_T.match(line)
    if m:
        try:
            return m.group("msg"), time.mktime(time.strptime(m.group("date"), "%a %b %d %H:%M:%S %Y"))
        except ValueError:
            return m.group("msg"), Unavailable("unreadable dmesg -T date")
    return line.strip(), Unavailable("no timestamp")


def parse_kernel_line(line: str, boot_time: Optional[float] = None) -> Optional[KernelEvent]:
    """One event for an OOM-kill, segfault or trap line; None for anything else."""
    message, at = _split(line, boot_time)
    for pattern, kind in ((_OOM_KILLED, "oom-kill"), (_OOM_KILL_SUMMARY, "oom-kill"), (_OOM_REAPER, "oom-kill"),
                          (_SEGFAULT, "segfault"), (_TRAP, "other")):
        m = pattern.search(message)
        if m:
            comm = m.groupdict().get("comm") or ""
            cgroup = ""
            if pattern is _OOM_KILL_SUMMARY:
                task, memcg = _SUMMARY_TASK.search(message), _SUMMARY_MEMCG.search(message)
                comm = task.group("comm") if task else ""
                cgroup = memcg.group("cgroup") if memcg else ""
            return KernelEvent(kind=kind, pid=int(m.group("pid")), text=message.strip(), at=at, comm=comm,
                               cgroup=cgroup)
    return None


def parse_kernel_lines(text: str, boot_time: Optional[float] = None) -> list[KernelEvent]:
    """Every OOM-kill / segfault / trap event in a block of kernel log text, in order."""
    events = []
    for line in text.splitlines():
        event = parse_kernel_line(line, boot_time)
        if event is not None:
            events.append(event)
    return events

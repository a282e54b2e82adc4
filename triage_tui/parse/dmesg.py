"""Kernel log lines (`dmesg`, `dmesg -T`, `journalctl -k`) → KernelEvents: OOM kills, segfaults, GPU Xids.

    [12345.678901] Out of memory: Killed process 46433 (python3) total-vm:...
    [Sun Nov 29 12:00:01 2026] oom-kill:constraint=CONSTRAINT_MEMCG,...,task=python3,pid=46433,uid=0
    Nov 29 12:00:01 node kernel: python3[46433]: segfault at 0 ip ... error 4 in libc.so.6
    [  99.1] NVRM: Xid (PCI:0000:01:00): 79, pid=46433, GPU has fallen off the bus.
"""

from __future__ import annotations

import re

from ..model.snapshot import KernelEvent
from ..model.unavailable import Unavailable

_PREFIX = re.compile(r"^\s*\[\s*(\d+\.\d+)\]\s*")
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("oom-kill", re.compile(r"(?:Out of memory|Memory cgroup out of memory): Killed process (\d+)", re.I)),
    ("oom-kill", re.compile(r"oom-kill:.*?\bpid=(\d+)", re.I)),
    ("oom-kill", re.compile(r"oom_reaper: reaped process (\d+)", re.I)),
    ("oom-kill", re.compile(r"invoked oom-killer()", re.I)),
    ("segfault", re.compile(r"\[(\d+)\]: segfault at", re.I)),
    ("gpu-xid", re.compile(r"NVRM: Xid .*?pid=(\d+)", re.I)),
    ("gpu-xid", re.compile(r"NVRM: Xid()", re.I)),
)


def is_kernel_line(line: str) -> bool:
    return any(p.search(line) for _, p in _KINDS)


def parse_kernel_lines(text: str) -> list[KernelEvent]:
    """Every line that names an OOM kill, a segfault or a GPU Xid; other lines are skipped."""
    events: list[KernelEvent] = []
    for line in text.splitlines():
        for kind, pattern in _KINDS:
            m = pattern.search(line)
            if not m:
                continue
            pid = int(m.group(1)) if m.group(1) else None
            stamp = _PREFIX.match(line)
            at = Unavailable(f"{stamp.group(1)} s after boot" if stamp else "no timestamp")
            events.append(KernelEvent(kind=kind, pid=pid, text=line.strip(), at=at))
            break
    return events

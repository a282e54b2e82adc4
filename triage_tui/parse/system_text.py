"""Pasted system tools beyond ps/free: `nvidia-smi -q`, `nvidia-smi dmon`, `vmstat`, `ss` / `netstat`.

Each reader takes the piece's text and returns plain figures; `paste_evidence.py` turns them into the snapshot (GPUs) or
into what the diagnosis reads (vmstat's blocked and runnable counts, sockets stuck connecting).

    nvidia-smi -q            "    Gpu                               : 100 %" / "        Power Draw : 70.25 W"
    nvidia-smi dmon          "# gpu   pwr  gtemp  mtemp     sm    mem ..." then "    0    70     45      -    100 ..."
    vmstat 1                 "procs ---memory--- ..." / " r  b   swpd   free ..." / " 0  8      0 1234 ..."
    ss -tanp / netstat -tanp "SYN-SENT 0 1 10.0.0.2:51234 10.0.0.1:29500" / "tcp 0 1 10.0.0.2:51234 10.0.0.1:29500 SYN_SENT"
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model.snapshot import GpuDevice, GpuReport

_Q_GPU = re.compile(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d")
_Q_FIELD = re.compile(r"^\s{0,16}([A-Za-z][\w /.-]{0,60}?)\s{0,40}:\s{0,4}(.{0,80})$")
_NUM = re.compile(r"^(\d{1,9}(?:\.\d{1,4})?)\s{0,2}(%|W|MiB|C)?$")
DMON_HEADER = re.compile(r"^#\s{0,4}gpu\s{1,8}(?:pwr|sm)\b")
VMSTAT_HEADER = re.compile(r"^\s{0,4}r\s{1,4}b\s{1,8}swpd\s{1,8}free\b")
SS_STATES = ("SYN-SENT", "SYN_SENT", "ESTAB", "ESTABLISHED", "LISTEN", "CLOSE-WAIT", "CLOSE_WAIT", "TIME-WAIT",
             "TIME_WAIT", "FIN-WAIT-1", "FIN-WAIT-2", "SYN-RECV")


def _number(text: str) -> float | None:
    m = _NUM.match(text.strip())
    return float(m.group(1)) if m else None


def is_query_start(line: str) -> bool:
    s = line.strip()
    return s.startswith("==============NVSMI LOG") or bool(_Q_GPU.match(s))


def parse_query(text: str) -> GpuReport:
    """`nvidia-smi -q`: per GPU section, utilisation, power draw and limit, memory used and total."""
    devices: list[GpuDevice] = []
    fields: dict[str, float] = {}
    section = ""
    started = False

    def close() -> None:
        if started:
            devices.append(GpuDevice(
                index=len(devices),
                utilization_gpu_percent=int(fields["util"]) if "util" in fields else GpuDevice.utilization_gpu_percent,
                power_draw_w=fields.get("draw", GpuDevice.power_draw_w),
                power_limit_w=fields.get("limit", GpuDevice.power_limit_w),
                memory_used_bytes=int(fields["used"]) << 20 if "used" in fields else GpuDevice.memory_used_bytes,
                memory_total_bytes=int(fields["total"]) << 20 if "total" in fields else GpuDevice.memory_total_bytes))

    for line in text.splitlines():
        s = line.strip()
        if _Q_GPU.match(s):
            close()
            started, fields, section = True, {}, ""
            continue
        m = _Q_FIELD.match(line)
        if not m:
            if s and ":" not in s:  # a section title: "    Utilization", "    FB Memory Usage"
                section = s
            continue
        key, value = m.group(1).strip(), m.group(2).strip()
        if not value:
            section = key
            continue
        n = _number(value)
        if n is None:
            continue
        if section == "Utilization" and key == "Gpu":
            fields["util"] = n
        elif key == "Power Draw" or key == "Instantaneous Power Draw":
            fields.setdefault("draw", n)
        elif key in ("Power Limit", "Current Power Limit", "Enforced Power Limit"):
            fields.setdefault("limit", n)
        elif section.startswith("FB Memory Usage") and key in ("Used", "Total"):
            fields[key.lower()] = n
    close()
    return GpuReport(source="nvidia-smi -q (pasted)", devices=tuple(devices))


def parse_dmon(text: str) -> GpuReport:
    """`nvidia-smi dmon`: the header names the columns; the last row of each GPU counts."""
    columns: list[str] = []
    last: dict[int, GpuDevice] = {}
    for line in text.splitlines():
        s = line.strip()
        if DMON_HEADER.match(s):
            columns = s.lstrip("#").split()
            continue
        if not columns or s.startswith("#") or not s:
            continue
        cells = dict(zip(columns, s.split(), strict=False))
        if not cells.get("gpu", "").isdecimal():
            continue
        index = int(cells["gpu"])
        util, pwr = _number(cells.get("sm", "-")), _number(cells.get("pwr", "-"))
        last[index] = GpuDevice(index=index,
                                utilization_gpu_percent=int(util) if util is not None else GpuDevice.utilization_gpu_percent,
                                power_draw_w=pwr if pwr is not None else GpuDevice.power_draw_w)
    return GpuReport(source="nvidia-smi dmon (pasted)", devices=tuple(last[i] for i in sorted(last)))


@dataclass(frozen=True)
class VmstatFigures:
    runnable: int
    blocked: int  # processes in D state
    iowait_percent: int | None
    idle_percent: int | None


def parse_vmstat(text: str) -> VmstatFigures | None:
    """The last data row of `vmstat`: r, b and the wa / id CPU columns."""
    columns: list[str] = []
    row: dict[str, str] = {}
    for line in text.splitlines():
        if VMSTAT_HEADER.match(line):
            columns = line.split()
            continue
        parts = line.split()
        if columns and parts and all(p.isdecimal() for p in parts[:len(columns)]) and len(parts) >= len(columns):
            row = dict(zip(columns, parts, strict=False))
    if not row:
        return None
    wa, idle = row.get("wa"), row.get("id")
    return VmstatFigures(int(row["r"]), int(row["b"]), int(wa) if wa else None, int(idle) if idle else None)


def is_socket_line(line: str) -> bool:
    parts = line.split()
    if not parts:
        return False
    if parts[0] in SS_STATES:  # ss
        return True
    return parts[0] in ("tcp", "tcp6", "udp", "udp6") and any(p in SS_STATES for p in parts[5:7])  # netstat


def connecting(text: str) -> list[str]:
    """Peers (address:port) that a socket is still trying to reach (SYN-SENT): a connect() that never completes."""
    out: list[str] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0] in ("SYN-SENT", "SYN_SENT"):
            out.append(parts[4])
        elif len(parts) >= 6 and parts[0].startswith("tcp") and "SYN_SENT" in parts[5:7]:
            out.append(parts[4])
    return out

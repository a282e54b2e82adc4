"""Parsers for what `nvidia-smi` prints: the CSV queries and the default table people paste.

Pure functions, shared by the local fallback (collect/gpu_smi.py), the agentless SSH path and
`triage diagnose`. "N/A", "[N/A]" and "[Not Supported]" become Unavailable, never 0.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Optional

from ..model.snapshot import GpuDevice, GpuProcess, GpuReport
from ..model.unavailable import Maybe, Unavailable
from .text_errors import ParseError

MIB = 1024 * 1024

QUERY_GPU_FIELDS = (
    "index", "name", "uuid", "pci.bus_id", "memory.total", "memory.used", "memory.free",
    "utilization.gpu", "utilization.memory", "temperature.gpu", "power.draw", "power.limit", "driver_version",
)
COMPUTE_APPS_FIELDS = ("gpu_uuid", "pid", "used_memory")

QUERY_GPU_ARGS = ("--query-gpu=" + ",".join(QUERY_GPU_FIELDS), "--format=csv,noheader,nounits")
COMPUTE_APPS_ARGS = ("--query-compute-apps=" + ",".join(COMPUTE_APPS_FIELDS), "--format=csv,noheader,nounits")


class NvidiaSmiParseError(ParseError):
    """Text that is not what nvidia-smi prints; the message says which line and why."""


def _missing(raw: str) -> Optional[Unavailable]:
    text = raw.strip().strip("[]").strip()
    low = text.lower()
    if low in ("not supported", "notsupported"):
        return Unavailable("not supported", "this board or driver does not report it")
    if low in ("n/a", "na", "unknown error", "unknown", ""):
        return Unavailable(f"nvidia-smi says {raw.strip() or 'nothing'}", "")
    if low == "gpu is lost" or low.startswith("gpu requires reset"):
        return Unavailable("GPU is lost", "check `dmesg` for Xid errors; a reset or reboot is needed")
    return None


def _float(raw: str, scale: float = 1.0) -> Maybe[float]:
    missing = _missing(raw)
    if missing is not None:
        return missing
    text = re.sub(r"\s{0,8}(MiB|W|%|C)$", "", raw.strip())
    try:
        return float(text) * scale
    except ValueError:
        return Unavailable(f"unreadable value {raw.strip()!r}", "")


def _int(raw: str, scale: float = 1.0) -> Maybe[int]:
    value = _float(raw, scale)
    return value if isinstance(value, Unavailable) else int(round(value))


def _string(raw: str) -> Maybe[str]:
    missing = _missing(raw)
    return missing if missing is not None else raw.strip()


def _csv_rows(text: str, width: int, what: str, glue_at: Optional[int] = None) -> list[list[str]]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) > width and glue_at is not None:  # a GPU name with a comma in it: glue it back
            extra = len(cells) - width
            cells = cells[:glue_at] + [", ".join(cells[glue_at : glue_at + 1 + extra])] + cells[glue_at + 1 + extra :]
        if len(cells) != width:
            raise NvidiaSmiParseError(f"{what} line {number}: expected {width} fields, got {len(cells)}: {line.strip()[:80]!r}")
        rows.append(cells)
    return rows


def parse_query_gpu_csv(text: str, fields: tuple[str, ...] = QUERY_GPU_FIELDS) -> tuple[GpuDevice, ...]:
    """`nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits` → devices (no processes)."""
    devices = []
    glue_at = fields.index("name") if "name" in fields else None
    for number, cells in enumerate(_csv_rows(text, len(fields), "query-gpu", glue_at), 1):
        row = dict(zip(fields, cells))  # noqa: B905 - _csv_rows checked the count; no strict=: the agent runs on 3.8
        index = _int(row.get("index", str(number - 1)))
        if not isinstance(index, int):
            raise NvidiaSmiParseError(f"query-gpu line {number}: GPU index is not a number: {row.get('index')!r}")
        lost = any(isinstance(v, Unavailable) and v.reason == "GPU is lost" for v in map(_missing, cells))
        devices.append(GpuDevice(
            index=index,
            name=_string(row["name"]) if "name" in row else Unavailable("not queried"),
            uuid=_string(row["uuid"]) if "uuid" in row else Unavailable("not queried"),
            pci_bus_id=_string(row["pci.bus_id"]) if "pci.bus_id" in row else Unavailable("not queried"),
            memory_total_bytes=_int(row.get("memory.total", "N/A"), MIB),
            memory_used_bytes=_int(row.get("memory.used", "N/A"), MIB),
            memory_free_bytes=_int(row.get("memory.free", "N/A"), MIB),
            memory_reserved_bytes=_int(row["memory.reserved"], MIB) if "memory.reserved" in row
            else Unavailable("not in the nvidia-smi query"),
            utilization_gpu_percent=_int(row.get("utilization.gpu", "N/A")),
            utilization_memory_percent=_int(row.get("utilization.memory", "N/A")),
            temperature_c=_int(row.get("temperature.gpu", "N/A")),
            power_draw_w=_float(row.get("power.draw", "N/A")),
            power_limit_w=_float(row.get("power.limit", "N/A")),
            lost=lost,
            error=Unavailable("GPU is lost", "check `dmesg` for Xid errors") if lost else None,
        ))
    return tuple(devices)


def is_query_gpu_header(line: str) -> bool:
    """A pasted `--query-gpu=... --format=csv` header ("index, name, memory.used [MiB], ...")."""
    text = line.strip()
    return ("memory.used" in text or "utilization.gpu" in text) and "," in text and not text.startswith(("nvidia-smi", "$"))


def parse_query_gpu_csv_with_header(text: str) -> GpuReport:
    """`nvidia-smi --query-gpu=<fields> --format=csv` as people paste it: the header names the fields, in
    any order and with units ("memory.used [MiB]"); the rows are read like the collector's noheader query."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    start = next((i for i, ln in enumerate(lines) if is_query_gpu_header(ln)), None)
    if start is None:
        raise NvidiaSmiParseError("no --query-gpu CSV header (memory.used / utilization.gpu)")
    fields = tuple(h.strip().split(" ")[0] for h in lines[start].split(","))
    rows = "\n".join(lines[start + 1:])
    if not rows:
        raise NvidiaSmiParseError("a --query-gpu CSV header without rows")
    return GpuReport(source="nvidia-smi", devices=parse_query_gpu_csv(rows, fields))


def parse_compute_apps_csv(text: str, fields: tuple[str, ...] = COMPUTE_APPS_FIELDS) -> tuple[tuple[str, GpuProcess], ...]:
    """`nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory ...` → (gpu uuid, process) pairs."""
    out = []
    for number, cells in enumerate(_csv_rows(text, len(fields), "query-compute-apps"), 1):
        row = dict(zip(fields, cells))  # noqa: B905 - _csv_rows checked the count; no strict=: the agent runs on 3.8
        pid = _int(row.get("pid", ""))
        if not isinstance(pid, int):
            raise NvidiaSmiParseError(f"query-compute-apps line {number}: PID is not a number: {row.get('pid')!r}")
        out.append((row.get("gpu_uuid", ""), GpuProcess(
            pid=pid, used_bytes=_int(row.get("used_memory", "N/A"), MIB), kind="compute",
            name=row.get("process_name", "") or row.get("name", ""),
        )))
    return tuple(out)


def gpu_report_from_csv(
    gpu_text: str,
    apps_text: Optional[str],
    local_pid: Callable[[int], Optional[int]] = lambda pid: None,
    apps_error: Optional[Unavailable] = None,
    read_at: Optional[float] = None,
) -> GpuReport:
    """The two CSV queries' output as one report (the agentless SSH path and the local fallback).

    `local_pid` maps the reported (root namespace) PIDs; remotely there is nothing to map them
    with, so they stay unmapped. `apps_text` None: the process query failed (`apps_error` says why).
    """
    try:
        devices = parse_query_gpu_csv(gpu_text)
    except NvidiaSmiParseError as exc:
        return GpuReport(source="nvidia-smi", error=Unavailable(f"unexpected nvidia-smi output: {exc}"))
    apps: tuple[tuple[str, GpuProcess], ...] = ()
    if apps_text is not None:
        try:
            apps = parse_compute_apps_csv(apps_text)
        except NvidiaSmiParseError as exc:
            apps_error = Unavailable(f"unexpected nvidia-smi output: {exc}")
    by_uuid: dict[str, list[GpuProcess]] = {}
    for uuid, process in apps:
        by_uuid.setdefault(uuid, []).append(dataclasses.replace(process, local_pid=local_pid(process.pid)))
    # Unavailable is falsy by design: test against None, never with `or`
    processes_error = None if apps_error is None else Unavailable(f"processes: {apps_error.reason}", apps_error.hint)
    devices = tuple(
        dataclasses.replace(
            d, processes=tuple(by_uuid.get(d.uuid, ())) if isinstance(d.uuid, str) else (),
            error=d.error if d.error is not None else processes_error, read_at=read_at,
        )
        for d in devices
    )
    versions = [c[-1].strip() for c in (ln.split(",") for ln in gpu_text.splitlines() if ln.strip())
                if QUERY_GPU_FIELDS[-1] == "driver_version" and c[-1].strip()[:1].isdecimal()]
    return GpuReport(
        source="nvidia-smi", driver_version=versions[0] if versions else Unavailable("not reported"),
        cuda_driver_version=Unavailable("nvidia-smi's CSV query does not report it"), devices=devices,
    )


# ---------------------------------------------------------------- the default table
_HEADER = re.compile(r"NVIDIA-SMI\s+(\S+)\s+Driver Version:\s*(\S+)(?:\s+CUDA Version:\s*(\S+))?")
_GPU_FIRST = re.compile(r"^\s*(\d+)\s+(.*?)\s+(On|Off)\s*$")
_BUS_ID = re.compile(r"([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])")
# bounded: a cell of a pasted table can be a 4 KiB line; unbounded quantifiers before "/" are quadratic
_MEMORY = re.compile(r"([^\s/]{1,32}?)\s{0,8}(?:MiB)?\s{0,8}/\s{0,8}([^\s/]{1,32}?)\s{0,8}(?:MiB)?\s*+$")
_POWER = re.compile(r"(\[?N/A\]?|\d{1,6}(?:\.\d{1,3})?W|\[Not Supported\])\s{0,8}/\s{0,8}(\[?N/A\]?|\d{1,6}(?:\.\d{1,3})?W"
                    r"|\[Not Supported\])")
_PROCESS_TYPES = {"C", "G", "C+G", "M", "M+C"}
_ERROR_LINES = (
    "NVIDIA-SMI has failed", "Failed to initialize NVML", "No devices were found", "Unable to determine the device handle",
    "Driver/library version mismatch", "couldn't communicate with the NVIDIA driver",
)


def _cells(line: str) -> list[str]:
    """The cells between the | borders of one table line ([] for a border or plain line)."""
    stripped = line.strip()
    if not (stripped.startswith("|") and stripped.endswith("|")) or len(stripped) < 2:
        return []
    return [c for c in stripped[1:-1].split("|")]


def _stats(cells: list[str], device: GpuDevice) -> GpuDevice:
    """Fill temperature, power, memory and utilisation from a GPU's second table line."""
    first = cells[0].split()  # Fan Temp Perf Pwr:Usage/Cap, in every layout
    temp: Maybe[int] = _int(first[1]) if len(first) > 1 else Unavailable("not in the table")
    power = _POWER.search(cells[0])
    no_power = Unavailable("not supported", "this board or driver does not report it") if "Not Supported" in cells[0] \
        else Unavailable("not in the table")
    draw: Maybe[float] = _float(power.group(1)) if power else no_power
    limit: Maybe[float] = _float(power.group(2)) if power else no_power
    memory = _MEMORY.search(cells[1]) if len(cells) > 1 else None
    used: Maybe[int] = _int(memory.group(1), MIB) if memory else Unavailable("not in the table")
    total: Maybe[int] = _int(memory.group(2), MIB) if memory else Unavailable("not in the table")
    free: Maybe[int] = total - used if isinstance(total, int) and isinstance(used, int) else Unavailable("not in the table")
    util: Maybe[int] = Unavailable("not in the table")
    if len(cells) > 2 and cells[2].split():
        util = _int(cells[2].split()[0])
    return GpuDevice(
        index=device.index, name=device.name, uuid=device.uuid, pci_bus_id=device.pci_bus_id,
        memory_total_bytes=total, memory_used_bytes=used, memory_free_bytes=free,
        memory_reserved_bytes=Unavailable("not in the table"),
        utilization_gpu_percent=util, utilization_memory_percent=Unavailable("not in the table"),
        temperature_c=temp, power_draw_w=draw, power_limit_w=limit,
    )


def _process_row(cell: str) -> Optional[tuple[int, GpuProcess]]:
    """One row of the Processes table, old (GPU PID Type Name Mem) or new (GPU GI CI PID Type Name Mem)."""
    tokens = cell.split()
    if len(tokens) < 4 or not tokens[0].isdecimal():
        return None
    kind_at = next((i for i, t in enumerate(tokens) if t in _PROCESS_TYPES and i >= 2), None)
    if kind_at is None or not tokens[kind_at - 1].isdecimal():
        return None
    memory_token = tokens[-1]
    name = " ".join(tokens[kind_at + 1 : -1])
    used = _int(memory_token, MIB)
    kind = "graphics" if tokens[kind_at] == "G" else "compute"
    return int(tokens[0]), GpuProcess(pid=int(tokens[kind_at - 1]), used_bytes=used, kind=kind, name=name)


def parse_nvidia_smi_table(text: str) -> GpuReport:
    """The default `nvidia-smi` output as people paste it (the pre-530 and the newer layouts)."""
    driver: Maybe[str] = Unavailable("not in the text")
    cuda: Maybe[str] = Unavailable("not in the text")
    for line in text.splitlines():
        header = _HEADER.search(line)
        if header:
            driver = header.group(2)
            cuda = header.group(3) or Unavailable("not in the text")
            break
    devices: list[GpuDevice] = []
    processes: dict[int, list[GpuProcess]] = {}
    in_processes = False
    pending: Optional[GpuDevice] = None
    for line in text.splitlines():
        if "Processes:" in line:
            in_processes = True
            continue
        cells = _cells(line)
        if not cells:
            continue
        if in_processes:
            row = _process_row(cells[0]) if len(cells) == 1 else None
            if row is not None:
                processes.setdefault(row[0], []).append(row[1])
            continue
        if pending is not None and len(cells) >= 3:
            devices.append(_stats(cells, pending))
            pending = None
            continue
        first = _GPU_FIRST.match(cells[0]) if len(cells) >= 2 else None
        if first:
            bus = _BUS_ID.search(cells[1])
            pending = GpuDevice(index=int(first.group(1)), name=first.group(2).strip(),
                                uuid=Unavailable("not in the table"),
                                pci_bus_id=bus.group(1) if bus else Unavailable("not in the table"))
    if pending is not None:  # the paste was cut after a GPU's first line
        devices.append(GpuDevice(index=pending.index, name=pending.name, pci_bus_id=pending.pci_bus_id,
                                 error=Unavailable("only the first line of this GPU was in the text")))
    devices = [dataclasses.replace(d, processes=tuple(processes.get(d.index, ()))) for d in devices]
    error = None
    if not devices:
        said = next((ln.strip() for ln in text.splitlines() if any(e in ln for e in _ERROR_LINES)), None)
        error = Unavailable(f"nvidia-smi said: {said}" if said else "no GPU rows found in the nvidia-smi text",
                            "" if said else "paste the whole `nvidia-smi` output, borders included")
    return GpuReport(source="nvidia-smi table", driver_version=driver, cuda_driver_version=cuda,
                     devices=tuple(devices), error=error)

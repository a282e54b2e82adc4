"""A small reader for pasted `nvidia-smi` (table) and `--query-gpu ... --format=csv`, used until the gpu
part's parse/nvidia_smi.py is on this branch (pasted.py prefers that one when it can import it)."""

from __future__ import annotations

import re

from ..model.snapshot import GpuDevice, GpuReport
from .text_errors import ParseError

_HEAD = re.compile(r"^\|\s+(\d+)\s+(.+?)\s{2,}(On|Off)\s+\|")
_USE = re.compile(r"^\|\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*/\s*(\S+)\s*\|\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*(\d+|N/A)%?")
_DRIVER = re.compile(r"Driver Version:\s*(\S+)")


def _watts(text: str) -> float | None:
    m = re.match(r"^([\d.]+)W$", text)
    return float(m.group(1)) if m else None


def is_table(text: str) -> bool:
    return "NVIDIA-SMI" in text and "MiB" in text


def parse_table(text: str) -> GpuReport:
    devices: list[GpuDevice] = []
    pending: tuple[int, str] | None = None
    for line in text.splitlines():
        h = _HEAD.match(line)
        if h:
            pending = (int(h.group(1)), h.group(2).strip())
            continue
        u = _USE.match(line)
        if u and pending:
            kw: dict = dict(index=pending[0], name=pending[1], memory_used_bytes=int(u.group(6)) << 20,
                            memory_total_bytes=int(u.group(7)) << 20)
            if u.group(8) != "N/A":
                kw["utilization_gpu_percent"] = int(u.group(8))
            draw, limit = _watts(u.group(4)), _watts(u.group(5))
            if draw is not None:
                kw["power_draw_w"] = draw
            if limit is not None:
                kw["power_limit_w"] = limit
            devices.append(GpuDevice(**kw))
            pending = None
    if not devices:
        raise ParseError("no GPU rows in the nvidia-smi table")
    d = _DRIVER.search(text)
    return GpuReport(source="nvidia-smi", devices=tuple(devices), **({"driver_version": d.group(1)} if d else {}))


def is_csv_header(line: str) -> bool:
    text = line.strip()
    return ("memory.used" in text or "utilization.gpu" in text) and "," in text and not text.startswith(("nvidia-smi", "$"))


def parse_csv(text: str) -> GpuReport:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    start = next((i for i, ln in enumerate(lines) if is_csv_header(ln)), None)
    if start is None:
        raise ParseError("no --query-gpu CSV header (memory.used / utilization.gpu)")
    keys = [h.strip().split(" ")[0] for h in lines[start].split(",")]
    devices = []
    for n, line in enumerate(lines[start + 1:]):
        cells = dict(zip(keys, (c.strip() for c in line.split(",")), strict=False))
        if len(cells) < len(keys):
            break
        kw: dict = {"index": int(cells["index"]) if cells.get("index", "").isdecimal() else n}
        for key, attr, conv in (("memory.used", "memory_used_bytes", lambda v: int(float(v)) << 20),
                                ("memory.total", "memory_total_bytes", lambda v: int(float(v)) << 20),
                                ("utilization.gpu", "utilization_gpu_percent", lambda v: int(float(v))),
                                ("power.draw", "power_draw_w", float), ("power.limit", "power_limit_w", float),
                                ("name", "name", str)):
            value = cells.get(key, "").split(" ")[0]
            if value and value not in ("[N/A]", "N/A", "[Not"):
                try:
                    kw[attr] = conv(value) if attr != "name" else cells[key]
                except ValueError:
                    pass
        devices.append(GpuDevice(**kw))
    if not devices:
        raise ParseError("a --query-gpu CSV header without rows")
    return GpuReport(source="nvidia-smi", devices=tuple(devices))

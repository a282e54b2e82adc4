"""Pane 2: one row per GPU (memory bar, utilisation, power against limit, holders) with sparklines."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from ...model.unavailable import is_known
from .. import format as fmt
from . import Pane, PaneScroll, View

HISTORY = 12  # samples in each sparkline


class GpusPane(Pane):
    number = 2
    title = "GPUs"

    def compose(self):  # type: ignore[no-untyped-def]
        with PaneScroll(id="gpu-scroll"):
            yield Static("waiting for the first refresh", id="gpu-body")

    @property
    def focus_target(self) -> PaneScroll:
        return self.query_one(PaneScroll)

    def show(self, view: View) -> None:
        self.query_one("#gpu-body", Static).update(render_gpus(view))


def render_gpus(view: View) -> object:
    report = view.snapshot.gpus
    if report.error is not None:
        return Text(f"no GPUs shown: {fmt.reason(report.error)}", style="yellow")
    if not report.devices:
        why = "no GPU found" if report.source != "none" else "no GPU source ran (no NVIDIA driver or library found)"
        return Text(why, style="yellow")
    history: dict[int, list[tuple[float | None, float | None]]] = {}
    for snap in list(view.history)[-HISTORY:]:
        for d in snap.gpus.devices:
            util = float(d.utilization_gpu_percent) if is_known(d.utilization_gpu_percent) else None  # type: ignore[arg-type]
            history.setdefault(d.index, []).append((fmt.ratio(d.memory_used_bytes, d.memory_total_bytes), util))
    table = Table(box=None, padding=(0, 1), pad_edge=False, expand=False, show_edge=False)
    for col, min_width in (("#", 1), ("memory used/total", 20), ("util", 4), ("power", 7), ("PIDs", 5), ("mem·util hist", 6)):
        table.add_column(col, no_wrap=True, min_width=min_width, overflow="crop")
    for d in report.devices:
        if d.error is not None or d.lost:
            table.add_row(str(d.index), Text(fmt.reason(d.error) or "lost", style="red"), "", "", "", "")
            continue
        frac = fmt.ratio(d.memory_used_bytes, d.memory_total_bytes)
        mem = Text(fmt.bar(frac, 6) + " ")
        mem.append(f"{fmt.mib(d.memory_used_bytes).removesuffix('MiB')}/{fmt.mib(d.memory_total_bytes)}")
        util = fmt.percent(d.utilization_gpu_percent)
        util_text = Text(util, style="bold yellow" if util == "0%" and frac and frac > 0.5 else "")
        power = f"{_watts(d.power_draw_w)}/{_watts(d.power_limit_w)}W"
        pids = ",".join(str(p.local_pid if p.local_pid is not None else p.pid) for p in d.processes) or "-"
        hist = history.get(d.index, [])
        spark = fmt.sparkline([m for m, _ in hist], HISTORY // 2, top=1.0) + "·" + fmt.sparkline([u for _, u in hist], HISTORY // 2, top=100.0)
        table.add_row(str(d.index), mem, util_text, power, pids, spark)
    return table


def _watts(value: object) -> str:
    return f"{float(value):.0f}" if is_known(value) else "n/a"  # type: ignore[arg-type]

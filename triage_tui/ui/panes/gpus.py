"""Pane 2: one row per GPU (memory bar, utilisation, power against limit, holders) with sparklines."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...model.snapshot import GpuDevice
from ...model.unavailable import Maybe, Unavailable, is_known
from ...render.plain_text import visible
from .. import format as fmt
from . import Pane, PaneScroll, RowsStatic, View, update_static

HISTORY = 12  # samples in each sparkline


class GpusPane(Pane):
    number = 2
    title = "GPUs"

    def compose(self):
        with PaneScroll(id="gpu-scroll"):
            yield RowsStatic("waiting for the first refresh", id="gpu-body")

    @property
    def focus_target(self) -> PaneScroll:
        return self.query_one(PaneScroll)

    @property
    def empty(self) -> bool:
        """Nothing to show but why (no GPU, no driver): the app gives the pane one line."""
        view = getattr(self, "_view", None)
        if view is None:
            return False
        report = view.snapshot.gpus
        return report.error is not None or not report.devices

    def show(self, view: View) -> None:
        self._view = view
        self._redraw()

    def on_resize(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        view = getattr(self, "_view", None)
        if view is not None:
            text = render_gpus(view, max(20, self.size.width - 2))
            if self.empty:  # one line, no border: the pane's name goes in front
                text = Text.assemble((f"{self.number} {self.title}: ", "bold"), text)
                text.no_wrap, text.overflow = True, "ellipsis"
            update_static(self.query_one("#gpu-body", Static), text)


def render_gpus(view: View, width: int = 80) -> Text:
    report = view.snapshot.gpus
    if report.error is not None:
        return Text(visible(f"no GPUs shown: {fmt.reason(report.error)}"), style="yellow")
    if not report.devices:
        why = "no GPU found" if report.source != "none" else "no GPU source ran (no NVIDIA driver or library found)"
        return Text(why, style="yellow")
    history: dict[int, list[tuple[float | None, float | None]]] = {}
    for snap in [m.snapshot for m in list(view.history)[-HISTORY:]]:
        for d in snap.gpus.devices:
            util = float(d.utilization_gpu_percent) if is_known(d.utilization_gpu_percent) else None
            history.setdefault(d.index, []).append((fmt.ratio(d.memory_used_bytes, d.memory_total_bytes), util))
    out = Text()
    out.append(f"{'#':>2} {'memory used/total':<21} {'util':>4} {'power':>8} PIDs  mem·util\n", style="bold")
    for d in report.devices:
        if d.error is not None or d.lost:
            out.append(f"{d.index:>2} ")
            out.append(visible(fmt.reason(d.error) or "lost") + "\n", style="red")
            continue
        frac = fmt.ratio(d.memory_used_bytes, d.memory_total_bytes)
        used = fmt.mib(d.memory_used_bytes).removesuffix("MiB")
        out.append(f"{d.index:>2} {fmt.bar(frac, 6)} {used + '/' + fmt.mib(d.memory_total_bytes):<14} ")
        util_text = fmt.percent(d.utilization_gpu_percent)
        out.append(f"{util_text:>4}", style="bold yellow" if util_text == "0%" and frac and frac > 0.5 else "")
        out.append(f" {_watts(d.power_draw_w) + '/' + _watts(d.power_limit_w) + 'W':>8} ")
        pids = ",".join(str(p.local_pid if p.local_pid is not None else p.pid) for p in d.processes) or "-"
        out.append(pids)
        # the sparklines take whatever width is left on the line (none at all in a narrow pane)
        room = width - (2 + 1 + 6 + 1 + 14 + 1 + 4 + 1 + 8 + 1 + len(pids)) - 1
        hist = history.get(d.index, [])
        each = min(HISTORY, (room - 1) // 2)
        if each >= 3:
            out.append(" " + fmt.sparkline([m for m, _ in hist], each, top=1.0) + "·" + fmt.sparkline([u for _, u in hist], each, top=100.0),
                       style="cyan")
        out.append("\n")
    for note in _unread_fields(report.devices):
        out.append(visible(note) + "\n", style="yellow")
    return out


# the figures a row shows, by label: a row can only say n/a, so the why is said under the rows
SHOWN_FIELDS = (("memory used", "memory_used_bytes"), ("memory total", "memory_total_bytes"),
                ("util", "utilization_gpu_percent"), ("power draw", "power_draw_w"), ("power limit", "power_limit_w"))


def _unread_fields(devices: tuple[GpuDevice, ...]) -> list[str]:
    """One line per (figure, reason) a readable GPU did not give, e.g. 'n/a power draw: not supported on GPUs 0,1'."""
    why: dict[tuple[str, str], list[int]] = {}
    for d in devices:
        if d.error is not None or d.lost:  # such a row already says why in words
            continue
        for label, field in SHOWN_FIELDS:
            value = getattr(d, field)
            if isinstance(value, Unavailable):
                why.setdefault((label, value.reason), []).append(d.index)
    return [f"n/a {label}: {reason} on GPU{'s' if len(gpus) > 1 else ''} {','.join(map(str, gpus))}"
            for (label, reason), gpus in why.items()]


def _watts(value: Maybe[float]) -> str:
    return f"{float(value):.0f}" if is_known(value) else "n/a"

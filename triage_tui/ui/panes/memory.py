"""Pane 3: the truth about memory: RSS against PSS/USS against the system and the cgroup."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Static

from ...model.snapshot import MemoryReport
from ...model.unavailable import is_known
from ...render.plain_text import visible
from .. import format as fmt
from . import Pane, PaneScroll, RowsStatic, View, update_static


class MemoryPane(Pane):
    number = 3
    title = "Memory"
    BINDINGS = [Binding("m", "app.memory_map", "map of selected process")]

    def compose(self):
        with PaneScroll(id="mem-scroll"):
            yield RowsStatic("waiting for the first refresh", id="mem-body")

    @property
    def focus_target(self) -> PaneScroll:
        return self.query_one(PaneScroll)

    def show(self, view: View) -> None:
        self._memory = view.snapshot.memory
        self._redraw()

    def on_resize(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        memory = getattr(self, "_memory", None)
        if memory is not None:
            # the explanations beside each figure only where they fit on the same line
            update_static(self.query_one("#mem-body", Static), render_memory(memory, notes=self.size.width >= 62))


def rss_verdict(memory: MemoryReport) -> str:
    """One sentence when the RSS sum overstates memory, with the figures; '' otherwise."""
    t, s = memory.target, memory.system
    if not (is_known(t.rss_sum_bytes) and is_known(t.pss_sum_bytes)) or not t.pss_sum_bytes:
        return ""
    rss, pss = int(t.rss_sum_bytes), int(t.pss_sum_bytes)
    over_total = is_known(s.total_bytes) and rss > int(s.total_bytes)
    if t.pss_covered < t.processes:
        # The RSS sum is over every process, the PSS sum over those read: their ratio is over
        # different processes (under churn it read "53.7x"). Say only what holds for all of them.
        if over_total:
            return (f"RSS sum {fmt.size(rss)} exceeds the machine's {fmt.size(s.total_bytes)} of RAM: the processes "
                    f"share pages (PSS read for {t.pss_covered} of {t.processes} so far).")
        return ""
    if rss < 1.5 * pss and not over_total:
        return ""
    text = (f"RSS sum {fmt.size(rss)} is {rss / pss:.1f}x the PSS sum {fmt.size(pss)}: the processes share pages "
            f"(file-backed {fmt.size(t.file_sum_bytes)}), so adding RSS across them counts each shared page once per process.")
    if over_total:
        text += f" It exceeds the machine's {fmt.size(s.total_bytes)} of RAM."
    if is_known(s.available_bytes):
        text += f" The system still has {fmt.size(s.available_bytes)} available."
    return text


def render_memory(memory: MemoryReport, notes: bool = True) -> Text:
    t, s, c = memory.target, memory.system, memory.cgroup
    out = Text()
    verdict = rss_verdict(memory)
    if verdict:  # first: it is the one line that changes the diagnosis
        out.append(verdict + "\n", style="bold yellow")
    out.append(f"target ({t.processes} processes)\n", style="bold")
    covered = f" ({t.pss_covered}/{t.processes} read)" if t.pss_covered < t.processes else ""
    rows = [
        ("RSS sum", fmt.size(t.rss_sum_bytes), "counts shared pages once per process"),
        ("PSS sum", fmt.size(t.pss_sum_bytes) + covered, "shared pages split between sharers"),
        ("USS sum", fmt.size(t.uss_sum_bytes), "private to each process"),
        ("file-backed", fmt.size(t.file_sum_bytes), "RssFile: page cache, mmap'd files"),
        ("anonymous", fmt.size(t.anon_sum_bytes), "RssAnon: heap, stacks"),
        ("shmem", fmt.size(t.shmem_sum_bytes), "RssShmem"),
    ]
    for label, text, note in rows:
        out.append(f"  {label:<12}{text:>9}  ")
        out.append((note if notes else "") + "\n", style="dim")
    out.append("system (free)\n", style="bold")
    for label, value in (
        ("total", s.total_bytes), ("used", s.used_bytes), ("available", s.available_bytes),
        ("buff/cache", s.buff_cache_bytes), ("swap used", s.swap_used_bytes),
    ):
        out.append(f"  {label:<12}{fmt.size(value):>9}\n")
    out.append("cgroup ", style="bold")
    if is_known(c.current_bytes):
        limit = "no limit" if c.max_bytes is None else fmt.size(c.max_bytes)
        out.append(visible(f"{c.path}: {fmt.size(c.current_bytes)} of {limit}"))
        if is_known(c.oom_kills) and c.oom_kills:
            out.append(f", {c.oom_kills} OOM kills", style="bold red")
        out.append("\n")
    else:
        out.append(f"{visible(fmt.reason(c.current_bytes))}\n", style="dim")
    out.append("m: mappings of the selected process, by file", style="dim")
    return out

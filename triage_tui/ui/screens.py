"""Modal screens: the key help, and one process's mappings grouped by file."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from ..model.mappings import FileMapping
from ..render.plain_text import visible
from . import format as fmt
from .help import KEYS


def help_table() -> Table:
    """The keys as a wrapping table: legible at 80 columns."""
    table = Table(box=None, padding=(0, 1), expand=True, show_header=True)
    table.add_column("key", style="bold cyan", no_wrap=True)
    table.add_column("what")
    table.add_column("where", style="dim", ratio=None)
    for key, where, what in KEYS:
        table.add_row(key, what, where)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark,q,f1", "dismiss", "close"),
        Binding("j,down", "scroll(1)", "down", show=False),
        Binding("k,up", "scroll(-1)", "up", show=False),
        Binding("pagedown,space", "scroll(10)", "page down", show=False),
        Binding("pageup", "scroll(-10)", "page up", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.table = help_table()

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(Text("triage: keys", style="bold"), id="help-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(self.table, id="help-table")
            yield Static("j/k scroll · Esc or ? closes. Nothing in triage signals a process (read-only).", classes="dim")

    def action_scroll(self, lines: int) -> None:
        scroll = self.query_one("#help-scroll", VerticalScroll)
        scroll.scroll_to(y=max(0, scroll.scroll_y + lines), animate=False)


class MappingsScreen(ModalScreen[None]):
    """Filled by a thread worker: "reading…" first, then the table or the reason it failed."""

    BINDINGS = [Binding("escape,q,m", "dismiss", "close")]

    def __init__(self, pid: int, name: str) -> None:
        super().__init__()
        self.pid = pid
        self.process_name = name

    def compose(self) -> ComposeResult:
        with Vertical(id="map-box"):
            yield Static(Text(visible(f"mappings of PID {self.pid} ({self.process_name}): reading /proc/{self.pid}/smaps…")),
                         id="map-title")
            table: DataTable = DataTable(id="map-table", cursor_type="row")
            table.add_columns("file", "PSS", "RSS", "shared", "private", "maps", "shared by")
            yield table

    def show_mappings(self, mappings: Sequence[FileMapping], error: str, target_size: int) -> None:
        title = self.query_one("#map-title", Static)
        if error:
            title.update(Text(visible(f"mappings of PID {self.pid}: {error}"), style="red"))
            return
        total = sum(m.pss_bytes for m in mappings)
        title.update(Text(visible(f"mappings of PID {self.pid} ({self.process_name}) by file, largest PSS first; "
                                  f"PSS total {fmt.size(total)}")))
        table = self.query_one(DataTable)
        table.clear()
        for m in mappings:
            sharers = f"{m.shared_by}/{target_size}" if m.path.startswith("/") else "-"
            # a Text: `[anonymous]`, `[heap]`, `[stack]` read as markup tags were blank rows
            table.add_row(Text(visible(m.path)), fmt.size(m.pss_bytes), fmt.size(m.rss_bytes), fmt.size(m.shared_bytes),
                          fmt.size(m.private_bytes), str(m.mappings), sharers)

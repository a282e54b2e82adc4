"""Pane 1: the target's process tree, one row per process, collapsible, sortable, filterable, taggable."""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import ColumnKey

from ...model.diagnosis import Diagnosis
from ...model.snapshot import ProcessInfo, Snapshot
from ...model.unavailable import is_known
from ...render.plain_text import visible
from .. import format as fmt
from ..process_rows import SORT_KEYS, Row, tree_rows
from . import Pane, View, update_static
from .waits import same_items

STATE_STYLES = {"D": "bold red", "Z": "bold magenta", "T": "bold yellow", "t": "bold yellow", "R": "green"}
WIDE_COLUMNS = ("PID", "name", "St", "CPU%", "CPU time", "idle", "thr R/all", "RSS", "PSS", "GPU", "wchan")
MEDIUM_COLUMNS = ("PID", "name", "St", "CPU%", "idle", "RSS", "PSS", "GPU", "wchan")
NARROW_COLUMNS = ("PID", "name", "St", "CPU%", "idle", "RSS", "PSS", "GPU")
WIDTHS = ((120, WIDE_COLUMNS), (90, MEDIUM_COLUMNS), (0, NARROW_COLUMNS))  # pane width -> columns shown


class ProcessTable(DataTable):
    BINDINGS = [
        Binding("j", "cursor_down", "down", show=False),
        Binding("k", "cursor_up", "up", show=False),
    ]

    _stale = False  # cells changed off screen and the render caches still hold them (see update_cells)

    def update_cells(self, changes: list[tuple[int, str, str, object, bool]]) -> None:
        """`update_cell` for many (row index, row key, column key, value, grows) at once.

        `update_cell` invalidates the table's render caches and asks for a repaint once per cell: at
        1,000 rows that change that was most of a refresh's UI time. Here the values are written, and
        the caches invalidated and a repaint asked for once, and only when a changed row is on screen:
        changes below the fold are invalidated when the table next paints (a scroll, a cursor move).
        It uses the DataTable's private `_data` and `_update_count` (textual 8); where those are not
        there, it falls back to one `update_cell` per cell."""
        data = getattr(self, "_data", None)
        if not isinstance(data, dict) or not isinstance(getattr(self, "_update_count", None), int):
            for _, row, column, value, grows in changes:
                self.update_cell(row, column, value, update_width=grows)
            return
        for _, row, column, value, grows in changes:
            if grows:  # rare: the public path re-measures the column
                self.update_cell(row, column, value, update_width=True)
            else:
                data[row][column] = value  # RowKey/ColumnKey hash and compare as their strings
        if not changes:
            return
        top, height = self.scroll_offset.y, self.size.height  # rows are one line; the header counts as a margin
        if height <= 0 or any(top - 1 <= index <= top + height for index, *_ in changes):
            self._stale = False
            self._update_count += 1
            self.refresh()
        else:
            self._stale = True

    def render_lines(self, crop: Region) -> list[Strip]:
        # Every repaint of the table comes through here (a scroll repaints all of it): drop the render
        # caches that still hold cells changed while they were off screen.
        if self._stale:
            self._stale = False
            self._update_count += 1
        return super().render_lines(crop)


class ProcessesPane(Pane):
    number = 1
    title = "Processes"
    BINDINGS = [
        Binding("enter", "toggle_collapse", "expand/collapse"),
        Binding("space", "toggle_tag", "tag"),
        Binding("slash", "filter", "filter"),
        Binding("o", "cycle_sort", "sort"),
        Binding("P", "sort_by('cpu')", "sort CPU", show=False),
        Binding("M", "sort_by('pss')", "sort memory", show=False),
        Binding("T", "sort_by('time')", "sort time", show=False),
        Binding("N", "sort_by('pid')", "sort PID", show=False),
        Binding("I", "reverse_sort", "reverse sort", show=False),
        Binding("t", "toggle_tree", "tree/flat", show=False),
        Binding("escape", "clear_filter", "clear filter", show=False),
    ]

    def __init__(self, **kwargs: Any) -> None:  # textual.Widget keywords, passed on
        super().__init__(**kwargs)
        self.collapsed: set[int] = set()
        self.tagged: set[int] = set()
        self.filter_text = ""
        self.sort = "pid"
        self.reverse = False  # I: the sort turned around
        self.flat = False  # t: every process by the sort alone, no tree
        self.rows: list[Row] = []
        self.columns: tuple[str, ...] = WIDE_COLUMNS
        self._shown_keys: list[str] = []
        self._shown_cells: list[list[object]] = []
        self._shown_columns: tuple[str, ...] = ()
        self._view: Optional[View] = None
        self._row_cache: dict[int, tuple[object, list[object]]] = {}  # pid -> (what the cells show, cells)
        self._idle_at: Optional[int] = None  # index of the idle-for column in self.columns
        self._last_alive: Optional[Snapshot] = None  # the latest snapshot shown with a live process
        self._subtitle = ""
        self._rows_of: tuple[tuple[ProcessInfo, ...], tuple[object, ...]] = ((), ())  # what self.rows was built from
        self._named: frozenset[int] = frozenset()  # the PIDs hypothesis 1 names: their rows are marked ◆

    def compose(self):
        yield Input(placeholder="filter: PID, name or command line (Enter keeps, Esc clears)", id="proc-filter")
        yield Static("", id="proc-gone")
        yield ProcessTable(cursor_type="row", zebra_stripes=False, id="proc-table")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(Input).display = False
        self.query_one("#proc-gone", Static).display = False
        self._set_columns()

    @property
    def table(self) -> ProcessTable:
        return self.query_one(ProcessTable)

    @property
    def focus_target(self) -> ProcessTable:
        return self.table

    def on_resize(self, event: events.Resize) -> None:
        # secondary columns go first when the pane is narrow (80x24, a split tmux pane)
        columns = next(cols for width, cols in WIDTHS if event.size.width >= width)
        if columns != self.columns:
            self.columns = columns
            self._set_columns()
            self._refresh()

    def _set_columns(self) -> None:
        table = self.table
        table.clear(columns=True)
        self._shown_keys = []
        for name in self.columns:
            table.add_column(name, key=name)

    # ------------------------------------------------------------ data
    def selected_pid(self) -> Optional[int]:
        table = self.table
        if not self.rows or table.cursor_row < 0 or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row].process.pid

    def show(self, view: View) -> None:
        self._view = view
        table = self.table
        keep = self.selected_pid()
        procs = self._rows_to_show(view)
        options = (frozenset(self.collapsed), self.filter_text, self.sort, self.reverse, self.flat)
        if not (options == self._rows_of[1] and same_items(procs, self._rows_of[0])):  # else the rows stand
            self.rows = tree_rows(procs, *options)
            self._rows_of = (procs, options)
        moment = view.moment
        self._named = frozenset(moment.named_by_top_cause())
        keys = [str(r.process.pid) for r in self.rows]
        self._idle_at = self.columns.index("idle") if "idle" in self.columns else None
        # idle by the engine's rule (the one all-idle uses), read from the Moment: no rule of the UI's own
        cells = [self._cells(r, moment.idle_for(r.process.pid), moment.is_idle(r.process.pid)) for r in self.rows]
        if len(self._row_cache) > 2 * len(self.rows) + 100:  # forget processes long gone
            shown = {r.process.pid for r in self.rows}
            self._row_cache = {pid: v for pid, v in self._row_cache.items() if pid in shown}
        if keys == self._shown_keys and self.columns == self._shown_columns:
            self._update_changed(keys, cells)
        else:
            table.clear()
            for key, c in zip(keys, cells, strict=True):
                table.add_row(*c, key=key)
        self._shown_keys, self._shown_cells, self._shown_columns = keys, cells, self.columns
        if keep is not None:
            for i, row in enumerate(self.rows):
                if row.process.pid == keep:
                    if table.cursor_row != i:
                        table.move_cursor(row=i, animate=False)
                    break
        extra = f" · filter '{self.filter_text}'" if self.filter_text else ""
        tags = f" · {len(self.tagged)} tagged" if self.tagged else ""
        if self._named:
            tags += f" · ◆ PID {', '.join(map(str, sorted(self._named)))}: named by hypothesis 1"
        order = f"sort {self.sort}{' reversed' if self.reverse else ''}{' · flat' if self.flat else ''}"
        subtitle = f"{len(self.rows)}/{len(procs)} rows · {order}{extra}{tags}"
        if subtitle != self._subtitle:  # setting it repaints the whole pane, table and all, even when equal
            # a Text, never a markup string: the filter is typed by the user and may hold a `[/]`
            self._subtitle = subtitle
            self.border_subtitle = Text(visible(subtitle))

    def _rows_to_show(self, view: View) -> tuple[ProcessInfo, ...]:
        """The snapshot's rows; when the whole target is gone, the last rows seen alive, marked gone,
        under a line that says so (the last moment stays on screen while triage watches for a restart)."""
        snap = view.snapshot
        gone = self.query_one("#proc-gone", Static)
        if snap.live_pids():
            self._last_alive = snap
            gone.display = False
            return snap.processes
        last = self._last_alive
        if last is None or last.taken_at > snap.taken_at:  # looking back past it, or never seen alive here
            last = next((m.snapshot for m in reversed(view.history) if m.snapshot.live_pids()), None)
        if last is None and not snap.exited:
            gone.display = False
            return snap.processes
        update_static(gone, target_gone_text(snap, view.diagnosis, last))
        gone.display = True
        if last is not None:
            return tuple(dataclasses.replace(p, exited=True) for p in last.processes)
        return tuple(ProcessInfo(pid=e.pid, ppid=0, name=e.name, cmdline=e.cmdline, state="X", exited=True)
                     for e in snap.exited)

    def _update_changed(self, keys: list[str], cells: list[list[object]]) -> None:
        """Same rows as shown: touch only the cells that changed (a full rebuild re-measures every row:
        seconds at 10,000 processes, where this is a fraction of that)."""
        table = self.table
        # A column is re-measured only when a value outgrows it; measuring on every change that is
        # narrower than the column makes textual rescan the whole column per cell (quadratic).
        widths = {c: table.columns[ColumnKey(c)].content_width for c in self.columns}
        changes: list[tuple[int, str, str, object, bool]] = []
        for index, (key, new, old) in enumerate(zip(keys, cells, self._shown_cells, strict=True)):
            if new is old:  # the row's cells were reused as they are (see _cells)
                continue
            for column, value, before in zip(self.columns, new, old, strict=True):
                if value is not before and value != before:
                    grows = len(str(value)) > widths[column]
                    if grows:
                        widths[column] = len(str(value))
                    changes.append((index, key, column, value, grows))
        table.update_cells(changes)

    def _cells(self, row: Row, idle_for: Optional[float], idle: bool) -> list[object]:
        p: ProcessInfo = row.process
        tagged = p.pid in self.tagged
        idle_text = fmt.idle_for(idle_for) if idle_for is not None else "-"
        # Most rows are what they were a second ago but for idle-for: their other cells are kept
        # and reused (same objects, so the compare in _update_changed is an identity check).
        named = p.pid in self._named
        key = (p, row.depth, row.has_children, row.collapsed, tagged, idle, named, self.columns)
        cached = self._row_cache.get(p.pid)
        at = self._idle_at
        if cached is not None and cached[0] == key:
            cells = cached[1]
            if at is None or cells[at] == idle_text:
                return cells
            cells = list(cells)
            cells[at] = idle_text
        else:
            cells = self._fresh_cells(row, tagged, idle, idle_text, named)
        self._row_cache[p.pid] = (key, cells)
        return cells

    def _fresh_cells(self, row: Row, tagged: bool, idle: bool, idle_text: str, named: bool = False) -> list[object]:
        p: ProcessInfo = row.process
        marker = "▸ " if row.collapsed else ("▾ " if row.has_children else "  ")
        # ◆: the process hypothesis 1 names (the odd rank, the dead or stopped one), in the tag's place
        label = ("●" if tagged else "◆" if named else " ") + "  " * row.depth + marker + p.name
        # The table reads a str cell as markup, and a name is the target's choice (`[/]` would end the
        # app, `w[bold]x` shows as wx): a name with a `[` or a control character is a Text, made visible.
        # Plain strings otherwise: a Text per cell is most of the cost at 10,000 rows.
        name: object = label if not tagged and not named and "[" not in label and label.isprintable() else \
            Text(visible(label), style="bold cyan" if tagged else "bold yellow" if named else "")
        style = STATE_STYLES.get(p.state) or ("bold #5f87ff" if idle else "")
        state_text = p.state + (" idle" if idle and p.state not in "DZTt" else "")
        state: object = Text(state_text, style=style) if style else state_text
        if p.exited:
            state = Text("gone", style="dim")
        running = p.thread_states.get("R", 0)
        threads = f"{running}/{p.threads}" if is_known(p.threads) else "n/a"
        gpus = ",".join(str(g.gpu_index) for g in p.gpus) or "-"
        wchan: object = "n/a"
        if is_known(p.wchan):  # a kernel symbol: a Text only in the case it could read as markup
            wchan = p.wchan if "[" not in p.wchan and p.wchan.isprintable() else Text(visible(p.wchan))
        cells: dict[str, object] = {
            "PID": str(p.pid),
            "name": name,
            "St": state,
            "CPU%": fmt.percent(p.cpu_percent, 1) if is_known(p.cpu_percent) else "n/a",
            "CPU time": fmt.duration(p.cpu_time_s),
            "idle": idle_text,
            "thr R/all": threads,
            "RSS": fmt.size(p.rss_bytes),
            "PSS": fmt.size(p.pss_bytes),
            "GPU": gpus,
            "wchan": wchan,
        }
        return [cells[c] for c in self.columns]

    def _refresh(self) -> None:
        if self._view is not None:
            self.show(self._view)

    # ------------------------------------------------------------ keys
    def action_toggle_collapse(self) -> None:
        pid = self.selected_pid()
        if pid is None:
            return
        self.collapsed.symmetric_difference_update({pid})
        self._refresh()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        # Enter on a row: the table consumes the key as "select"; collapsing is what select means here
        event.stop()
        self.action_toggle_collapse()

    def action_toggle_tag(self) -> None:
        pid = self.selected_pid()
        if pid is None:
            return
        self.tagged.symmetric_difference_update({pid})
        self._refresh()
        self.table.action_cursor_down()

    def action_filter(self) -> None:
        box = self.query_one(Input)
        box.display = True
        box.value = self.filter_text
        box.focus()

    def action_clear_filter(self) -> None:
        self.filter_text = ""
        box = self.query_one(Input)
        box.value = ""
        box.display = False
        self.table.focus()
        self._refresh()

    def action_cycle_sort(self) -> None:
        keys = list(SORT_KEYS)
        self.sort = keys[(keys.index(self.sort) + 1) % len(keys)]
        self._refresh()

    def action_sort_by(self, key: str) -> None:
        """htop's direct keys: P CPU, M memory (PSS, the true figure), T CPU time; N PID. Pressing the
        key of the sort already in use turns it around, as htop does."""
        if key not in SORT_KEYS:
            return
        self.reverse = (not self.reverse) if key == self.sort else False
        self.sort = key
        self._refresh()

    def action_reverse_sort(self) -> None:
        self.reverse = not self.reverse
        self._refresh()

    def action_toggle_tree(self) -> None:
        self.flat = not self.flat
        self._refresh()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.filter_text = event.value.strip()
        self._refresh()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        box = self.query_one(Input)
        box.display = bool(self.filter_text)
        self.table.focus()


def target_gone_text(snap: Snapshot, diagnosis: Diagnosis, last_alive: Optional[Snapshot]) -> Text:
    """'TARGET GONE at 14:07:12: …' with what is known: the engine's target-gone fact, each exit
    (code, signal or why it is unknown) and the kernel's OOM-kill lines naming the target."""
    out = Text()
    when = fmt.clock(last_alive.taken_at) if last_alive is not None else "before this refresh"
    out.append(f"TARGET GONE: every process exited (last seen alive {when})", style="bold red")
    out.append(" · watching for a restart under the same target", style="dim")
    fact = next((o for o in diagnosis.observations if o.id == "target-gone"), None)
    if fact is not None:
        out.append("\n" + visible(fact.text))
    for e in snap.exited[-8:]:
        code = f"exit code {e.exit_code}" if is_known(e.exit_code) else f"exit status unknown: {fmt.reason(e.exit_code)}"
        out.append("\n  " + visible(f"PID {e.pid} ({e.name}) at {fmt.clock(e.last_seen)}: {code}"))
    for event in snap.kernel.events[-4:]:
        out.append("\n  " + visible(f"{event.kind} PID {event.pid}: {event.text}"), style="red")
    return out

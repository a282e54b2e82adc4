"""Pane 1: the target's process tree, one row per process, collapsible, sortable, filterable, taggable."""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, Optional

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widgets import Input, Static

from ...model.diagnosis import Diagnosis
from ...model.moment import Moment
from ...model.snapshot import ProcessInfo, Snapshot
from ...model.unavailable import is_known
from ...render.plain_text import visible
from .. import format as fmt
from ..process_rows import SORT_KEYS, Row, tree_rows
from . import Pane, View, update_static
from .process_table import ProcessTable
from .waits import same_items

STATE_STYLES = {"D": "bold red", "Z": "bold magenta", "T": "bold yellow", "t": "bold yellow", "R": "green"}
WIDE_COLUMNS = ("PID", "name", "St", "CPU%", "CPU time", "idle", "thr R/all", "RSS", "PSS", "GPU", "wchan")
MEDIUM_COLUMNS = ("PID", "name", "St", "CPU%", "idle", "RSS", "PSS", "GPU", "wchan")
NARROW_COLUMNS = ("PID", "name", "St", "CPU%", "idle", "RSS", "PSS", "GPU")
WIDTHS = ((120, WIDE_COLUMNS), (90, MEDIUM_COLUMNS), (0, NARROW_COLUMNS))  # pane width -> columns shown


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
        self._keys: list[str] = []  # the rows' keys (their PIDs), made with the rows
        self.columns: tuple[str, ...] = WIDE_COLUMNS
        self._view: Optional[View] = None
        self._moment: Optional[Moment] = None  # the moment the rows' cells are made from
        self._row_cache: dict[int, tuple[object, list[object]]] = {}  # pid -> (what the cells show, cells)
        self._idle_at: Optional[int] = None  # index of the idle-for column in self.columns
        self._last_alive: Optional[Snapshot] = None  # the latest snapshot shown with a live process
        self._subtitle = ""
        self._rows_of: tuple[tuple[ProcessInfo, ...], tuple[object, ...]] = ((), ())  # what self.rows was built from
        self._row_of: dict[int, int] = {}  # PID -> its index in self.rows
        self._named: frozenset[int] = frozenset()  # the PIDs hypothesis 1 names: their rows are marked ◆

    def compose(self):
        yield Input(placeholder="filter: PID, name or command line (Enter keeps, Esc clears)", id="proc-filter")
        yield Static("", id="proc-gone")
        yield ProcessTable(id="proc-table")

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
        self._row_cache.clear()  # cells are made per column set
        self.table.set_columns(self.columns)

    # ------------------------------------------------------------ data
    def selected_pid(self) -> Optional[int]:
        table = self.table
        if not self.rows or table.cursor_row < 0 or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row].process.pid

    def show(self, view: View) -> None:
        """Only the rows on screen have their cells made (by the table, through `_cells_at`), and only
        the lines whose cells changed are repainted: the cost of a refresh of a quiet tree does not
        grow with the number of processes but for the row comparison below."""
        self._view = view
        table = self.table
        keep = self.selected_pid()
        procs = self._rows_to_show(view)
        options = (frozenset(self.collapsed), self.filter_text, self.sort, self.reverse, self.flat)
        rebuilt = not (options == self._rows_of[1] and same_items(procs, self._rows_of[0]))
        if rebuilt and not self._replace_rows(procs, options):  # else the rows stand, or changed in place
            self.rows = tree_rows(procs, *options)
            self._keys = [str(r.process.pid) for r in self.rows]
            self._row_of = {r.process.pid: i for i, r in enumerate(self.rows)}
            self._rows_of = (procs, options)
            table.set_natural_widths(natural_widths(self.rows))
        moment = self._moment = view.moment
        self._named = frozenset(moment.named_by_top_cause())
        self._idle_at = self.columns.index("idle") if "idle" in self.columns else None
        if len(self._row_cache) > 2 * len(self.rows) + 100:  # forget processes long gone
            shown = {r.process.pid for r in self.rows}
            self._row_cache = {pid: v for pid, v in self._row_cache.items() if pid in shown}
        table.show_rows(self._keys, self._cells_at)
        if rebuilt and keep is not None:  # the cursor stays on its process
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

    def _replace_rows(self, procs: tuple[ProcessInfo, ...], options: tuple[object, ...]) -> bool:
        """The rows of the processes that changed, swapped in place, when nothing that orders or keeps the
        rows can have moved: the same processes (PID and parent) in the same order, sorted by PID, no filter.
        In a tree's first minute its PSS figures arrive a few hundred rows a refresh: laying out the tree
        of 1,000 again for each was most of such a refresh. True when done; False: build the rows anew."""
        old, old_options = self._rows_of
        if options != old_options or self.sort != "pid" or self.filter_text or len(procs) != len(old):
            return False
        changed = [i for i, same in enumerate(map(operator.is_, procs, old)) if not same]
        if any(procs[i].pid != old[i].pid or procs[i].ppid != old[i].ppid for i in changed):
            return False
        rows, widths = self.rows, False
        for i in changed:
            at = self._row_of.get(procs[i].pid)
            if at is None:  # under a collapsed row: not shown
                continue
            row, p = rows[at], procs[i]
            widths = widths or (p.name, p.wchan, p.gpus) != (row.process.name, row.process.wchan, row.process.gpus)
            rows[at] = Row(p, row.depth, row.has_children, row.collapsed)
        self._rows_of = (procs, options)
        if widths:
            self.table.set_natural_widths(natural_widths(rows))
        return True

    def _rows_to_show(self, view: View) -> tuple[ProcessInfo, ...]:
        """The snapshot's rows; when the whole target is gone, the last rows seen alive, marked gone,
        under a line that says so (the last moment stays on screen while triage watches for a restart)."""
        snap = view.snapshot
        gone = self.query_one("#proc-gone", Static)
        if any(not p.exited for p in snap.processes):  # live_pids() without its tuple of every PID
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

    def _cells_at(self, index: int) -> list[object]:
        """Row `index`'s cells at the moment shown; idle by the engine's rule (the one all-idle uses),
        read from the Moment: no rule of the UI's own."""
        row, moment = self.rows[index], self._moment
        pid = row.process.pid
        if moment is None:
            return self._cells(row, None, False)
        return self._cells(row, moment.idle_for(pid), moment.is_idle(pid))

    def _cells(self, row: Row, idle_for: Optional[float], idle: bool) -> list[object]:
        p: ProcessInfo = row.process
        tagged = p.pid in self.tagged
        idle_text = fmt.idle_for(idle_for) if idle_for is not None else "-"
        # Most rows are what they were a second ago but for idle-for: their other cells are kept
        # and reused (the same list when nothing changed, so the table's compare is an identity check).
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
        # A name is the target's choice: one with a control character is made visible (a Text; so is one
        # with a `[`, kept from when the table read a str as markup: the tests of hostile names pin it).
        # Plain strings otherwise (the table reads a str as plain text).
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


def natural_widths(rows: list[Row]) -> dict[str, int]:
    """The widest text of the name, wchan and GPU columns over `rows` (as _fresh_cells writes them)."""
    name = wchan = gpu = 0
    for row in rows:
        p = row.process
        name = max(name, 3 + 2 * row.depth + len(p.name))  # the tag mark, the indent, the fold mark
        if is_known(p.wchan):
            wchan = max(wchan, len(p.wchan))
        if p.gpus:
            gpu = max(gpu, len(",".join(str(g.gpu_index) for g in p.gpus)))
    return {"name": name, "wchan": wchan, "GPU": gpu}


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

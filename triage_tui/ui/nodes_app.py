"""The Nodes view of a job across nodes: a row per node, the node that differs first, the job's verdict,
and under the table the selected node as its own engine reads it.

The fleet refreshes in a thread worker (every node in parallel, each with its deadline) and posts each
JobMoment back; the UI thread only renders. Enter drills into that node's full app: this app exits with
the node's name, `run_nodes_app` opens the single-node app on that node's Incident, and quitting it
comes back here. While drilled in, only that node is refreshed (by its own app).
"""

from __future__ import annotations

from typing import Optional

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Static

from ..fleet import Fleet
from ..model.job import JobMoment, NodeEvidence, NodeSummary
from ..model.text_format import clock
from ..render.plain_text import visible
from .key_hints import KeyHints
from .workers import Cancelled, call_cancellable

COLUMNS = ("node", "answers", "mode", "procs", "states", "GPUs", "log silent", "port", "top cause")


class JobMomentReady(Message):
    def __init__(self, moment: JobMoment) -> None:
        super().__init__()
        self.moment = moment


def _clock(at: Optional[float]) -> str:
    return clock(at) if at else "never"


def _silence(seconds: Optional[float]) -> str:
    if seconds is None:
        return "—"
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.0f}m"


def node_cells(s: NodeSummary) -> tuple[Text, ...]:
    """One row of the table, every cell plain text (node names and reasons are never markup)."""
    if s.reachable:
        answers = Text("yes" if not s.reason else s.reason[:40], style="" if not s.reason else "yellow")
    else:
        answers = Text(f"no since {_clock(s.last_answer_at)}", style="bold red")
    states = " ".join(f"{k}:{v}" for k, v in s.states.items()) or "—"
    top = f"{s.top_cause} {s.top_status}" if s.top_cause else "—"
    cells = (s.node, answers, s.mode or "—", str(s.processes) if s.reachable else "—", states, s.gpus or "—",
             _silence(s.log_silent_s), s.port_state or "—", top)
    # a Text is never markup; visible() shows a control character a node name or reason holds as its escape
    return tuple(Text(visible(c.plain), style=c.style) if isinstance(c, Text) else Text(visible(str(c))) for c in cells)


DETAIL_HYPOTHESES = 3  # the selected node's first causes shown under the table
DETAIL_ROWS = 2  # evidence rows shown for each


def node_detail(s: NodeSummary, evidence: Optional[NodeEvidence]) -> Text:
    """The selected node as its own engine reads it: how it answered, then its first causes with the rule
    rows their scores sum (Enter opens the node's full app for everything else). Plain text throughout."""
    out = Text()
    out.append(visible(s.node), style="bold")
    if not s.reachable:
        out.append(f" — unreachable since {_clock(s.last_answer_at)}: {visible(s.reason or 'no answer')}", style="red")
        if evidence is None or not evidence.hypotheses:
            return out
        out.append("\nits last answer's reading:")
    else:
        states = " ".join(f"{k}:{v}" for k, v in s.states.items())
        out.append(f" — {s.mode or '?'}, {s.processes} processes" + (f" ({states})" if states else "")
                   + f", answered {_clock(s.last_answer_at)}")
    hypotheses = [h for h in (evidence.hypotheses if evidence is not None else ()) if h.status != "ruled out"]
    if not hypotheses:
        out.append("\nno reading yet")
        return out
    for i, h in enumerate(hypotheses[:DETAIL_HYPOTHESES], 1):
        out.append(f"\n{i}. ", style="bold")
        out.append(visible(h.title), style="bold" if i == 1 else "")
        out.append(f" — {h.status} {h.score:.2f}", style="dim")
        for row in h.evidence[:DETAIL_ROWS]:
            out.append(f"\n   {row.weight:+.2f} {visible(row.text)}", style="green" if row.weight > 0 else "red")
    return out


class NodesApp(App[Optional[str]]):
    """The job's nodes; exits with the node to drill into, or None to quit."""

    TITLE = "triage — job"
    CSS = """
    #verdict { height: auto; max-height: 6; padding: 0 1; background: $boost; }
    #nodes { height: 1fr; }
    #node { height: auto; max-height: 12; padding: 0 1; border-top: solid $primary; }
    """
    BINDINGS = [
        Binding("enter", "drill", "open node"),
        Binding("r", "refresh_now", "refresh"),
        Binding("S", "capture", "all stacks"),
        Binding("question_mark", "help", "help"),
        Binding("q", "quit", "quit"),
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),
    ]

    def __init__(self, fleet: Fleet, interval: float = 2.0) -> None:
        super().__init__()
        self.fleet = fleet
        self.interval = interval
        self.moment: Optional[JobMoment] = fleet.timeline[-1] if fleet.timeline else None
        self.order: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static(Text(f"connecting to {len(self.fleet.watches)} nodes…"), id="verdict")
        table: DataTable[Text] = DataTable(id="nodes", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static(Text("the selected node: waiting for the first answers"), id="node")
        yield KeyHints(id="keys")

    def on_mount(self) -> None:
        table = self.query_one("#nodes", DataTable)
        table.add_columns(*COLUMNS)
        if self.moment is not None:
            self.show(self.moment)
        table.focus()
        self.query_one(KeyHints).show_for(table)
        self.set_interval(self.interval, self.action_refresh_now)
        self.action_refresh_now()

    @work(thread=True, group="tick", exclusive=True, exit_on_error=False)
    def action_refresh_now(self) -> None:
        try:
            moment = call_cancellable(self.fleet.tick)
        except Cancelled:
            return
        self.post_message(JobMomentReady(moment))

    @work(thread=True, group="tick", exclusive=True, exit_on_error=False)
    def action_capture(self) -> None:
        try:
            moment = call_cancellable(self.fleet.capture_stacks)
        except Cancelled:
            return
        self.post_message(JobMomentReady(moment))

    def on_job_moment_ready(self, message: JobMomentReady) -> None:
        self.show(message.moment)

    def show(self, moment: JobMoment) -> None:
        self.moment = moment
        d = moment.diagnosis
        if d.hypotheses:
            top = d.hypotheses[0]
            verdict = Text.assemble(("verdict: ", "bold"), (visible(top.title), "bold"), f" — {top.status} {top.score:.2f}")
            if top.for_:
                verdict.append("\n" + visible(top.for_[0].strip()))
            if top.next_check:
                verdict.append(f"\nnext: {visible(top.next_check)}")
        else:
            verdict = Text("no verdict yet: no node has a cause above unlikely")
        self.query_one("#verdict", Static).update(verdict)
        table = self.query_one("#nodes", DataTable)
        selected = self.order[table.cursor_row] if self.order and 0 <= table.cursor_row < len(self.order) else None
        table.clear()
        self.order = [s.node for s in d.nodes]
        for s in d.nodes:
            table.add_row(*node_cells(s), key=s.node)
        if selected in self.order:
            table.move_cursor(row=self.order.index(selected))
        self.show_selected()

    def show_selected(self) -> None:
        """The detail under the table follows the cursor (and each refresh)."""
        if self.moment is None or not self.order:
            return
        table = self.query_one("#nodes", DataTable)
        row = min(max(table.cursor_row, 0), len(self.order) - 1)
        name = self.order[row]
        summary = next((n for n in self.moment.diagnosis.nodes if n.node == name), None)
        if summary is None:
            return
        evidence = next((e for e in self.moment.evidence if e.node == name), None)
        self.query_one("#node", Static).update(node_detail(summary, evidence))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_selected()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_drill()  # the table takes Enter itself and says so with this event

    def action_drill(self) -> None:
        table = self.query_one("#nodes", DataTable)
        if not self.order:
            return
        node = self.order[table.cursor_row]
        watch = next(w for w in self.fleet.watches if w.name == node)
        if watch.incident is None:
            self.notify(f"{node} cannot be opened: {watch.reason or 'no target there yet'}", severity="warning")
            return
        self.workers.cancel_all()
        self.exit(node)

    def action_help(self) -> None:
        self.notify("↑/↓: select a node (its reading shows under the table) · Enter: open it in the full app "
                    "(q there comes back) · S: stacks of every node · "
                    "r: refresh · q: quit", timeout=8)

    async def action_quit(self) -> None:
        self.workers.cancel_all()
        self.exit(None)


def run_nodes_app(fleet: Fleet, interval: float = 2.0, theme: str = "dark") -> int:
    """The Nodes view until the user quits; Enter opens a node's full app, whose `q` returns here."""
    from .app import TriageApp

    try:
        while True:
            node = NodesApp(fleet, interval=interval).run()
            if node is None:
                return 0
            watch = next(w for w in fleet.watches if w.name == node)
            if watch.incident is not None:
                TriageApp(watch.incident, interval=interval, theme=theme).run()
    finally:
        fleet.close()

"""Pane 4: live tail of the target's logs, errors highlighted, time since the last line always shown."""

from __future__ import annotations

from typing import Any, Optional

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Input, RichLog

from ...model.snapshot import LogLine, LogTail
from ...model.unavailable import is_known
from ...render.plain_text import visible
from .. import format as fmt
from ..text_lines import TextLines
from . import Pane, View

LEVELS = ("all", "warning", "error")  # the filter: everything, warnings and worse, errors only
LEVEL_RANK = {"info": 0, "warning": 1, "error": 2, "traceback": 2}
LEVEL_STYLE = {"warning": "yellow", "error": "bold red", "traceback": "bold red"}


class LogView(RichLog):
    BINDINGS = [
        Binding("j", "scroll_down", "down", show=False),
        Binding("k", "scroll_up", "up", show=False),
    ]


class LogPane(Pane):
    number = 4
    title = "Log"
    BINDINGS = [
        Binding("f", "toggle_follow", "follow"),
        Binding("l", "cycle_level", "level"),
        Binding("slash", "search", "search"),
        Binding("n", "next_match(1)", "next match", show=False),
        Binding("N", "next_match(-1)", "previous match", show=False),
        Binding("escape", "clear_search", "clear search", show=False),
    ]

    def __init__(self, **kwargs: Any) -> None:  # textual.Widget keywords, passed on
        super().__init__(**kwargs)
        self.follow = True
        self.level = "all"
        self.search = ""
        self._view: Optional[View] = None
        self._rendered_key: object = None
        self.shown_lines: list[str] = []
        self.match_rows: list[int] = []  # the log view's line of each search match, in order
        self.current_match: Optional[int] = None  # n/N: the match shown, an index into match_rows

    def compose(self):
        yield TextLines(id="log-status")
        yield Input(placeholder="search the log (Enter keeps, Esc clears)", id="log-search")
        yield LogView(id="log-view", wrap=False, markup=False, auto_scroll=True)

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(Input).display = False

    @property
    def focus_target(self) -> LogView:
        return self.query_one(LogView)

    def show(self, view: View) -> None:
        self._view = view
        tails = view.snapshot.logs
        self.query_one("#log-status", TextLines).show(self._status(tails))
        key = (tuple((t.path, t.lines, t.partial) for t in tails), self.level, self.search)
        if key == self._rendered_key:
            return
        self._rendered_key = key
        log = self.query_one(LogView)
        log.auto_scroll = self.follow
        log.clear()
        self.shown_lines = []
        self.match_rows = []
        for tail in tails:
            if len(tails) > 1:
                log.write(Text(visible(f"── {tail.path} ({tail.source})"), style="dim"))
            if tail.error is not None:
                log.write(Text(visible(f"cannot follow {tail.path}: {fmt.reason(tail.error)}"), style="red"))
            for line in tail.lines:
                if self._keeps(line):
                    self.shown_lines.append(line.text)
                    if self.search:
                        self.match_rows.append(len(log.lines))
                    log.write(self._styled(line))
            if tail.partial and self.level == "all":
                log.write(Text(visible(tail.partial) + "  (no newline yet)", style="dim"))
        if not tails:
            log.write(Text("no log followed: pass --log FILE, or the target's stdout/stderr is not a file", style="dim"))

    def _keeps(self, line: LogLine) -> bool:
        if LEVEL_RANK.get(line.level, 0) < LEVELS.index(self.level):
            return False
        return not self.search or self.search.lower() in line.text.lower()

    def _styled(self, line: LogLine) -> Text:
        text = Text(visible(line.text), style=LEVEL_STYLE.get(line.level, ""))
        if self.search:
            text.highlight_words([self.search], style="reverse", case_sensitive=False)
        return text

    def _status(self, tails: tuple[LogTail, ...]) -> Text:
        out = Text()
        if tails:
            known = [float(t.seconds_since_last_byte) for t in tails if is_known(t.seconds_since_last_byte)]
            if known:
                quiet = min(known)
                out.append(f"last line {fmt.duration(quiet)} ago", style="bold yellow" if quiet >= 60 else "")
            else:
                out.append("no line read yet", style="dim")
        else:
            out.append("no log", style="dim")
        out.append(f" · {'following' if self.follow else 'paused scroll'} · level {self.level}")
        if self.search:
            where = f"{self.current_match + 1}/" if self.current_match is not None else ""
            out.append(f" · search '{visible(self.search)}' {where}{len(self.match_rows)} (n/N)")
        return out

    def _refresh(self) -> None:
        if self._view is not None:
            self.show(self._view)

    def action_toggle_follow(self) -> None:
        self.follow = not self.follow
        log = self.query_one(LogView)
        log.auto_scroll = self.follow
        if self.follow:
            log.scroll_end(animate=False)
        self._refresh()

    def action_cycle_level(self) -> None:
        self.level = LEVELS[(LEVELS.index(self.level) + 1) % len(LEVELS)]
        self._refresh()

    def action_next_match(self, step: int) -> None:
        """n / N: the next / previous line the search matches, scrolled to (following stops, as in less)."""
        if not self.search or not self.match_rows:
            self.app.notify("no search: / searches the log, then n/N step through the matches")
            return
        n = len(self.match_rows)
        if self.current_match is None:  # the first n is the first match, the first N the last
            self.current_match = 0 if step > 0 else n - 1
        else:
            self.current_match = (self.current_match + step) % n
        self.follow = False
        log = self.query_one(LogView)
        log.auto_scroll = False
        log.scroll_to(y=max(0, self.match_rows[self.current_match] - log.size.height // 2), animate=False)
        if self._view is not None:
            self.query_one("#log-status", TextLines).show(self._status(self._view.snapshot.logs))

    def action_search(self) -> None:
        box = self.query_one(Input)
        box.display = True
        box.value = self.search
        box.focus()

    def action_clear_search(self) -> None:
        self.search = ""
        box = self.query_one(Input)
        box.value = ""
        box.display = False
        self.focus_target.focus()
        self._refresh()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.search = event.value.strip()
        self.current_match = None
        self._refresh()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one(Input).display = bool(self.search)
        self.focus_target.focus()

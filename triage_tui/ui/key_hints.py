"""The bottom line: the keys that matter now, as text, `? help` and `q quit` first so they fit at 80
columns. Replaces textual's Footer, which re-mounts one widget per key on every focus change (a
layout and a full-screen repaint each time a pane is switched to: most of a pane switch's cost)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Static

from .panes import update_static

LEAD = (("?", "help"), ("q", "quit"))  # always first
TAIL = (("^p", "palette"),)  # always last


def _shown(bindings: Iterable[Any]) -> list[tuple[str, str]]:
    out = []
    for b in bindings:
        if isinstance(b, Binding) and b.show and b.description:
            out.append((b.key_display or b.key.split(",")[0], b.description))
    return out


def _key(key: str) -> str:
    return {"question_mark": "?", "slash": "/", "space": "space", "enter": "enter"}.get(key, key)


def hints_text(app_bindings: Iterable[Any], focused_bindings: Iterable[Any]) -> Text:
    """`? help  q quit  <the focused pane's keys>  <the app's keys>  ^p palette`, each key once."""
    seen: set[str] = set()
    out = Text()
    items = list(LEAD) + [(_key(k), d) for k, d in _shown(focused_bindings)] + [
        (_key(k), d) for k, d in _shown(app_bindings)] + list(TAIL)
    for key, what in items:
        if key in seen:
            continue
        seen.add(key)
        out.append(" " if not out else "  ")
        out.append(key, style="bold")
        out.append(f" {what}", style="dim")
    out.no_wrap, out.overflow = True, "ellipsis"
    return out


class KeyHints(Static):
    """One line; updated in place (its height never changes, so never a layout)."""

    DEFAULT_CSS = "KeyHints { height: 1; dock: bottom; background: $panel; }"

    def show_for(self, focused: Any) -> None:
        chain: list[Any] = []
        node = focused
        while node is not None and node is not self.app:
            chain.extend(getattr(node, "BINDINGS", ()))
            node = node.parent
        update_static(self, hints_text(self.app.BINDINGS, chain))

"""Every key of the app, in one table: the help screen and docs/app.md are both made from it."""

from __future__ import annotations

KEYS: tuple[tuple[str, str, str], ...] = (
    # (key, where, what)
    ("1-6, Tab", "anywhere", "focus a pane (1 Processes, 2 GPUs, 3 Memory, 4 Log, 5 Stacks, 6 Hypotheses)"),
    ("z", "anywhere", "zoom the focused pane to the full screen, and back"),
    ("↑ ↓ j k", "any pane", "move"),
    ("Enter", "Processes, Hypotheses", "expand / collapse a subtree or a hypothesis"),
    ("/", "Processes, Log", "filter rows (ancestors kept) / search the log; Esc clears"),
    ("space", "Processes", "tag the row (s then acts on the tagged set)"),
    ("o", "Processes", "cycle the sort: pid, cpu, rss, pss, time, name"),
    ("P M T N", "Processes", "sort by CPU / memory (PSS) / CPU time / PID; the same key again reverses"),
    ("I", "Processes", "reverse the sort"),
    ("t", "Processes", "tree / flat list"),
    ("f", "Log", "follow the tail on/off"),
    ("l", "Log", "level filter: all, warnings and worse, errors"),
    ("n N", "Log", "next / previous search match"),
    ("s", "anywhere", "capture stacks of the selected (or tagged) processes"),
    ("S", "anywhere", "capture stacks of the whole target"),
    ("m", "anywhere", "mappings of the selected process, grouped by file (full smaps read)"),
    ("p", "anywhere", "pause refresh (panes keep the last data); again to resume"),
    ("r", "anywhere", "refresh now"),
    ("[ ]", "anywhere", "step back / forward through recorded refreshes"),
    ("{ }", "anywhere", "jump back / forward by a minute"),
    ("End", "anywhere", "back to live"),
    ("e", "anywhere", "export the Markdown report of the incident so far"),
    ("Ctrl+P", "anywhere", "command palette: every action here by name (capture stacks, export, sort by …)"),
    ("?", "anywhere", "this help (j/k and arrows scroll it)"),
    ("F1", "anywhere", "this help, as in htop"),
    ("q", "anywhere", "quit (collection and captures stop; nothing is left running)"),
    ("F10, Ctrl+C", "anywhere", "quit, as in htop and nvitop"),
)

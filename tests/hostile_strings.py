"""The catalogue of hostile strings the campaigns and the plain-text tests drive through every face.

Each is something a process name, a command line, a path, a log line, a frame, file or thread name
can hold: Rich markup that ends or restyles the app, terminal escapes that clear the screen or set the
title, Markdown that breaks out of a code block or a table, HTML, NUL, bidi controls, surrogates.
"""

from __future__ import annotations

HOSTILE: tuple[str, ...] = (
    "[/]",
    "[bold red]X[/]",
    "w[bold]x",
    "[link=https://example.invalid/]click[/link]",
    "[@click=app.quit]q[/]",
    "[anonymous]",
    "[heap]",
    "[stack]",
    "\x1b[2J",
    "\x1b]0;pwned title\x07",
    "\x1b]2;title\x1b\\",
    "\x1b[31mred\x1b[0m",
    "\x1b[?1049h",
    "\x9b2J",
    "\x1bc",
    "```",
    "````\n<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "a|b|c",
    "nul\x00byte",
    "bidi\u202eevil",
    "\u2066isolate\u2069",
    "back\\slash \\x1b[2J",
    "car\rriage",
    "bell\x07",
    "back\x08space",
    "tab\there",
    "line\u2028sep",
    "lone \udcff surrogate",
    "$(touch /tmp/triage-pwned)",
    "%s%n{0}",
)

# what must never reach a terminal raw: C0 (but \n and \t where a face keeps lines), DEL, C1, bidi, surrogates
FORBIDDEN = frozenset(
    [chr(c) for c in range(0x20) if c not in (0x09, 0x0A)] + [chr(c) for c in range(0x7F, 0xA0)]
    + [chr(c) for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029)]
)


def raw_controls(text: str) -> list[str]:
    """The forbidden characters (and surrogates) that occur in `text`, as escapes, for a failure message."""
    return sorted({repr(ch) for ch in text if ch in FORBIDDEN or 0xD800 <= ord(ch) < 0xE000})

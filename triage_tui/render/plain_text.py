"""Text that came from the target or a file, made safe to show: the one sanitising layer of every face.

Process names, command lines, paths, log lines, frame, file and thread names are chosen by whoever
runs the target (or by whoever can write a file it logs to). Shown as they are, an ESC sequence in a
name sets the terminal's title or clears the screen, a bidi override reorders what the reader sees,
a lone surrogate (undecodable bytes) crashes the write, and in the app a `[/]` is Rich markup that
ends it. So every face shows such text through `visible()`: each control character, bidi control
and surrogate becomes the escape a Python programmer reads (`\\x1b[2J`, `\\u202e`), everything else is
kept as it is. The app then wraps the result in a `Text` (never a markup string); Markdown goes
through `md_inline()` / `code_block()`, which also keep fences, table pipes and HTML inert.

Pure and stdlib-only (no rich, no textual): render/, the command-line faces and ui/ all use it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import TextIO

_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
# Bidi embeddings, overrides and isolates, the marks, and the two Unicode line separators: each can
# make a terminal show text in an order (or on lines) other than the one it has.
_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029)


def _escape(code: int) -> str:
    if code in _NAMED:
        return _NAMED[code]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# C0, DEL and C1 controls, bidi controls, surrogates (from bytes decoded with surrogateescape)
_TABLE: dict[int, str] = {c: _escape(c) for c in (*range(0x20), *range(0x7F, 0xA0), *_BIDI, *range(0xD800, 0xE000))}
# a multi-line text keeps its line breaks (and tabs), everything else as above
_TABLE_LINES: dict[int, str] = {c: s for c, s in _TABLE.items() if c not in (0x09, 0x0A)}


def visible(text: object, keep_newlines: bool = False) -> str:
    """`text` with every control character, bidi control and surrogate written as its escape.

    One line of output for one line of input unless `keep_newlines` (then \\n and \\t stay)."""
    s = text if isinstance(text, str) else str(text)
    if s.isprintable():  # every character escaped below is non-printable: the common case costs one scan
        return s
    return s.translate(_TABLE_LINES if keep_newlines else _TABLE)


def is_visible(text: str, keep_newlines: bool = False) -> bool:
    """Whether `text` is already safe to write to a terminal (what `visible` would leave unchanged)."""
    return visible(text, keep_newlines) == text


# ---------------------------------------------------------------- Markdown
# backslash, code spans, links/images, HTML and table cells; emphasis is left alone (it cannot hide or
# run anything, and escaping every `_` would make raw names like all_reduce hard to read)
_MD_SPECIAL = re.compile(r"([\\`\[\]<>|])")


def md_inline(text: object) -> str:
    """Text for a Markdown line or table cell, shown literally: no emphasis, link, HTML, code span or
    cell break can come out of it, and it stays on one line."""
    s = visible(text).replace("&", "&amp;")
    return _MD_SPECIAL.sub(r"\\\1", s)


def md_code(text: object) -> str:
    """Text as an inline code span (literal by construction): the delimiter is one backtick longer
    than any run inside it. Pipes are escaped because a GFM table splits cells even inside a span."""
    s = visible(text).replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    return f"{tick}{pad}{s}{pad}{tick}"


def code_block(lines: Iterable[object], info: str = "") -> list[str]:
    """Lines as a fenced code block that no line can close: the fence is longer than any run of
    backticks in the lines (CommonMark's rule), and each line is made visible."""
    body = [visible(line) for line in lines]
    longest = max((len(m) for line in body for m in re.findall(r"`{3,}", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *body, fence]


# ---------------------------------------------------------------- terminal output
def terminal_text(text: str) -> str:
    """A whole face's output (report, stacks, diagnose, replay) as it may reach the terminal: line
    breaks and tabs kept, every other control written visibly. The last guard: each face already
    makes its fields visible, so this changes nothing unless a field was missed."""
    return visible(text, keep_newlines=True)


def write_out(text: str, stream: TextIO | None = None) -> None:
    """Write a face's output through `terminal_text`."""
    (stream or sys.stdout).write(terminal_text(text))


"""The early frame: what triage was started on, on the terminal before textual is imported (#18).

Importing textual and rich and starting the app take ~0.25 s of CPU before textual's first frame (the
header and six pane frames); until then the terminal would go on showing the shell. This frame is written
right after the command line is checked: the alternate screen textual itself enters (so that leaving it
gives the shell its screen back), the header's first line as the app will show it (host, target as
typed, interval), and a line saying that the interface is starting. Textual's first frame paints every
cell over it. It is not textual's first frame: bench/startup.py and BENCHMARKS.md time the two apart.

Nothing here imports textual or rich: plain escape sequences, the same ones textual writes.
"""

from __future__ import annotations

import os
import sys
from typing import Optional, TextIO

from ..render.plain_text import visible

ENTER = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J"  # the alternate screen, the cursor hidden, the screen cleared
LEAVE = "\x1b[?25h\x1b[?1049l"  # the cursor back, the shell's screen back (what textual writes at its exit)
BOLD, CYAN, DIM, RESET = "\x1b[1m", "\x1b[1;36m", "\x1b[2m", "\x1b[0m"
STARTING = "starting the interface; the target is resolved and read once it is drawn"


def header_parts(host: str, target: str, interval_s: float) -> list[tuple[str, str]]:
    """The header's first line as the app shows it before its first refresh, `starting` in place of
    `waiting for the first refresh`: (text, style) pieces."""
    return [("triage ", BOLD), (f"{visible(host)} ", CYAN), (f"· {visible(target)} · every {interval_s:g}s · starting", "")]


def _styled(parts: list[tuple[str, str]], width: int) -> str:
    """The pieces, cut to `width` characters (visible() leaves them printable; a wide one takes two cells, and
    the line may then wrap: textual's first frame paints over it)."""
    out, left = [], width
    for text, style in parts:
        piece = text[:max(0, left)]
        left -= len(piece)
        if piece:
            out.append(f"{style}{piece}{RESET}" if style else piece)
    return "".join(out)


class EarlyFrame:
    """Shown once; `handed_over` when textual takes the terminal (from then on textual leaves the alternate
    screen at its exit); `leave` gives the shell its screen back if textual never took it (an import error,
    Ctrl-C while textual is imported)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._shown = False
        self._handed_over = False

    def show(self, host: str, target: str, interval_s: float) -> None:
        try:
            width = os.get_terminal_size(self._stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            width = 80
        first = _styled(header_parts(host, target, interval_s), width - 2)
        second = _styled([(STARTING, DIM)], width - 2)
        self._write(f"{ENTER}\x1b[1;2H{first}\x1b[3;2H{second}")
        self._shown = True

    def handed_over(self) -> None:
        self._handed_over = True

    def leave(self) -> None:
        if self._shown and not self._handed_over:
            self._write(LEAVE)
            self._shown = False

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):  # a terminal gone (hung up): nothing to show, nothing to restore
            pass


def early_frame(host: str, target: str, interval_s: float, stream: Optional[TextIO] = None) -> EarlyFrame:
    frame = EarlyFrame(stream if stream is not None else sys.stdout)
    frame.show(host, target, interval_s)
    return frame

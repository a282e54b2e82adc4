"""The cyclic garbage collector paused while the app starts (#18: every pane holding data ≤ 1 s).

What the start makes lives as long as the app: the modules textual and triage import, their classes and
functions, the widgets, the first Moment. Python's collector runs every 700 new container objects while
they are made and finds next to nothing (one run: 70 collections while the app's modules were imported,
~21 ms, 551 objects freed); reference counting frees all that is not in a cycle either way. So the app's
start runs with the collector off, and it is on again once the first Moment is shown (the app says so),
at the latest a few seconds after the app is up (ui/app.py's STARTED_BY_S), and when the command ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


class GcPause:
    """The collector off from here until `resume` (idempotent); off only if it was on."""

    def __init__(self) -> None:
        self._paused = gc.isenabled()
        if self._paused:
            gc.disable()

    def resume(self) -> None:
        if self._paused:
            self._paused = False
            gc.enable()


@contextmanager
def gc_paused() -> Iterator[GcPause]:
    pause = GcPause()
    try:
        yield pause
    finally:
        pause.resume()

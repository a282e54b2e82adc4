"""Blocking calls from thread workers that still let the app quit at once.

A Textual thread worker runs on the event loop's executor, which is joined at exit: a worker blocked
in a hung NVML, py-spy or SSH call would hold the app open. So the worker runs the call in a daemon
thread and waits on it while checking for cancellation; the host's own hard timeouts end that thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from textual.worker import get_current_worker


class Cancelled(Exception):
    """The worker was cancelled (the app is quitting) while the blocking call ran."""


def call_cancellable(fn: Callable[..., Any], *args: Any) -> Any:
    """Run `fn` in a daemon thread; return its result, or raise Cancelled once the worker is cancelled."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # handed to the worker, which reports it
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name=f"triage-{getattr(fn, '__name__', 'call')}", daemon=True).start()
    worker = get_current_worker()
    while not done.wait(0.05):
        if worker.is_cancelled:
            raise Cancelled()
    if worker.is_cancelled:
        raise Cancelled()
    if "error" in box:
        raise box["error"]
    return box["value"]

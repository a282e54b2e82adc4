"""ASGI apps for the uvicorn scenarios (imported by `uvicorn asgi_apps:APP --app-dir tests/scenarios`)."""

from __future__ import annotations

import os
import threading

from fastapi import FastAPI

healthy = FastAPI()


@healthy.get("/health")
async def health() -> dict:
    return {"ok": True}


@healthy.get("/")
async def root() -> dict:
    return {"service": "scenario"}


deadlocked = FastAPI()
_lock_a, _lock_b = threading.Lock(), threading.Lock()
_both = threading.Barrier(2)


def _mark(what: str) -> None:
    path = os.environ.get("TRIAGE_READY")
    if path:
        with open(path, "a") as fh:
            fh.write(f"{os.getpid()} {what}\n")


def _flush_stats() -> None:
    """A background flusher that takes the locks in the other order."""
    with _lock_b:
        _both.wait()
        _mark("flusher")
        with _lock_a:
            pass


threading.Thread(target=_flush_stats, name="stats-flusher", daemon=True).start()


@deadlocked.get("/health")
async def dl_health() -> dict:
    return {"ok": True}


@deadlocked.get("/work")
async def work() -> dict:
    """Takes lock A then lock B on the event loop's thread: with the flusher holding B and waiting for A,
    the loop blocks and no request (not even /health) is answered again; connections are still accepted."""
    with _lock_a:
        _both.wait()
        _mark("handler")
        with _lock_b:
            return {"done": True}

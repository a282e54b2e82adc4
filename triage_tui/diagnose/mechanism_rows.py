"""The rule rows of the twenty-first pass (issue 15): a mechanism named in prose by its fixed technical term
(parse/prose_mechanisms.py). Each weight was chosen from what the term means in its documentation, before any seen
case was scored with it, and kept modest: a named mechanism is someone's claim, weaker than a tool's output, so a
reader of tool output still decides wherever one fires. Rows whose term feeds an existing told-word id (CFS
throttling, thrashing) are weighed by that id's breadth row (breadth_rows.py).
"""

from __future__ import annotations

from .rule_types import Row

# a zombie and leaked semaphores say that a process died, not what killed it: where the paste names a kill for memory
# (the OOM killer, a SIGKILL, memory words), the death has that cause, as the signal rows' "log-killed" says for a crash
_NO_MEMORY_KILL = (" & !log-oom-words & !log-killed & !told-word-oom & !told-word-sigkill & !oom-kill & !log-oom-report"
                   " & !log-memory-limit-kill")

MECHANISM_ROWS: tuple[Row, ...] = (
    Row("stopped", "told-quickedit", 0.35, "told: Windows' console QuickEdit mode (a click selects text and the "
        "console takes no output: the program blocks on its next write until a key is pressed)"),
    Row("crashed-worker", "told-zombie" + _NO_MEMORY_KILL, 0.3, "told: a zombie (defunct) process, one that exited "
        "and was never reaped"),
    Row("fork-inherited-lock", "told-fork-threads", 0.35, "told: fork() in a multithreaded process (the child has "
        "only the calling thread; a lock another thread held stays locked)"),
    Row("fork-inherited-lock", "told-fork-preload", 0.3, "told: the app loaded before its workers are forked (uWSGI "
        "without lazy-apps, gunicorn preload_app): the workers inherit its threads' state without the threads"),
    Row("deadlock", "told-gil-held", 0.3, "told: the GIL held while blocking (every other Python thread waits, the one "
        "that would wake it too)"),
    Row("crashed-worker", "told-leaked-semaphore" + _NO_MEMORY_KILL, 0.2, "told: multiprocessing's leaked semaphores "
        "(a process killed before it cleaned up); weak, the warning also follows a Ctrl-C"),
    Row("gpu-lost", "told-gpu-ecc", 0.3, "told: an uncorrectable ECC error (the GPU needs a reset)"),
    Row("gpu-hang", "told-gpu-tdr", 0.3, "told: TDR (Windows reset a GPU whose work ran past its timeout)"),
    Row("stopped", "told-cgroup-freezer", 0.3, "told: the cgroup freezer (every task held until thawed)"),
    Row("stopped", "told-tty-stop", 0.35, "told: a background job stopped by its terminal (SIGTTIN on a read, SIGTTOU "
        "on a write): stopped until someone runs fg"),
    Row("stale-file-lock", "told-stale-pidfile", 0.3, "told: a stale pidfile or lock file a killed run left behind"),
    Row("stale-file-lock", "told-flock-wait", 0.25, "told: a wait in flock / F_SETLKW (another process holds the "
        "file's lock)"),
    Row("event-never-fires", "told-never-available", 0.25, "told: a service that never becomes available, a wait() "
        "that never returns"),
)

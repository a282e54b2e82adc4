"""The rule rows of the breadth lexicon (parse/prose_breadth.py): a mechanism's common words told in a paste, each
worth little (0.2), so a precise reader (a tool's output, a precise wording) still decides wherever one fires, and a
paste that tells only the mechanism's words ranks its cause instead of none. Each row's text starts "told:" and
quotes the kind of words: evidence that someone wrote it, not that a program printed it.

The tenth pass (issue 15) wrote them from the seen sets (tests/corpus/cases .. cases-9) and the tools' documentation;
the README's #15 section gives, per row, the seen cases and projects it fires on and its leave-one-set-out figure.
"""

from __future__ import annotations

from .rule_types import Row

WEAK = 0.2

BREADTH_ROWS: tuple[Row, ...] = (
    Row("io-blocked", "told-word-io", WEAK, "told: a word for storage as where it waits (network / slow drive, "
        "uninterruptible sleep, local disk cured it)"),
    Row("busy-loop", "told-word-spin & !told-word-fork", WEAK, "told: the CPU pegged (spins, burns, at 100 %) without progress"),
    Row("compiling", "told-word-compile", WEAK, "told: a compile's words (PTX JIT, autotune, a first run slow)"),
    Row("stopped", "told-word-stopped", WEAK, "told: a stop's words (SIGSTOP, SIGCONT, left stopped)"),
    Row("gpu-hang", "told-word-gpu-kernel", WEAK, "told: a kernel that never finishes (__syncthreads(), a sync that "
        "hangs)"),
    Row("event-never-fires", "told-word-event", WEAK, "told: an event cleared or never set, a wait on a future's result()"),
    Row("fork-inherited-lock", "told-word-fork", WEAK, "told: the program forks (a forked child inherits the locks its "
        "parent's threads held)"),
    # second group: the causes the precise readers know best, told without the tool's output
    Row("shm-exhausted", "told-word-shm", WEAK, "told: shared memory's words (/dev/shm, its limit)"),
    Row("stale-file-lock", "told-word-lock-file", WEAK, "told: a lock file's words (lock file, torch_extensions)"),
    Row("gpu-lost", "told-word-gpu-lost", WEAK, "told: a lost GPU's words (Xid, fell off the bus)"),
    Row("network-wait", "told-word-rendezvous", WEAK, "told: rendezvous words (MASTER_ADDR, connection refused)"),
    Row("oom", "told-word-oom", WEAK, "told: an OOM kill's words (Killed, exit code 137, swapping)"),
    Row("collective-mismatch", "told-word-mismatch", WEAK, "told: ranks that disagree (a mismatch, different keys)"),
    Row("crashed-worker", "told-word-died", WEAK, "told: a fault's words (SIGSEGV, SIGABRT, exit code -11)"),
    Row("oom", "told-word-sigkill", WEAK, "told: SIGKILL (exit code -9), unasked the OOM killer's"),
    Row("wait-for-missing-rank", "told-word-late", WEAK, "told: one rank at its own work while the others wait"),
    # eleventh pass
    Row("collective-hang", "told-word-nccl-tests", WEAK, "told: an nccl-tests binary (only NCCL collectives run there)"),
    # twelfth pass
    Row("cpu-starved", "told-word-cpu-limit", WEAK, "told: a CPU limit (a container's quota, cores pinned, a fraction "
        "of a vCPU): more threads than it allows are throttled"),
    Row("fork-inherited-lock", "told-word-fork-logging", WEAK, "told: logging with multiprocessing or a fork "
        "(logging's lock is the one a fork most often copies held)"),
    Row("still-loading", "told-word-load-slow", WEAK, "told: a model load slow or still going (it ends when the "
        "weights are read)"),
)

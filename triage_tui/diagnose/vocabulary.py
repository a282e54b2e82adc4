"""The observation vocabulary: every id an observer may emit, where it comes from, what it means.

One registry, so the two sides of the engine cannot drift apart by a typo: an observer that emits an
id not listed here raises (`register`, called by every observer's `_obs`), and rules.py is checked
against it when it is imported (`check_rules` in hypotheses.py): a condition naming an id that no
observer can emit is an error at import, never a rule that silently never fires. New observation
ids (waits, pasted text, new scenarios) are added here first; tests/unit/test_rules.py lists the
ids no rule uses yet, so an informational observation is a decision, not an accident.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..parse.prose_lexicon import PROSE
from ..parse.prose_mined import MORE_IDS
from ..parse.signal_lexicon import LEXICON
from .wait_kinds import KINDS
from .word_model import PLACE_IDS


@dataclass(frozen=True)
class ObservationKind:
    id: str
    source: str  # processes | memory | logs | ports | gpus | stacks | kernel | waits | pasted text
    meaning: str


def _kinds(source: str, *pairs: tuple[str, str]) -> tuple[ObservationKind, ...]:
    return tuple(ObservationKind(oid, source, meaning) for oid, meaning in pairs)


_ALL: tuple[ObservationKind, ...] = (
    *_kinds("processes",
            ("several-processes", "three or more live processes in the tree (ranks are possible)"),
            ("all-idle", "every live process used no CPU and read nothing for idle_after_s"),
            ("busy-process", "a process burns half a core or more"),
            ("one-busy-others-idle", "one process busy while all the others idle"),
            ("zombie", "a process died and its parent has not reaped it"),
            ("stopped-process", "a process is stopped (T) or traced (t)"),
            ("none-stopped", "no process is stopped"),
            ("d-state", "a process in uninterruptible sleep (D)"),
            ("d-state-faults", "a process in D with major page faults"),
            ("runnable-starved", "runnable (R) but little CPU, with involuntary switches"),
            ("compiler-running", "a compiler child (nvcc, ninja, gcc, …) is working"),
            ("io-reading", "the tree read bytes since the last look"),
            ("worker-exited", "a process of the tree is gone"),
            ("worker-sigkilled", "a process of the tree was killed by SIGKILL"),
            ("target-gone", "every process of the target has exited (it was seen alive before)"),
            ("target-exited-ok", "the target's root exited with code 0: it ended by itself"),
            ("workers-missing", "fewer workers than the command line asks for"),
            ("workers-present", "as many workers as the command line asks for"),
            ("all-alive", "every process alive: none exited, none a zombie"),
            ("worker-replaced", "a peer started well after its siblings of the same role, which are still there: "
                                "a replacement, so one of them died"),
            ("workers-recycled", "workers of one role exited during the watch while as many of it started: a pool "
                                 "retiring and replacing its workers"),
            ("kernel-odd-rank", "one peer sleeps elsewhere in the kernel's view (state, wait channel), before any stacks"),
            ("first-look", "CPU time against age, state and wait channel, a log's last write: one look, no watching"),
            ("progress-seen", "during the watch the tree's CPU grew and its log or reads advanced, its log's step counter rose, "
                             "or a port it serves sent its clients bytes"),
            ("not-judged-yet", "the watch is shorter than idle needs: what cannot be judged yet")),
    *_kinds("logs",
            ("log-silent", "no byte written to a followed log for silent_after_s"),
            ("log-silent-after-load", "silence right after a finished progress bar"),
            ("log-ends-after-load", "a pasted log ends at a finished progress bar"),
            ("log-ends-at-child-start", "a pasted log ends where a forked worker announces its start"),
            ("log-active", "a followed log wrote recently"),
            ("log-progress", "a progress bar is advancing"),
            ("log-steps-advancing", "the log's loop counter (step, iter, epoch, batch) rose during the watch")),
    *_kinds("waits",
            ("wait-cycle", "processes wait on each other (a cycle in the wait-for graph)"),
            ("wait-hub", "every waiter waits on one process"),
            ("wait-on-exited", "a process waits on a peer that has exited"),
            ("wait-not-accepted", "a connection sits in a listener's accept queue, never accepted"),
            ("wait-rendezvous", "processes wait on the rendezvous address their command line announces"),
            ("wait-upstream", "processes wait on a remote (upstream) address"),
            ("wait-netfs-io", "a D-state read on a network filesystem")),
    *_kinds("pasted text",
            ("log-several-ranks", "several ranks are named in the pasted log lines"),
            ("log-ranks-missing", "some ranks report the collective timeout, others never do"),
            ("shm-nearly-full", "/dev/shm nearly full (df)"),
            ("stacks-one-in-collective", "the one dumped process waits in a collective"),
            ("stacks-one-lock", "the one dumped process waits to acquire a lock"),
            ("stacks-one-waiting", "the one dumped process waits (another kind)"),
            ("prose-gpu-busy-low-power", "prose quotes GPUs busy at low power"),
            ("prose-gpu-busy", "prose quotes GPUs busy"),
            ("prose-gpu-idle", "prose quotes GPUs idle"),
            ("prose-cpu-idle", "prose quotes the CPU idle"),
            ("prose-cpu-busy", "prose quotes the CPU busy"),
            ("prose-stuck", "prose says it is stuck (for hours)"),
            ("prose-rss", "prose quotes an RSS figure"),
            ("paste-no-other-evidence", "the other evidence in the paste ranks no cause: the mined phrases count"),
            ("paste-other-evidence", "the other evidence in the paste ranks a cause: the word model only ranks the "
             "causes it does not, behind it"),
            ("pasted-code", "a Python script pasted (code, not its output) and the library calls it makes"),
            ("vmstat-blocked", "vmstat counts processes blocked in uninterruptible I/O"),
            ("socket-connecting", "a pasted ss/netstat shows a connect nothing answers (SYN-SENT)"),
            ("gpu-busy-low-watts", "pasted GPU figures: busy at low power (a spin-wait)"),
            ("oom-kill-elsewhere", "an OOM-killer line names a process outside the pasted target"),
            ("segfault-elsewhere", "a segfault line names a process outside the pasted target"),
            # the twenty-first pass: an strace excerpt read as a whole, one process at a time (parse/strace_text.py)
            ("log-strace-spin", "an strace of one process whose calls all return at once and repeat: a loop that "
             "never sleeps"),
            ("log-strace-lock-wait", "an strace of one process that ends in a file-lock wait that never returned "
             "(flock LOCK_EX, fcntl F_SETLKW)"),
            ("log-strace-pending-wait", "an strace of one process that ends in a wait that never returned (a futex, "
             "a child, a read): where it waits, not why")),
    *_kinds("ports",
            ("port-accepting", "the probed port accepts connections"),
            ("port-refused", "the probed port refuses or does not answer"),
            ("port-answering", "the probed port answered a request (GET /health) as a client would see it"),
            ("port-not-answering", "the port accepts connections but never answers a request"),
            ("store-accepting", "a rendezvous store's port accepts connections (connect only)"),
            ("store-refused", "a rendezvous store's port refuses connections"),
            ("requests-served", "a port the tree serves moved bytes to its clients during the watch (tcp_info byte "
                                "counters, or connections it closed after serving; triage's own probe excluded)")),
    *_kinds("gpus",
            ("gpu-loaded-idle", "GPUs hold memory at 0 % utilisation"),
            ("gpu-computing", "GPUs compute at normal power"),
            ("gpu-spin", "GPUs at ~100 % utilisation at near-idle power (a spin-wait)")),
    *_kinds("memory",
            ("memory-low", "MemAvailable below memory_low_ratio of RAM"),
            ("memory-ample", "plenty of memory available"),
            ("cgroup-at-limit", "the target's cgroup is at its memory limit"),
            ("anon-growing", "anonymous memory of the tree keeps growing"),
            ("rss-illusion", "the RSS sum overstates memory: the pages are shared (PSS or RAM far lower)"),
            ("cgroup-oom-before", "the cgroup counted OOM kills before the watch (not tied to this job)"),
            ("cgroup-oom-below", "the cgroup's OOM count rose, for a task the kernel puts in another cgroup below it")),
    *_kinds("kernel",
            ("oom-kill", "the OOM killer named a process of the tree"),
            ("no-oom-kill", "no OOM-killer line names a process of the tree"),
            ("segfault", "a segfault line names a process of the tree"),
            ("worker-oom-killed", "the OOM killer killed the very worker that vanished"),
            ("oom-kill-unseen", "an OOM-kill line names a PID never seen in the tree, matched to it by name and time"),
            ("segfault-unseen", "a segfault or trap line names a PID never seen in the tree, matched by name and time"),
            ("death-nearby", "a kernel kill or crash line about a PID never seen, with the tree's name and in its "
                             "lifetime, but nothing else tying it to the tree")),
    *_kinds("stacks",
            ("stacks-captured", "a stack capture was read"),
            ("stacks-failed", "some processes' stacks could not be read"),
            ("stacks-several-ranks", "the capture has several ranks"),
            ("stacks-same-collective", "every rank waits in the same collective"),
            ("stacks-different-collectives", "ranks wait in different collectives"),
            ("stacks-odd-rank", "one rank is elsewhere than the others"),
            ("stacks-lock-wait", "threads wait to acquire locks"),
            ("stacks-one-lock-wait", "one thread waits on a lock"),
            ("stacks-no-lock", "no thread waits on a lock"),
            ("stacks-orphan-lock", "a live process's only thread waits on a lock: no thread can release it"),
            ("stacks-unchanged", "the stacks did not change between two captures"),
            ("stacks-compile", "main threads compiling"),
            ("stacks-device-sync", "main threads waiting on the GPU"),
            ("stacks-file-io", "main threads reading files"),
            ("stacks-netfs-rpc", "a kernel stack waits in a network filesystem's RPC (ptlrpc, sunrpc/NFS, ceph, cifs)"),
            ("stacks-running", "main threads running Python code"),
            ("stacks-rendezvous", "main threads waiting at rendezvous"),
            ("stacks-subprocess", "main threads waiting for a child process"),
            ("stacks-file-lock", "a process waits on a lock file"),
            ("stacks-atexit-lock", "a process waits on glibc's atexit lock (a lock inherited over fork)"),
            ("stacks-fork-lock", "a pasted dump's lock wait with no holder after a fork (a forked child's, or the "
                                 "import or logging lock with no thread inside)"),
            *((f"stacks-odd-{kind}", f"the odd rank waits in: {kind}") for kind in KINDS)),
)

# the log-line signals: one observation id per lexicon row id (parse/signal_lexicon.py holds their patterns)
_LEXICON: tuple[ObservationKind, ...] = tuple(
    ObservationKind(oid, "logs", means) for oid, means in dict((s.id, s.means) for s in reversed(LEXICON)).items())

# the prose rows (parse/prose_lexicon.py): a mechanism told in words, read in pastes only; a row may share a log row's id
_LOG_IDS = {kind.id for kind in _LEXICON}
_PROSE: tuple[ObservationKind, ...] = tuple(
    ObservationKind(oid, "pasted text", means) for oid, means in dict((s.id, s.means) for s in reversed(PROSE)).items()
    if oid not in _LOG_IDS)

# a cause's second and third mined phrase found in a paste (parse/prose_mined.py: each distinct phrase is a row)
_MORE: tuple[ObservationKind, ...] = tuple(ObservationKind(oid, "pasted text", means) for oid, means in MORE_IDS)

# a cause the paste's words rank at a place (diagnose/word_model.py; diagnose/word_rows.py weighs it)
_WORDS: tuple[ObservationKind, ...] = tuple(ObservationKind(oid, "pasted text", means) for oid, means in PLACE_IDS)

VOCABULARY: dict[str, ObservationKind] = {kind.id: kind for kind in (*_ALL, *_LEXICON, *_PROSE, *_MORE, *_WORDS)}
assert len(VOCABULARY) == len(_ALL) + len(_LEXICON) + len(_PROSE) + len(_MORE) + len(_WORDS), \
    "an observation id is registered twice"


class UnknownObservation(KeyError):
    """An observer emitted, or a rule named, an id that is not in the vocabulary."""


def register(oid: str) -> str:
    """`oid`, checked: every observer's `_obs` passes its id through here."""
    if oid not in VOCABULARY:
        raise UnknownObservation(f"observation id {oid!r} is not in diagnose/vocabulary.py")
    return oid

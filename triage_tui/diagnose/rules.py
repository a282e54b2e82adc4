"""The rules, as data: which observations count for, against, or rule out each hypothesis.

Each row's condition is a small expression over observation ids: `a & b & !c` means a and b were
observed and c was not. `evaluate` in hypotheses.py reads these tables; no rule lives in code.
Weights add up to a score clipped to 0..1 (likely ≥ 0.6, possible ≥ 0.3, else unlikely); a
rule-out row that fires sets the status to "ruled out" with its reason.
"""

from __future__ import annotations

from .rule_types import FINDING_CAP, NEEDS_CAP, Row, RuleOut, Spec
from .breadth_rows import BREADTH_ROWS
from .mechanism_rows import MECHANISM_ROWS
from .mined_rows import MINED_ROWS
from .signal_rows import SIGNAL_ROWS
from .word_rows import WORD_ROWS

__all__ = ["CATALOGUE", "FINDING_CAP", "NEEDS_CAP", "ROWS", "RULE_OUTS", "Row", "RuleOut", "Spec"]

CATALOGUE: tuple[Spec, ...] = (
    Spec("wait-for-missing-rank", "A wait for a rank that never arrived (the others sleep in a collective or IPC wait)",
         needs="several-processes | stacks-several-ranks | stacks-odd-rank | wait-hub | log-several-ranks"
               " | log-nccl-timeout | stacks-one-in-collective | log-store-barrier | log-rank-late | log-barrier-hang"
               " | log-horovod-stall",
         needs_text="fewer than 3 processes seen: no ranks to wait for",
         titles=(("stacks-odd-rank", "A wait for the missing rank: PID {pid} never reached the wait (it is in {frame})"),
                 ("wait-hub", "Everyone waits on {hub_name}, which waits on nothing of the tree ({hub_doing})"),
                 ("kernel-odd-rank", "A wait for the missing rank: PID {kernel_pid} sleeps elsewhere ({wchan}) while "
                                     "the other {others} wait in {others_wchan} (the kernel's view, before any stacks)")),
         next_checks=(("stacks-odd-rank", "py-spy dump --native the odd rank PID {pid} and read its frame: S on it"),
                      ("", "capture stacks of all {processes} processes at once, grouped, and look for the rank that "
                           "differs: S (or --auto-stacks)"))),
    Spec("collective-hang", "Every rank stuck inside the same collective (transport / NCCL, not app logic)",
         needs="several-processes | stacks-several-ranks | stacks-same-collective | log-several-ranks | log-nccl-timeout"
               " | log-nccl-error | stacks-one-in-collective | prose-gpu-busy-low-power | log-nccl-only-hangs",
         needs_text="fewer than 3 processes seen: no collective",
         next_checks=(("stacks-same-collective", "rerun with NCCL_DEBUG=INFO; check P2P/ACS/IOMMU (nvidia-smi topo -m); "
                       "try NCCL_P2P_DISABLE=1"),
                      ("", "capture stacks of all ranks: S — every rank in one collective means the transport"))),
    Spec("collective-mismatch", "Ranks in different collectives (one skipped or reordered a collective)",
         needs="several-processes | stacks-several-ranks | stacks-different-collectives | log-several-ranks"
               " | log-nccl-timeout | log-horovod-stall | told-collective-skipped",  # told: it names the ranks
         needs_text="fewer than 3 processes seen: no collective",
         next_checks=(("", "capture stacks of all ranks (S) and compare the collective each is in; does it hang at the "
                           "same step every run?"),)),
    Spec("deadlock", "Threads deadlocked on locks",
         titles=(("wait-cycle", "A deadlock across processes: {wait_cycle}"),),
         next_checks=(("stacks-lock-wait", "py-spy dump --locals the threads on locks: which lock does each hold?"),
                      ("", "capture stacks of every thread: S — look for threads in acquire()"))),
    Spec("crashed-worker", "A worker crashed and the others wait for it",
         titles=(("target-gone", "The target is gone: {gone_what}"),
                 ("wait-on-exited", "A worker crashed and the others wait for it: PID {exited_pid} ({exited_name}) "
                                    "exited, PID {exited_waiter} still waits on {exited_object}"),),
         next_checks=(("", "read the dead worker's last log lines and exit code; dmesg -T | grep -i -E 'segfault|killed'"),)),
    Spec("oom", "Real memory pressure (the OOM killer, a full cgroup)",
         next_checks=(("", "check the kernel log for OOM kills: dmesg -T | grep -i -E 'oom|killed process'; "
                           "watch MemAvailable and the cgroup's memory.max"),)),
    Spec("still-loading", "Still loading (weights or startup still in progress)",
         next_checks=(("", "watch the log and the read-bytes column for another minute; compare with the usual load time"),)),
    Spec("compiling", "Compiling (JIT / kernel build / autotune): slow, not stuck",
         next_checks=(("", "watch the compiler children's CPU time grow: ps -o pid,time,cmd --ppid PID"),)),
    Spec("gpu-hang", "A wedged GPU kernel (the device spins, the host waits on it)",
         next_checks=(("", "nvidia-smi -q -d PERFORMANCE,CLOCK; dmesg for Xid errors; py-spy dump --native the rank "
                           "in synchronize: S"),)),
    Spec("io-blocked", "Blocked on I/O (D state, page faults on a network filesystem)",
         titles=(("wait-netfs-io", "Blocked on I/O: PID {io_pid} in D state on {io_path} ({io_fs})"),),
         next_checks=(("", "cat /proc/PID/stack and /proc/PID/wchan; where do the weights live? (df -T, mount | grep nfs)"),)),
    Spec("network-wait", "Waiting at rendezvous (TCPStore / connect to the master)",
         titles=(("wait-not-accepted", "Waiting on {net_address}: the listener (PID {listener_pid}) never accepted "
                                       "the connection"),
                 ("wait-rendezvous", "Waiting at rendezvous: {net_waiters} blocked reading {net_address} for "
                                     "{net_waited}"),
                 ("wait-upstream", "Waiting on an upstream: {net_waiters} blocked reading {net_address} for "
                                   "{net_waited}")),
         next_checks=(("", "is the master address/port right and answering? ss -tlnp | grep MASTER_PORT; IPv4 vs IPv6; "
                           "hostnames"),)),
    Spec("stopped", "Stopped (SIGSTOP, a debugger, or a profiler that left it stopped)",
         titles=(("stopped-process", "Stopped: PID {pid_stopped} is in state T"),),
         next_checks=(("", "find who stopped it (a debugger? a dead py-spy?), then kill -CONT PID — triage sends no "
                           "signals"),)),
    Spec("busy-loop", "A busy loop (CPU burning without progress)",
         next_checks=(("", "py-spy dump the busy PID twice and compare, or py-spy top --pid PID"),)),
    Spec("cpu-starved", "Starved of CPU (runnable, not running)",
         next_checks=(("", "uptime; top; the cgroup's cpu.max: who takes the CPU?"),)),
    Spec("healthy", "Healthy (answering and making progress)",
         needs="progress-seen | port-answering",
         needs_text="no port answered a request and nothing advanced during the watch (CPU with log or I/O): "
                    "no positive evidence of health",
         next_checks=(("", "send a real request and time it: curl -sS -m 10 http://HOST:PORT/..."),)),
    # causes the pasted-text corpus (tests/corpus) showed and the vocabulary lacked
    Spec("shm-exhausted", "Shared memory (/dev/shm) too small or full: workers die of SIGBUS or wait forever",
         next_checks=(("", "df -h /dev/shm; in docker run with --shm-size=8g or --ipc=host; fewer DataLoader workers"),)),
    Spec("stale-file-lock", "Waiting on a lock file a killed run left behind (torch_extensions, a cache lock)",
         next_checks=(("", "find the lock: ls -la ~/.cache/torch_extensions/*/*/lock (its age); no build running? "
                           "remove it"),)),
    Spec("fork-inherited-lock", "A lock inherited across fork: the child waits on a lock its parent's thread held",
         next_checks=(("", "py-spy dump --native the stuck child; start workers with spawn "
                           "(multiprocessing_context='spawn')"),)),
    Spec("event-never-fires", "Waiting for a result that never comes (a queue, future or event nobody will complete)",
         next_checks=(("", "who should produce it? dump the producer's stacks (a worker, a thread) — is it alive?"),)),
    Spec("gpu-lost", "A GPU failed or fell off the bus (Xid, NVML cannot reach it)",
         next_checks=(("", "dmesg -T | grep -i -E 'xid|fallen off'; nvidia-smi -q; the node needs the GPU reset or "
                           "drained"),)),
    Spec("rss-illusion", "RSS overstates memory: the pages are shared (the RSS illusion)", kind="finding",
         needs="rss-illusion", needs_text="RSS and PSS agree (or PSS not read yet)",
         next_checks=(("", "read PSS/USS (smaps_rollup) instead of summing RSS; compare with free's used/available"),)),
)

ROWS: tuple[Row, ...] = (
    # wait-for-missing-rank
    Row("wait-for-missing-rank", "all-idle", 0.25, "everyone waits"),
    Row("wait-for-missing-rank", "log-silent-after-load | log-ends-after-load", 0.15),
    Row("wait-for-missing-rank", "port-refused", 0.1),
    Row("wait-for-missing-rank", "all-idle & port-refused & log-silent-after-load", 0.1,
        "start-up stuck between loading and binding the port"),
    Row("wait-for-missing-rank", "gpu-loaded-idle", 0.1),
    Row("wait-for-missing-rank", "workers-present", 0.05),
    Row("wait-for-missing-rank", "stacks-odd-rank", 0.45, "that rank names the cause"),
    Row("wait-for-missing-rank", "kernel-odd-rank & !stacks-captured", 0.25, "the kernel already shows the odd one"),
    Row("wait-for-missing-rank", "wait-hub & !stacks-odd-rank", 0.45, "the process everyone waits on is the one to look at"),
    Row("wait-for-missing-rank", "wait-cycle & !stacks-odd-rank", -0.3, "they wait on each other, not on a missing rank"),
    Row("wait-for-missing-rank", "one-busy-others-idle", 0.2, "the busy one is late"),
    Row("wait-for-missing-rank", "stacks-odd-rank & stacks-odd-running", 0.2,
        "the rank the others wait for is running code of its own: it is late, and it is the one to look at"),
    Row("wait-for-missing-rank", "log-barrier-timeout", 0.15, "a waiter gave up: the slow one is elsewhere"),
    Row("wait-for-missing-rank", "log-nccl-timeout", 0.1),
    Row("wait-for-missing-rank", "log-shm-broadcast", 0.1),
    Row("wait-for-missing-rank", "stacks-same-collective & !stacks-odd-rank", -0.35, "no rank is elsewhere"),
    Row("wait-for-missing-rank", "stacks-lock-wait", -0.3),
    Row("wait-for-missing-rank", "stacks-rendezvous", -0.3),
    Row("wait-for-missing-rank", "stacks-different-collectives", -0.2),
    Row("wait-for-missing-rank", "port-answering", -0.4),
    Row("wait-for-missing-rank", "log-progress", -0.3),
    Row("wait-for-missing-rank", "log-steps-advancing", -0.3, "the log's step counter rises: the loop moves"),
    Row("wait-for-missing-rank", "requests-served", -0.3, "its clients are being answered: nothing waits"),
    Row("wait-for-missing-rank", "worker-exited | log-worker-exited", -0.2, "the missing rank is dead, not late"),
    Row("wait-for-missing-rank", "zombie", -0.2),
    Row("wait-for-missing-rank", "worker-replaced | segfault-unseen | oom-kill-unseen", -0.2,
        "a member died before triage looked: the one missing is dead, not late"),
    Row("wait-for-missing-rank", "stopped-process", -0.3),
    Row("wait-for-missing-rank", "compiler-running", -0.3),
    # collective-hang
    Row("collective-hang", "stacks-same-collective", 0.6),
    Row("collective-hang", "stacks-unchanged", 0.1),
    Row("collective-hang", "gpu-spin", 0.2, "NCCL spin-waits on the GPU"),
    Row("collective-hang", "log-nccl-timeout", 0.2),
    Row("collective-hang", "all-idle", 0.1),
    Row("collective-hang", "gpu-loaded-idle", 0.05),
    Row("collective-hang", "stacks-odd-rank", -0.3, "one rank is elsewhere"),
    Row("collective-hang", "stacks-different-collectives", -0.4),
    Row("collective-hang", "stacks-lock-wait", -0.2),
    Row("collective-hang", "port-answering", -0.4),
    Row("collective-hang", "log-steps-advancing", -0.3, "the log's step counter rises: the loop moves"),
    Row("collective-hang", "requests-served", -0.3, "its clients are being answered: nothing waits"),
    # collective-mismatch
    Row("collective-mismatch", "stacks-different-collectives", 0.7),
    Row("collective-mismatch", "log-nccl-timeout", 0.1),
    Row("collective-mismatch", "all-idle", 0.1),
    Row("collective-mismatch", "stacks-same-collective", -0.4),
    # deadlock
    Row("deadlock", "stacks-lock-wait", 0.6),
    Row("deadlock", "wait-cycle", 0.7, "a cycle of waits across processes: nobody left to act"),
    # ranks of a collective read each other's sockets by design (gloo/NCCL rings): with stacks that show the
    # ranks in collectives and no thread on a lock, such a "cycle" is the collective's exchange, not a deadlock
    Row("deadlock", "wait-cycle & stacks-no-lock & stacks-several-ranks | wait-cycle & stacks-no-lock & stacks-odd-rank"
        " | wait-cycle & stacks-no-lock & stacks-same-collective", -0.6,
        "the stacks show ranks in collectives and no lock: peers of a collective wait on each other's sockets"),
    Row("deadlock", "port-not-answering & stacks-lock-wait | port-not-answering & stacks-one-lock-wait", 0.1,
        "the server's request threads are stuck"),
    Row("deadlock", "stacks-one-lock-wait", 0.2),
    Row("deadlock", "all-idle", 0.2),
    Row("deadlock", "stacks-unchanged", 0.1),
    Row("deadlock", "stacks-no-lock", -0.3),
    Row("deadlock", "busy-process", -0.2),
    Row("deadlock", "port-answering", -0.2),
    Row("deadlock", "log-active", -0.2),
    Row("deadlock", "log-steps-advancing", -0.3, "the log's step counter rises: the loop moves"),
    Row("deadlock", "requests-served", -0.3, "its clients are being answered: the request path is not locked"),
    Row("deadlock", "stacks-same-collective", -0.2),
    # a death explains the waits of the rest (they wait for what the dead one took with it), unless threads
    # really sit on locks
    Row("deadlock", "worker-exited & !stacks-lock-wait | zombie & !stacks-lock-wait | worker-replaced & !stacks-lock-wait"
        " | segfault-unseen & !stacks-lock-wait | oom-kill-unseen & !stacks-lock-wait", -0.25,
        "a worker died: the others wait for the work it took with it, not on each other's locks"),
    # crashed-worker
    Row("crashed-worker", "worker-exited", 0.6),
    Row("crashed-worker", "target-gone & !target-exited-ok", 0.3, "the whole target is gone"),
    Row("crashed-worker", "target-exited-ok", -0.25, "it ended by itself, with code 0"),
    Row("crashed-worker", "wait-on-exited", 0.3, "the peer it waits on is gone"),
    Row("crashed-worker", "zombie", 0.6, "a worker died and was not reaped"),
    Row("crashed-worker", "workers-missing", 0.35),
    Row("crashed-worker", "segfault", 0.4),
    Row("crashed-worker", "worker-replaced", 0.45, "a pool starts a worker late only when one is gone"),
    Row("crashed-worker", "worker-replaced & all-idle", 0.15, "and the job has waited since: the dead worker took "
        "its work with it"),
    Row("crashed-worker", "segfault-unseen", 0.45, "a member of the job crashed before triage looked"),
    Row("crashed-worker", "oom-kill-unseen", -0.2, "the OOM killer explains the death"),
    # the hypothesis is a hang: the others wait for the dead one. Work seen advancing says they do not
    Row("crashed-worker", "progress-seen", -0.5, "the job progresses: whatever exited did not stop it"),
    Row("crashed-worker", "workers-recycled & progress-seen", -0.3, "workers retired and replaced in turn while "
        "the job goes on: recycling, not a crash"),
    # the pool's own replacements look late against the siblings of the moment; which one a look catches
    # depends on timing (on a loaded CI runner it did), so a replacement explained by the recycling weighs nothing
    Row("crashed-worker", "worker-replaced & workers-recycled & progress-seen", -0.45, "the late worker is the pool's "
        "recycling, seen while the job goes on"),
    Row("crashed-worker", "death-nearby", 0.1, "a process of the same name died during the job: perhaps one of its own"),
    Row("crashed-worker", "log-worker-exited", 0.5),
    Row("crashed-worker", "log-traceback", 0.15),
    Row("crashed-worker", "oom-kill", -0.15, "the OOM killer explains the death"),
    Row("crashed-worker", "worker-oom-killed", -0.3, "a death by the OOM killer is an OOM"),
    # oom
    Row("oom", "oom-kill", 0.8),
    Row("oom", "worker-oom-killed", 0.4),
    Row("oom", "oom-kill-unseen", 0.6, "a member of the job was OOM-killed before triage looked"),
    Row("oom", "memory-low", 0.4),
    Row("oom", "cgroup-at-limit", 0.4),
    Row("oom", "worker-sigkilled", 0.3, "SIGKILL is usually the OOM killer"),
    Row("oom", "log-killed", 0.2),
    Row("oom", "log-cuda-oom", 0.3, "GPU memory, not host memory"),
    Row("oom", "anon-growing", 0.2),
    Row("oom", "cgroup-oom-before", 0.15, "an earlier OOM kill in the cgroup; none named this job's PIDs"),
    Row("oom", "cgroup-oom-below", 0.1, "an OOM kill below the tree's cgroup: another job's, unless this one's spread"),
    # a paste's `free` is often taken after the kill, when the memory is back: it does not contradict someone who saw
    # the memory run out
    Row("oom", "memory-ample & !log-oom-words", -0.3),
    Row("oom", "no-oom-kill", -0.1),
    # still-loading
    Row("still-loading", "log-progress", 0.5),
    Row("still-loading", "log-load-step-long", 0.3, "a scan / load step's bar that has run 10 minutes or more"),
    Row("still-loading", "io-reading", 0.3),
    Row("still-loading", "stacks-file-io", 0.3),
    Row("still-loading", "log-active", 0.1),
    Row("still-loading", "d-state-faults", 0.1),
    Row("still-loading", "all-idle", -0.4, "loading uses CPU or I/O"),
    Row("still-loading", "log-silent-after-load | log-ends-after-load", -0.3),
    Row("still-loading", "log-silent", -0.1),
    Row("still-loading", "port-answering", -0.3),
    Row("still-loading", "requests-served", -0.3, "it already serves clients"),
    # compiling
    Row("compiling", "compiler-running", 0.6),
    Row("compiling", "stacks-compile", 0.5),
    Row("compiling", "stacks-odd-compile", 0.2),
    Row("compiling", "log-shm-broadcast & !all-idle", 0.1, "the warning also fires during long compiles"),
    Row("compiling", "all-idle", -0.3, "a real compile burns CPU"),
    # gpu-hang
    Row("gpu-hang", "gpu-spin", 0.5),
    Row("gpu-hang", "stacks-device-sync", 0.3),
    Row("gpu-hang", "stacks-odd-device-sync", 0.3),
    Row("gpu-hang", "gpu-loaded-idle", -0.3, "0 % means the GPUs wait for the host"),
    Row("gpu-hang", "gpu-computing", -0.2),
    # io-blocked
    Row("io-blocked", "d-state-faults", 0.7),
    Row("io-blocked", "wait-netfs-io", 0.6, "a network filesystem that does not answer"),
    Row("io-blocked", "d-state", 0.4),
    Row("io-blocked", "stacks-file-io", 0.15),
    Row("io-blocked", "stacks-netfs-rpc", 0.45, "the kernel waits for a network filesystem's server to answer"),
    Row("network-wait", "log-connect-refused", 0.4, "the peer's port does not listen: it is not up, or the address is wrong"),
    Row("shm-exhausted", "log-nccl-system-error", 0.3, "NCCL's failing system call is most often /dev/shm"),
    Row("busy-loop", "told-infinite-loop & !log-gpu-kernel-stuck", 0.4, "told: a loop that never ends (on the CPU)"),
    Row("deadlock", "told-lock-cycle", 0.45, "told: each thread waits for a lock the other holds"),
    Row("event-never-fires", "told-never-completes", 0.4, "told: the result is never delivered"),
    Row("fork-inherited-lock", "told-workers-hang", 0.3, "told: it hangs only in forked workers, which inherit the "
        "parent's locks"),
    # ninth pass (from the seen sets cases .. cases-8): three tools' output shapes
    Row("gpu-hang", "log-sanitizer-barrier", 0.55, "a barrier some threads never reach: the kernel never finishes"),
    Row("oom", "log-oom-report", 0.55, "the kernel printed its out-of-memory report"),
    Row("oom", "log-oom-report & no-oom-kill", 0.1, "the report's kill line was cut from the paste, not absent"),
    Row("network-wait", "log-strace-wait-forever", 0.4, "a socket wait with no timeout: the peer never answers"),
    Row("busy-loop", "log-strace-poll-error-event", 0.4, "a poll that returns at once with an error / hang-up event "
        "(epoll(7): reported on every call until closed): a loop that never sleeps"),
    Row("oom", "log-memory-limit-kill", 0.55, "the supervisor says the worker went over its memory limit"),
    Row("crashed-worker", "log-memory-limit-kill", -0.3, "the worker's death has a cause: its memory limit"),
    Row("collective-hang", "told-transport-knob", 0.4, "told: turning one NCCL transport off avoids the hang, so the "
        "collective hung in it"),
    Row("cpu-starved", "log-cpu-limited", 0.4, "less than a core, or throttled by its cgroup: runnable, waiting for CPU"),
    Row("healthy", "told-memory-overcounted", 0.45, "told: the memory figure counts shared pages twice; the job is fine"),
    Row("io-blocked", "told-memory-overcounted", -0.3, "the mapped pages are counted twice, not read slowly"),
    Row("oom", "told-memory-overcounted", -0.3, "the memory is not really used"),
    Row("gpu-hang", "told-kernel-swap", 0.35, "told: another implementation of the kernel avoids the hang"),
    Row("healthy", "told-output-only-stale", 0.45, "told: the work goes on, only its buffered output lags"),
    Row("cpu-starved", "told-oversubscribed", 0.45, "told: more threads than cores, each waits for a CPU"),
    Row("busy-loop", "told-oversubscribed", -0.2, "the CPU goes to too many threads, not to one loop"),
    # network-wait
    Row("network-wait", "stacks-rendezvous", 0.6),
    Row("network-wait", "wait-not-accepted", 0.6, "the listener never accepted: rendezvous or server never served it"),
    Row("network-wait", "wait-upstream & !wait-not-accepted", 0.45, "the other end is outside the tree"),
    Row("network-wait", "wait-rendezvous & !wait-not-accepted", 0.55, "the rendezvous address does not answer"),
    Row("network-wait", "wait-cycle", -0.3),
    Row("network-wait", "log-rendezvous", 0.3),
    Row("network-wait", "all-idle", 0.1),
    Row("network-wait", "log-silent-after-load", -0.2, "weights loaded: rendezvous was passed"),
    Row("network-wait", "gpu-loaded-idle", -0.1),
    Row("network-wait", "stacks-same-collective", -0.3),
    Row("network-wait", "requests-served", -0.2, "its clients are being answered"),
    # stopped
    Row("stopped", "stopped-process", 0.95),
    # busy-loop
    Row("busy-loop", "busy-process", 0.45),
    Row("busy-loop", "stacks-running", 0.25),
    Row("busy-loop", "stacks-running & runnable-starved", 0.35,
        "runnable at every look and running code, never waiting: a loop that wants all the CPU on a crowded machine"),
    Row("busy-loop", "log-silent", 0.1),
    # one rank looping while the others wait for it in a collective: the loop is why that rank is late, and the
    # job's cause is the wait (which names the rank); a busy loop alone would not stop the others
    Row("busy-loop", "stacks-odd-rank & stacks-odd-running", -0.25,
        "the other ranks wait for the looping one: the job waits on that rank"),
    Row("busy-loop", "compiler-running", -0.4, "the CPU goes to a compile"),
    Row("busy-loop", "stacks-compile", -0.3),
    Row("busy-loop", "log-progress", -0.3),
    Row("busy-loop", "log-steps-advancing", -0.3, "the log's step counter rises: the loop moves"),
    Row("busy-loop", "io-reading", -0.2),
    Row("busy-loop", "port-answering", -0.2),
    Row("busy-loop", "requests-served", -0.2, "the CPU goes to answering clients"),
    Row("busy-loop", "gpu-computing", -0.2),
    Row("busy-loop", "gpu-spin", -0.3),
    Row("busy-loop", "log-active", -0.15),
    # cpu-starved
    Row("cpu-starved", "runnable-starved", 0.6),
    Row("cpu-starved", "runnable-starved & stacks-running", -0.1, "its own code never waits: it is the one asking for CPU"),
    # healthy: only positive evidence counts (a reply to a request, or work seen advancing)
    Row("healthy", "port-answering", 0.45, "a client's request is answered"),
    Row("healthy", "port-accepting", 0.15),
    Row("healthy", "progress-seen", 0.35),
    Row("healthy", "requests-served", 0.25, "real clients were sent replies during the watch"),
    Row("healthy", "log-active", 0.15),
    Row("healthy", "port-not-answering & !requests-served", -0.6, "the kernel accepts, the server never replies"),
    # a probe's GET unanswered while the kernel counts replies to real clients: the port does not speak HTTP
    # (or /health is not its path), not a server that answers nobody
    Row("healthy", "port-not-answering & requests-served", -0.1, "triage's probe got no reply, its clients do"),
    Row("healthy", "all-idle & !port-answering", -0.2, "nothing advances"),
    Row("healthy", "all-alive", 0.1),
    Row("healthy", "gpu-computing", 0.1),
    Row("healthy", "worker-exited | log-worker-exited", -0.4),
    Row("healthy", "zombie", -0.4),
    Row("healthy", "target-gone", -1.0, "nothing of the target runs"),
    Row("healthy", "workers-recycled & progress-seen", 0.4, "the exits are a pool recycling its workers while the "
        "job progresses, not a failure"),
    Row("healthy", "worker-replaced | segfault-unseen | oom-kill-unseen", -0.15, "a worker died (and may have been "
        "replaced)"),
    Row("healthy", "stopped-process", -0.5),
    Row("healthy", "log-traceback", -0.3),
    Row("healthy", "log-nccl-timeout", -0.4),
    Row("healthy", "log-silent", -0.1),
    Row("healthy", "oom-kill", -0.4),
    Row("healthy", "stacks-lock-wait", -0.3),
    Row("healthy", "d-state-faults", -0.3),
    Row("healthy", "busy-process & !port-answering", -0.1),
    *SIGNAL_ROWS,
    *BREADTH_ROWS,
    *MECHANISM_ROWS,
    *MINED_ROWS,
    *WORD_ROWS,
    # rss-illusion (finding)
    Row("rss-illusion", "rss-illusion", 0.8),
)

RULE_OUTS: tuple[RuleOut, ...] = (
    # a log line that says a worker died (abruptly, of a segfault) is a death the process table no longer shows
    RuleOut("crashed-worker", "all-alive & !segfault & !log-worker-exited & !worker-replaced & !segfault-unseen"
            " & !oom-kill-unseen & !log-worker-abrupt & !log-segfault & !told-crash-others-wait", "not a crash"),
    RuleOut("oom", "memory-ample & !oom-kill & !cgroup-at-limit & !worker-sigkilled & !log-killed & !log-cuda-oom"
            " & !log-oom-words & !oom-kill-unseen",
            "not an OOM", cite=("rss-illusion",)),
    RuleOut("still-loading", "all-idle & log-silent & !io-reading & !log-progress", "not still loading: no CPU, no I/O, no log"),
    RuleOut("stopped", "none-stopped", "nothing is stopped"),
    RuleOut("healthy", "port-refused & !port-accepting", "not healthy: the port does not answer"),
    RuleOut("healthy", "target-gone", "not healthy: every process of the target has exited"),
    RuleOut("healthy", "port-not-answering & !port-answering & !requests-served", "not healthy: connections are accepted, requests never "
            "answered"),
    RuleOut("busy-loop", "all-idle", "no busy loop: nothing uses CPU"),
)

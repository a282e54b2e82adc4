"""The twenty-first pass (issue 15): readers and reading faults. A death, kill, OOM, crash or timeout told under a
negation states none (parse/negation.py); an strace excerpt read whole, one process at a time: a loop of calls that
never sleep, a wait left pending at its end (parse/strace_text.py). Each is tested on real text from a public thread
outside the corpus (its address in a comment, the text as posted) and on negatives; the seen misses they were written
from are checked as well."""

from __future__ import annotations

from pathlib import Path

from triage_tui.diagnose.corpus_score import read_case
from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.negation import negated_at
from triage_tui.parse.prose_lexicon import scan_told
from triage_tui.parse.signal_lexicon import scan_line
from triage_tui.parse.strace_text import findings

ROOT = Path(__file__).resolve().parents[2]
DEATHS = {"log-killed", "log-oom-words", "log-segfault", "told-word-oom", "told-phrase-oom", "told-phrase-crashed-worker"}


def _ids(text: str) -> set[str]:
    return {o.id for o in diagnose_text(text).diagnosis.observations}


def _causes(text: str) -> list[str]:
    d = diagnose_text(text).diagnosis
    return [h.id for h in d.hypotheses if h.kind == "cause" and h.status != "ruled out" and h.score > 0]


def _read(line: str) -> set[str]:
    return {s.id for s in scan_line(line)} | {s.id for s in scan_told(line)}


def _seen(directory: str, name: str) -> tuple[str, str]:
    case = read_case(ROOT / "tests" / "corpus" / directory / name)
    return case.evidence, case.cause


# --- negation


def test_a_kill_an_oom_or_a_segfault_told_under_a_negation_states_none() -> None:
    denied = [
        # https://github.com/moby/moby/issues/35463
        "Oh, actually the problem is exactly opposite. The hanged container wasn't oom killed, but had to be restarted "
        "manually.",
        # https://github.com/hakavlad/nohang/issues/142
        "This shouldn't have happened. This command does not cause an OOM, it terminates itself if no one interferes "
        "with it.",
        # https://github.com/e2guardian/e2guardian/issues/369
        "E2guardian (dev.) works without segfault now (without bannedsearchoveridelist).",
        # https://github.com/opencog/ros-behavior-scripting/issues/101
        "Have been running it for an hour and not getting any segfault, very cool, thanks Linas!",
    ]
    for line in denied:
        assert not _read(line) & DEATHS, line
    # the forms the pass names, each alone on its line
    for line in ("the worker is never killed", "the job was not killed", "it wasn't OOM-killed", "there was no OOM",
                 "it finished without being killed", "no segfault", "the request never timed out"):
        assert not _read(line) & (DEATHS | {"log-timeout"}), line


def test_a_real_statement_beside_a_negation_still_counts() -> None:
    assert "log-killed" in _read("Killed")
    assert {"log-killed", "log-oom-words"} <= _read("the process was killed by the OOM killer")
    # the negation is of another verb: the kill is stated
    assert "log-killed" in _read("the server was not responding, so it was killed")
    assert "log-killed" in _read("it did not respond and was killed")
    assert "log-killed" in _read("I don't know why it was killed")
    # one match denied, another stated
    assert "log-killed" in _read("rank 0 is never killed but rank 2 was killed")
    # exit code 137 states a SIGKILL; "(not a segfault)" denies only the segfault
    got = _read("exit code 137 (not a segfault)")
    assert "log-killed" in got and "log-segfault" not in got
    assert negated_at("was never ", len("was never ")) and not negated_at("was then ", len("was then "))


def test_the_seen_negation_is_no_sigkill() -> None:
    # cases-20 compute-runtime-962: a hung GPU kernel that "is never killed while the submitting process is alive"
    evidence, _ = _seen("cases-20", "compute-runtime-962-clfinish-blocks-hung-kernel-never-reset.md")
    d = diagnose_text(evidence).diagnosis
    assert "log-killed" not in {o.id for o in d.observations}
    oom = next(h for h in d.hypotheses if h.id == "oom")
    assert not any(e.observation == "log-killed" for e in oom.evidence)


# --- strace excerpts

# https://github.com/sindresorhus/pure/issues/502 (zsh at 99 % CPU; strace of the shell, as posted, cut)
ZSH_LOOP = """```
rt_sigprocmask(SIG_BLOCK, [CHLD], [CHLD WINCH], 8) = 0
rt_sigprocmask(SIG_UNBLOCK, [CHLD], [CHLD WINCH], 8) = 0
rt_sigprocmask(SIG_BLOCK, [CHLD], [WINCH], 8) = 0
rt_sigprocmask(SIG_BLOCK, [CHLD], [CHLD WINCH], 8) = 0
rt_sigprocmask(SIG_UNBLOCK, [CHLD], [CHLD WINCH], 8) = 0
rt_sigprocmask(SIG_BLOCK, [CHLD], [WINCH], 8) = 0
rt_sigprocmask(SIG_BLOCK, [CHLD], [CHLD WINCH], 8) = 0
rt_sigprocmask(SIG_UNBLOCK, [CHLD], [CHLD WINCH], 8) = 0
munmap(0x7fc06a8dd000, 16384)           = 0
rt_sigprocmask(SIG_BLOCK, [CHLD], [WINCH], 8) = 0
rt_sigprocmask(SIG_BLOCK, [CHLD], [CHLD WINCH], 8) = 0
rt_sigprocmask(SIG_UNBLOCK, [CHLD], [CHLD WINCH], 8) = 0
munmap(0x7fc06a8e1000, 16384)           = 0
```
"""


def test_an_strace_of_calls_that_never_sleep_and_repeat_is_a_spin() -> None:
    found = findings(ZSH_LOOP)
    assert [f.kind for f in found] == ["spin"] and found[0].names == ("rt_sigprocmask", "munmap")
    assert "log-strace-spin" in _ids(ZSH_LOOP) and _causes(ZSH_LOOP)[:1] == ["busy-loop"]
    # the seen miss it was written from: bash's `wait` loop once its children are gone (cases-20 pbench-871)
    evidence, cause = _seen("cases-20", "pbench-871-pprof-tool-script-eats-a-core.md")
    assert _causes(evidence)[:1] == [cause] == ["busy-loop"]
    # strace -f's prefix: the same loop of one thread
    threaded = "".join(f"[pid  4711] {ln}\n" for ln in ZSH_LOOP.splitlines() if ln.startswith(("rt_", "mun")))
    assert [(f.kind, f.pid) for f in findings(threaded)] == [("spin", "4711")]


def test_an_strace_that_sleeps_waits_or_does_io_is_no_spin() -> None:
    # https://github.com/haproxy/haproxy/issues/2129 (strace -tt): an epoll_wait with a timeout of 103 ms, and the
    # times show the calls 0.1 s apart
    slept = """11:11:18.717881 clock_gettime(CLOCK_THREAD_CPUTIME_ID, {tv_sec=10407, tv_nsec=966814448}) = 0
11:11:18.718191 write(21, "c", 1)       = 1
11:11:18.718301 write(48, "c", 1)       = 1
11:11:18.718412 clock_gettime(CLOCK_THREAD_CPUTIME_ID, {tv_sec=10407, tv_nsec=966901616}) = 0
11:11:18.718510 epoll_wait(4, [], 200, 103) = 0
11:11:18.821745 clock_gettime(CLOCK_THREAD_CPUTIME_ID, {tv_sec=10407, tv_nsec=966952607}) = 0
11:11:18.821888 write(21, "c", 1)       = 1
11:11:18.821981 write(48, "c", 1)       = 1
"""
    assert not [f for f in findings(slept) if f.kind == "spin"]
    # https://github.com/containerd/containerd/issues/5113: futex wakes between reads that return data (I/O, not a
    # loop of calls that return at once)
    reads = """futex(0xbac838, FUTEX_WAKE_PRIVATE, 1)  = 1
futex(0xbac738, FUTEX_WAKE_PRIVATE, 1)  = 1
--- SIGURG {si_signo=SIGURG, si_code=SI_TKILL, si_pid=7899, si_uid=0} ---
rt_sigreturn({mask=[]})                 = 824633894912
futex(0xc000080148, FUTEX_WAKE_PRIVATE, 1) = 1
read(5, "73433 558345 0:273 / /host/run/k"..., 4096) = 4072
futex(0xbac838, FUTEX_WAKE_PRIVATE, 1)  = 1
futex(0xbac738, FUTEX_WAKE_PRIVATE, 1)  = 1
read(5, "73385 558297 0:273 / /host/run/k"..., 4096) = 4072
"""
    assert not findings(reads)
    # cases-15 kratos-6020 (seen): a futex wait among wakes, five calls: no spin read (it is cpu-starved)
    evidence, _ = _seen("cases-15", "kratos-6020-two-instances-stuck-openmp-oversubscription.md")
    assert "log-strace-spin" not in _ids(evidence)
    # a few distinct calls once each are no loop (cases-9 dokku-4676, seen: mmap, write, rt_sigreturn)
    evidence, _ = _seen("cases-9", "dokku-4676-gunicorn-workers-sigkilled-by-oom-killer.md")
    assert not {"log-strace-spin", "log-strace-pending-wait"} & _ids(evidence)


def test_an_strace_that_ends_in_a_wait_that_never_returned_names_the_wait() -> None:
    # https://github.com/systemd/systemd/pull/24181: systemd-repart stuck on flock (the excerpt's end, as posted)
    repart = """```
lseek(3, 512, SEEK_SET)                 = 512
read(3, "EFI PART\\0\\0\\1\\0\\\\\\0\\0\\0\\377 \\210\\234\\0\\0\\0\\0\\1\\0\\0\\0\\0\\0\\0\\0"..., 512) = 512
lseek(3, 1024, SEEK_SET)                = 1024
newfstatat(3, "", {st_mode=S_IFBLK|0660, st_rdev=makedev(0xfd, 0), ...}, AT_EMPTY_PATH) = 0
flock(3, LOCK_EX
```
"""
    found = findings(repart)
    assert [(f.kind, f.what) for f in found] == [("pending", "file-lock")]
    assert "log-strace-lock-wait" in _ids(repart) and _causes(repart)[:1] == ["stale-file-lock"]
    # https://github.com/juju/mutex/issues/11: a process hung on a futex (shown, where it waits, not why)
    futex = "# strace -p 4394\nstrace: Process 4394 attached\nfutex(0xc000084550, FUTEX_WAIT_PRIVATE, 0, NULL\n"
    assert [(f.kind, f.what) for f in findings(futex)] == [("pending", "futex")]
    assert "log-strace-pending-wait" in _ids(futex) and "log-strace-spin" not in _ids(futex)
    # a lock asked not to block, and a call that returned, are no pending wait
    assert not findings("flock(3, LOCK_EX|LOCK_NB) = -1 EWOULDBLOCK (Resource temporarily unavailable)\n")
    assert not findings("futex(0x55a27e5a25a0, FUTEX_WAIT_PRIVATE, 0, NULL) = 0\n")
    # a sentence that names a call is no strace
    assert not findings("The hang is in read(2) on the pipe, I think.\nIt never returns.\n")

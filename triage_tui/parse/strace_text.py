"""An strace excerpt read as a whole, one process (or thread) at a time: a loop of calls that never sleep, or a wait
left pending at the end (the twenty-first pass, issue 15).

The signal lexicon reads strace one line at a time (a poll with no timeout, a socket read left `<unfinished ...>`, a
poll that returns at once with an error event). What a line alone cannot show is the shape of the whole excerpt: a
process whose every call returns at once and repeats (`rt_sigprocmask(SIG_BLOCK, [CHLD], [], 8) = 0` and its
SIG_SETMASK pair, over and over: bash's `wait` loop when the children it waits for are gone, cases-20 pbench-871;
zsh's in sindresorhus/pure#502) spins on a core: between those calls it runs user code that never waits. And a process
whose last call is a wait that never returned (strace prints a call's input arguments as it enters it and the rest
when it returns, strace(1)) waits there: on a futex (a lock or a condition), on a file lock (flock(2) LOCK_EX without
LOCK_NB, fcntl(2) F_SETLKW), on a child (wait4), on a read.

strace's line (strace(1)): an optional `[pid N] ` (-f) or `N ` (-ff -o), an optional time (-t, -tt, -ttt, -r), the
call `name(args) = result`, with -T `<seconds>` at the end; `name(args <unfinished ...>` and later `<... name resumed>
...) = result` when another thread's line comes between; `--- SIGCHLD {...} ---` for a signal, `+++ exited with 0 +++`
at the end. An excerpt is a run of such lines (`...` / `[...]` cuts and `strace: Process N attached` inside it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

_PREFIX = (r"^\s{0,4}(?:\[pid\s{0,8}(?P<pid>\d{1,10})\] |(?P<pid2>\d{1,10}) {1,2})?"
           r"(?:(?P<clock>\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?) |(?P<epoch>\d{9,10}\.\d{1,6}) |\s{0,8}(?P<rel>\d{1,6}\.\d{6}) )?")
# a call that returned (greedy args: the last `) = ` is the call's own), one left unfinished, one cut before its result
_DONE = re.compile(_PREFIX + r"(?P<name>[a-z_][a-z0-9_]{0,39})\((?P<args>.*)\)\s{0,40}= (?P<ret>-?\d{1,20}|0x[0-9a-f]{1,16}|\?)"
                   r"(?P<rest>.*)$")
_UNFINISHED = re.compile(_PREFIX + r"(?P<name>[a-z_][a-z0-9_]{0,39})\((?P<args>.*?)\s?<unfinished \.\.\.>$")
_RESUMED = re.compile(_PREFIX + r"<\.\.\. (?P<name>[a-z_][a-z0-9_]{0,39}) resumed>(?P<args>.*?)\)?\s{0,40}= "
                      r"(?P<ret>-?\d{1,20}|0x[0-9a-f]{1,16}|\?)(?P<rest>.*)$")
# a call cut before its result (the paste ends inside it, or the poster cut it: `[...]`, `...`, stripped first)
_CUT = re.compile(_PREFIX + r"(?P<name>[a-z_][a-z0-9_]{0,39})\((?P<args>[^()\n]{0,600}(?:\([^()\n]{0,80}\)[^()\n]{0,200}){0,4})$")
_CUT_MARK = re.compile(r"\s{0,4}(?:\[\.\.\.\]|\.\.\.|…)$")
_TOOK = re.compile(r"\s<(\d{1,9}\.\d{1,9})>$")  # -T: the time spent in the call
_INSIDE = re.compile(_PREFIX + r"(?:--- SIG[A-Z0-9]{2,10}\b|\+\+\+ (?:exited|killed)\b)")
_SKIP = re.compile(r"^\s{0,8}(?:\.\.\.|\[\.\.\.\]|…|strace: Process \d{1,10} attached.{0,40}|```\w{0,10})\s*$")

# calls that return at once by what they are: signal masks and handlers, clocks, ids, memory mappings, a yield, a
# descriptor's metadata; a loop of these alone runs user code between them and never sleeps
NEVER_WAIT = frozenset({
    "rt_sigprocmask", "sigprocmask", "rt_sigaction", "sigaction", "rt_sigreturn", "sigreturn", "sched_yield",
    "clock_gettime", "gettimeofday", "time", "getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid",
    "getpgrp", "getrusage", "times", "sysinfo", "mmap", "munmap", "mprotect", "madvise", "brk", "lseek", "_llseek",
    "fstat", "newfstatat", "stat", "lstat", "statx", "getrandom", "kill", "tgkill", "fcntl", "dup", "dup2", "dup3",
    "close", "getcwd", "access", "faccessat", "prctl", "timerfd_settime", "clock_getres", "sched_getaffinity",
})
# calls that may sleep until something happens: a loop that makes one (and it does not return at once, below) waits
WAITS = frozenset({
    "futex", "read", "readv", "pread64", "recvfrom", "recvmsg", "recv", "recvmmsg", "accept", "accept4", "connect",
    "poll", "ppoll", "select", "pselect6", "_newselect", "epoll_wait", "epoll_pwait", "epoll_pwait2", "nanosleep",
    "clock_nanosleep", "wait4", "waitid", "waitpid", "pause", "rt_sigsuspend", "sigsuspend", "rt_sigtimedwait",
    "msgrcv", "semop", "semtimedop", "flock", "fcntl", "io_getevents", "io_uring_enter", "restart_syscall", "sendto", "write",
})
# the least run of returned calls that reads as a loop, and how often each distinct call must come back on average
LOOP_CALLS = 6
REPEATS = 3
# a call that took this long (-T), or calls this far apart (-t / -tt / -ttt / -r), slept: no spin
SLEPT_S = 0.01


@dataclass(frozen=True)
class Call:
    line_no: int
    pid: str  # "" where strace printed none (one process, or -f's first)
    name: str
    args: str
    ret: str  # "" while pending (unfinished, or cut at the end of the paste)
    rest: str = ""
    at: Optional[float] = None  # seconds (the clock, -ttt) or the delta (-r, rel=True)
    rel: bool = False
    took: Optional[float] = None  # -T


@dataclass(frozen=True)
class StraceFinding:
    kind: str  # "spin" | "pending"
    pid: str
    line_no: int  # the first call of the loop, or the pending call
    calls: int  # the loop's returned calls (1 for a pending call)
    names: Tuple[str, ...]  # the distinct calls of the loop, or the pending call's name
    what: str  # for a pending wait: "futex", "file-lock", "child", "read", "other"
    line: str


def _time(m: "re.Match[str]") -> Tuple[Optional[float], bool]:
    if m.group("clock"):
        h, mi, s = m.group("clock").split(":")
        return int(h) * 3600 + int(mi) * 60 + float(s), False
    if m.group("epoch"):
        return float(m.group("epoch")), False
    if m.group("rel"):
        return float(m.group("rel")), True
    return None, False


def _call(no: int, line: str) -> Optional[Call]:
    for rx, pending in ((_RESUMED, False), (_DONE, False), (_UNFINISHED, True), (_CUT, True)):
        m = rx.match(_CUT_MARK.sub("", line) if rx is _CUT else line)
        if m:
            at, rel = _time(m)
            rest = "" if pending else m.group("rest").rstrip()
            took = _TOOK.search(rest)
            return Call(no, m.group("pid") or m.group("pid2") or "", m.group("name"), m.group("args"),
                        "" if pending else m.group("ret"), rest, at, rel, float(took.group(1)) if took else None)
    return None


def excerpts(text: str) -> List[List[Tuple[int, str, Optional[Call]]]]:
    """The runs of strace lines in a paste: (line number, line, call or None for a signal / exit line)."""
    runs: List[List[Tuple[int, str, Optional[Call]]]] = []
    run: List[Tuple[int, str, Optional[Call]]] = []
    for no, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip()
        if "(" not in line and "---" not in line and "+++" not in line:
            if _SKIP.match(line):
                continue
            if run:
                runs.append(run)
            run = []
            continue
        call = _call(no, line) if "(" in line else None
        if call is not None or _INSIDE.match(line):
            run.append((no, line, call))
        elif not _SKIP.match(line):
            if run:
                runs.append(run)
            run = []
    if run:
        runs.append(run)
    return [r for r in runs if any(c is not None for _, _, c in r)]


def _returns_at_once(c: Call) -> bool:
    """A call that did not sleep: one of NEVER_WAIT, a wait asked not to block (a zero timeout, WNOHANG, LOCK_NB,
    FUTEX_WAKE) or one that failed at once with EAGAIN; -T's time, where printed, decides."""
    if c.took is not None and c.took >= SLEPT_S:
        return False
    if c.name in NEVER_WAIT:
        return c.name != "fcntl" or "SETLKW" not in c.args
    if c.name == "futex":
        return "FUTEX_WAKE" in c.args or "FUTEX_REQUEUE" in c.args or "FUTEX_CMP_REQUEUE" in c.args
    if c.name in ("poll", "epoll_wait", "epoll_pwait", "ppoll"):
        return bool(re.search(r", 0(?:, NULL|, \[\], 8)?$|, \{tv_sec=0, tv_nsec=0\}", c.args))
    if c.name in ("select", "pselect6", "_newselect"):
        return "{tv_sec=0, tv_usec=0}" in c.args or "{tv_sec=0, tv_nsec=0}" in c.args
    if c.name in ("wait4", "waitid", "waitpid"):
        return "WNOHANG" in c.args
    if c.name in ("read", "readv", "recvfrom", "recvmsg", "recv", "accept", "accept4"):
        return "EAGAIN" in c.rest or "EWOULDBLOCK" in c.rest
    return False


def _slept_between(calls: List[Call]) -> bool:
    """-t / -tt / -ttt / -r times that show the loop's calls far apart (it sleeps between them)."""
    times = [c.at for c in calls if c.at is not None]
    if len(times) < len(calls) or len(times) < 2:
        return False
    if calls[0].rel:
        return sum(times[1:]) / (len(times) - 1) >= SLEPT_S
    return (times[-1] - times[0]) / (len(times) - 1) >= SLEPT_S


def _pending_kind(c: Call) -> str:
    if c.name == "futex" and "FUTEX_WAIT" in c.args:
        return "futex"
    if c.name == "flock" and "LOCK_NB" not in c.args or c.name == "fcntl" and "SETLKW" in c.args:
        return "file-lock"
    if c.name in ("wait4", "waitid", "waitpid") and "WNOHANG" not in c.args:
        return "child"
    if c.name in ("read", "readv", "pread64"):
        return "read"
    return "other"


def findings(text: str) -> List[StraceFinding]:
    """Each process of each strace excerpt whose calls form a loop that never sleeps, or whose last call is a wait
    that never returned (pending at the end of the excerpt, or `= ? ERESTART…`: interrupted as strace detached)."""
    out: List[StraceFinding] = []
    for run in excerpts(text):
        by_pid: Dict[str, List[Call]] = {}
        lines: Dict[int, str] = {}
        for no, line, call in run:
            lines[no] = line
            if call is not None:
                by_pid.setdefault(call.pid, []).append(call)
        for pid, calls in by_pid.items():
            done = [c for c in calls if c.ret]
            last = calls[-1]
            names = tuple(dict.fromkeys(c.name for c in done))
            if (last.ret and len(done) >= LOOP_CALLS and len(names) * REPEATS <= len(done)
                    and all(_returns_at_once(c) for c in done) and not _slept_between(done)):
                out.append(StraceFinding("spin", pid, done[0].line_no, len(done), names, "", lines[done[0].line_no]))
                continue
            interrupted = last.ret == "?" and "ERESTART" in last.rest
            if (not last.ret or interrupted) and last.name in WAITS:
                out.append(StraceFinding("pending", pid, last.line_no, 1, (last.name,), _pending_kind(last),
                                         lines[last.line_no]))
    return out

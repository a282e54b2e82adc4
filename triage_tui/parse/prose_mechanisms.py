"""Prose that names a mechanism: the fixed technical terms threads use for what held the process, as data.

Many threads print no tool output and still name the mechanism in a term whose meaning is fixed outside any corpus:
Windows' console "QuickEdit mode" (a click selects text and the console stops taking output: every program writing
to it blocks until a key ends the selection), a "zombie" / "<defunct>" process (it exited and its parent never
reaped it), "CFS throttling" (the cgroup's CPU quota is spent: runnable threads wait for the next period), memory
"thrashing", "fork() in a multithreaded process", uWSGI's "lazy-apps" and gunicorn's "preload_app" (the app is loaded
before the workers are forked, or after), "holding the GIL" while blocking, multiprocessing's "leaked semaphore
objects" (resource_tracker's warning that a process died without cleaning up), an "uncorrectable ECC error", Windows'
"TDR", the cgroup "freezer", a "stale pidfile", a wait in "flock", a service that "never became available", a
background job stopped by its terminal ("SIGTTIN").

Each row: (observation id, the term, needles (words one of which every match holds), pattern, source). The id is
an existing one where the term means what that id means and its weight is a told-in-words weight (told-word-cpu-limit,
told-word-oom); else a new told-* id, weighed in diagnose/mechanism_rows.py, modestly (a named mechanism is someone's
claim, weaker than the output of a tool). The source is the term's documentation or a public thread that explains the
mechanism, never a corpus case; rows and weights were chosen from those meanings before any seen case was scored with
them (the twenty-first pass).

A named mechanism is often asked about or supposed ("could it be QuickEdit?", "maybe a zombie?", "if the GIL is
held ..."), or ruled out ("it is not QuickEdit"): these rows' patterns skip a match whose sentence asks, supposes or
denies (MechanismPattern below), on a line read alone and in a paragraph read as one line. Read with the prose
lexicon's machinery (prose_lexicon.PROSE); patterns are linear: literals, alternations, bounded gaps.
"""

from __future__ import annotations

import re
import sys
from typing import Optional, Tuple, cast

from .lazy_pattern import LazyPattern
from .signal_lexicon import Signal

Row = Tuple[str, str, Tuple[str, ...], str, str]  # (id, the term, needles, pattern, source)

# a sentence that asks, supposes or denies: a question mark ends it, or a hedge or a denial is in it
_SENTENCE_END = re.compile(r"[?!]|\.(?:\s|$)|\n")
_SENTENCE_START = re.compile(r"[?!]\s|\.\s|\n")
_DOUBTS = re.compile(r"^\s{0,4}(?:if|whether|suppose)\b|\b(?:could|might|may|can) (?:it|this|that|there) (?:be|have)\b"
                     r"|\b(?:maybe|perhaps|possibly|probably not|could be wrong|i think|i believe|i wonder"
                     r"|wonder(?:ing)? (?:if|whether)|not sure"
                     r"|is it (?:possible|because|related)|are there any|do you think|suspect\w{0,3}|guess\w{0,2}"
                     r"|ruled? out|rules? out|not the (?:cause|issue|problem|culprit|reason)|has nothing to do with"
                     r"|unrelated to|isn'?t related|is not related|not related to|not caused by)\b", re.I)
# a denial just before the term: "no zombie processes", "not a zombie", "without any ECC error"
_DENIED_BEFORE = re.compile(r"\b(?:no|not|never|without|isn'?t|aren'?t|wasn'?t|weren'?t|zero|0)\s{1,2}(?:a |an |the "
                            r"|any )?"
                            r"$", re.I)


def _doubted(text: str, start: int, end: int) -> bool:
    """Whether the sentence holding text[start:end] asks, supposes or denies."""
    before = text[max(0, start - 400):start]
    cut = [m.end() for m in _SENTENCE_START.finditer(before)]
    head = before[cut[-1]:] if cut else before
    m = _SENTENCE_END.search(text, end, min(len(text), end + 400))
    tail = text[end:m.start() if m else min(len(text), end + 400)]
    if m is not None and m.group(0) == "?":
        return True
    return bool(_DOUBTS.search(head + text[start:end] + tail) or _DENIED_BEFORE.search(head[-24:]))


_RETRIES = 16


class MechanismPattern(LazyPattern):
    """A lazy pattern whose `search` answers the first match whose sentence states the mechanism (not a question,
    a supposition or a denial). `needles`: words one of which every match holds (lower case), looked for first, so
    the many lines that hold none cost a substring test, not a search."""

    __slots__ = ("_needles",)

    def __init__(self, source: str, flags: int, needles: Tuple[str, ...]) -> None:
        super().__init__(source, flags)
        self._needles = needles

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Optional[re.Match[str]]:
        low = string.lower()
        if not any(n in low for n in self._needles):
            return None
        # a doubted match is tried again one character on: a match that starts in the sentence before (a gap runs
        # over a full stop) must not hide the stated one it overlaps; bounded, so a long paste costs a few searches
        for _ in range(_RETRIES):
            m = self.compiled.search(string, pos, endpos)
            if m is None or not _doubted(string, m.start(), m.end()):
                return m
            pos = m.start() + 1
        return None


_WAIT = r"(?:blocks?|blocked|blocking|waits?|waiting|hangs?|hanging|hung|stuck|freez(?:es|ing)|froze|never returns)"

ROWS: tuple[Row, ...] = (
    # --- Windows' console QuickEdit mode (SetConsoleMode's ENABLE_QUICK_EDIT_MODE): a click in the window starts a
    # selection, and while it lasts the console takes no output, so a program blocks on its next write until a key
    # ends it. Not stopped by a signal, but held the same way: nothing runs past that write until someone acts
    ("told-quickedit", "Windows console QuickEdit mode", ("quick",),
     # not WordPress' "Quick Edit" of a post ("when I click Quick Edit, then Update"): a console, or what it does to
     # output
     r"\bquick[- ]?edit(?: mode)?\b[^\n]{0,80}?\b(?:console|cmd|command prompt|powershell|conhost|terminal|selection"
     r"|pauses?|paused|freez\w{1,3}|froze|blocks?|blocked|keypress|key press|press(?:ing)? (?:a key|enter))\b"
     r"|\b(?:console|cmd|command prompt|powershell|conhost|windows terminal)\b[^\n]{0,80}?\bquick[- ]?edit\b"
     r"|\bquick[- ]?edit mode\b|\bENABLE_QUICK_EDIT_MODE\b",
     "https://learn.microsoft.com/windows/console/setconsolemode (ENABLE_QUICK_EDIT_MODE); "
     "https://github.com/ja2-stracciatella/ja2-stracciatella/pull/1166 (quick edit mode freezes the STDIO and pauses "
     "program execution when the user clicks on the console); https://github.com/tModLoader/tModLoader/pull/2607"),
    # --- a zombie: wait(2): "A child that terminates, but has not been waited for becomes a zombie"; ps prints it as
    # state Z and "<defunct>". A worker that exited while its parent (and the job) waits on as if it were there
    ("told-zombie", "a zombie (defunct) process", ("zombie", "defunct"),
     r"<defunct>|\bzombie(?:d|s)? (?:process(?:es)?|child(?:ren)?|workers?|state|subprocess(?:es)?|procs?)\b"
     r"|\b(?:became|become|becomes|becoming|turns? into|turned into|left as|leaves?|leaving|is now|are now|remains?) "
     r"(?:a |as )?zombies?\b|\bdefunct (?:process(?:es)?|child(?:ren)?|workers?)\b",
     "https://man7.org/linux/man-pages/man2/wait.2.html (a child that terminates but is not waited for becomes a "
     "zombie); https://github.com/krallin/tini/issues/123 (defunct: terminated, not yet reaped by its parent)"),
    # --- CFS bandwidth control (the kernel's sched-bwc): a cgroup that spent its quota in a period is throttled, not
    # scheduled until the next period; the same CPU limit the breadth row told-word-cpu-limit reads, named by its
    # mechanism
    ("told-word-cpu-limit", "CFS throttling (a cgroup's CPU quota spent)", ("cfs", "nr_periods"),
     r"\bCFS\b[^\n]{0,30}?\b(?:throttl\w{1,5}|quotas?|bandwidth)\b|\bthrottl\w{1,5}\b[^\n]{0,20}?\bby (?:the )?CFS\b"
     r"|\bcpu\.cfs_(?:quota|period)_us\b|\bnr_periods\b",
     "https://docs.kernel.org/scheduler/sched-bwc.html; https://github.com/kubernetes/kubernetes/issues/67577"),
    # --- thrashing: memory so short that pages are evicted and faulted back in continually (swap or page cache):
    # the machine crawls toward the OOM killer; the same memory pressure told-word-oom's "swapping" reads
    ("told-word-oom", "memory thrashing", ("thrash",),
     r"\b(?:memory|swap|swapping|paging|RAM)\b[^\n]{0,40}?\bthrash(?:es|ed|ing)?\b|\bthrash(?:es|ed|ing)?\b[^\n]{0,40}?"
     r"\b(?:memory|swap|swapping|paging|RAM)\b|\b(?:system|machine|box|server|host|node|it) (?:is |was |starts? "
     r"|started "
     r"|began |keeps? )thrashing\b",
     "https://github.com/tobixen/thrash-protect/issues/2; https://github.com/hakavlad/nohang/issues/133"),
    # --- fork(2) in a multithreaded process (POSIX: the child has one thread, a replica of the caller, "possibly
    # including the states of mutexes"): a mutex another thread held is locked in the child for ever
    ("told-fork-threads", "fork() in a multithreaded process", ("fork",),
     r"\bfork(?:s|ed|ing)?\b(?:\(\))?[^\n]{0,30}?\b(?:a |the |from a |in a |of a )?multi-?threaded\b"
     r"|\bmulti-?threaded\b[^\n]{0,30}?\b(?:process|program|parent|application|app)\b[^\n]{0,30}?\bfork(?:s|ed|ing)?\b"
     r"(?! of\b)|\bfork(?:s|ed|ing)?\b(?:\(\))?[^\n]{0,20}?\bwhile (?:other |another |a )?(?:background )?threads?\b",
     "https://pubs.opengroup.org/onlinepubs/9699919799/functions/fork.html; "
     "https://github.com/greenbone/openvas-scanner/pull/491; https://github.com/Kistler-Group/sdbus-cpp/issues/296"),
    # --- a prefork server's load before fork: uWSGI forks its workers after loading the app unless lazy-apps is set
    # ("Preforking VS lazy-apps VS lazy"), gunicorn's preload_app "load[s] application code before the worker processes
    # are forked": the workers inherit the app's threads' state (a lock, a connection) without the threads
    ("told-fork-preload", "a prefork server's app loaded before fork (uWSGI lazy-apps, gunicorn preload_app)",
     ("lazy", "preload", "prefork"),
     r"\blazy[-_ ]apps\b|\bpreload_app\b|\bgunicorn\b[^\n]{0,200}?--preload\b|\bOperational MODE: preforking\b"
     r"|\bpreforking\b|\bprefork(?:ed)? (?:workers?|mode|model|pool|server|processes)\b",
     "https://uwsgi-docs.readthedocs.io/en/latest/articles/TheArtOfGracefulReloading.html (preforking vs lazy-apps); "
     "https://docs.gunicorn.org/en/stable/settings.html#preload-app; "
     "https://github.com/rackerlabs/understack/pull/1918"),
    # --- the GIL held while blocking (the C API: release it around blocking calls): a thread that blocks on a lock
    # or a wait while holding the GIL stops every other Python thread, the one that would release it included
    ("told-gil-held", "the GIL held while blocking", ("gil",),
     r"\b(?:hold(?:s|ing)?|held|keeps?|keeping|grabs?|grabbed|acquires?|acquired|acquiring) (?:the )?GIL\b[^\n]{0,60}?"
     r"\b(?:while|when|and|then) (?:it |still )?(?:waits?|waiting|block\w{0,3}|sleep\w{0,3}|calling|acquir\w{1,4}"
     r"|lock\w{0,3})"
     r"|\b(?:block\w{0,3}|wait\w{0,3}|sleep\w{0,3}|hang\w{0,3})\b[^\n]{0,20}?\b(?:while|when) (?:still )?(?:holding"
     r"|keeping"
     r"|having) the GIL\b|\bwithout (?:releasing|dropping) the GIL\b|\bGIL[- ]deadlock\w{0,3}"
     r"|\bdeadlock\w{0,3}\b[^\n]{0,40}?\bGIL\b"
     r"|\bGIL\b[^\n]{0,40}?\bdeadlock\w{0,3}\b|\b(?:waits?|waited|waiting|blocked|stuck) (?:for|on|to acquire"
     r"|acquiring) the GIL\b"
     r"|\bGIL (?:is |was )?(?:still )?held\b",
     "https://docs.python.org/3/c-api/init.html (releasing the GIL from extension code); "
     "https://github.com/rapidsai/rapidsmpf/pull/188; https://github.com/earth-mover/icechunk/pull/563"),
    # --- multiprocessing's resource tracker: "if a process was killed by a signal there may be some 'leaked'
    # resources", which it unlinks and warns about at shutdown ("There appear to be N leaked semaphore objects")
    ("told-leaked-semaphore", "leaked semaphore objects (multiprocessing's resource_tracker)", ("leaked",),
     r"\bleaked (?:semaphore|shared_memory|folder) objects?\b|\bresource_tracker: There appear to be \d{1,6} leaked\b",
     "https://docs.python.org/3/library/multiprocessing.html (the resource tracker: a process killed by a signal "
     "leaks its named resources); https://github.com/amazon-science/mm-cot/issues/25; "
     "https://github.com/khoj-ai/khoj/issues/385"),
    # --- an uncorrectable (double-bit) ECC error in a GPU's memory: NVIDIA's Xid 48 (DBE), CUDA's
    # CUDA_ERROR_ECC_UNCORRECTABLE; the board needs a reset before it computes again
    ("told-gpu-ecc", "an uncorrectable ECC error on a GPU", ("ecc", "dbe"),
     r"\b(?:uncorrectable|uncorrected|double[- ]bit|DBE|multi[- ]bit)\b[^\n]{0,12}?\bECC\b|\bECC\b[^\n]{0,12}?"
     r"\b(?:uncorrectable|uncorrected|double[- ]bit)\b|\bECC_UNCORRECTABLE\b"
     r"|\bECC errors?\b[^\n]{0,30}?\b(?:detected|occurred|encountered|reported|on (?:the |this |a |one )?GPU)\b",
     "https://docs.nvidia.com/deploy/xid-errors/ (Xid 48: double-bit ECC error); "
     "https://github.com/vllm-project/vllm/issues/5222; https://github.com/NVIDIA/k8s-device-plugin/issues/243"),
    # --- Windows' Timeout Detection and Recovery named by its acronym: the display driver's watchdog resets a GPU whose
    # work ran past TdrDelay (the tool-output rows read its event text and registry keys)
    ("told-gpu-tdr", "TDR (Windows' GPU timeout detection and recovery)", ("tdr",),
     r"(?-i:\bTDR\b)[^\n]{0,40}?\b(?:timeouts?|delay|watchdog|resets?|kick\w{0,3}|trigger\w{0,3}|crash\w{0,2}"
     r"|recover\w{0,3}"
     r"|GPU|driver)\b|\b(?:GPU|driver|windows|watchdog|timeout)\b[^\n]{0,40}?(?-i:\bTDR\b)",
     "https://learn.microsoft.com/windows-hardware/drivers/display/timeout-detection-and-recovery; "
     "https://github.com/hybridizer-io/hybridizer-basic-samples/issues/41"),
    # --- the cgroup freezer named (cgroup v1's freezer subsystem, v2's cgroup.freeze): every task in the cgroup is
    # held until it is thawed
    ("told-cgroup-freezer", "the cgroup freezer", ("freez", "thaw"),
     r"\bcgroups?[- ]freezer\b|\bfreezer (?:cgroup|subsystem|controller|state)\b|\bfrozen by the (?:cgroup )?freezer\b"
     r"|\b(?:thaw(?:ed)?|unfreez\w{1,3}) (?:the )?(?:cgroup|container|pod)\b",
     "https://docs.kernel.org/admin-guide/cgroup-v1/freezer-subsystem.html; https://github.com/moby/moby/pull/9962"),
    # --- a stale pidfile or lock file: a run killed before it removed its pid / lock file leaves it, and the next one
    # refuses to start or waits on it (a pidfile is the lock Julia's precompile and many daemons take)
    ("told-stale-pidfile", "a stale pidfile or lock file left by a killed run", ("pid", "lock"),
     r"\bstale (?:pid ?file|\.pid\b|lock ?file|lockfile|lock)s?\b"
     r"|\b(?:pid ?file|\.pid file|lockfile|lock file)\b[^\n]{0,60}?\b(?:left (?:behind|over)|still there"
     r"|not (?:removed|deleted"
     r"|cleaned up)|was never removed)\b"
     r"|\b(?:left|leaves?|leaving) (?:behind )?(?:a |its |the )?(?:stale )?(?:pid ?file|lock ?file|lockfile)\b"
     # a lock of any name (a pidlock, a cache key's lock, a .lock) a run that was killed or interrupted left behind
     r"|\b(?:pid ?lock|lock(?: ?file| dir(?:ectory)?)?|\.lock)s?\b[^\n]{0,40}?\b(?:left (?:behind|over)|still (?:there"
     r"|exists|present))\b"
     r"|\b(?:left|leaves?|leaving) behind (?:a |its |the |an )?(?:stale |orphaned )?(?:[\w.`-]{1,30} ){0,2}?"
     r"`?(?:pid ?lock|lock(?: ?file)?|lockfile|\.lock)\b(?! held| locked)",
     "https://github.com/mheily/jobd/issues/44; https://github.com/inverse-inc/packetfence/issues/3553; "
     "https://github.com/warewulf/warewulf3/pull/208 (a cronjob leaves a lockfile behind if it is killed)"),
    # --- a wait in flock(2) / fcntl's F_SETLKW: "A call to flock() may block if an incompatible lock is held by
    # another process": the lock's holder is elsewhere (wedged, or a run that still holds the file)
    ("told-flock-wait", "a wait in flock / fcntl's F_SETLKW", ("flock", "lockf", "fcntl", "setlkw"),
     r"\b(?:flock|lockf)\b(?:\(\))?[^\n]{0,40}?\b" + _WAIT + r"\b|\b" + _WAIT + r" (?:in|on|at|inside"
     r"|calls? to) (?:a |the )?`?"
     r"(?:flock|fcntl|lockf|F_SETLKW)\b|\bF_SETLKW\b",
     "https://man7.org/linux/man-pages/man2/flock.2.html; https://github.com/d2iq-archive/marathon-lb/issues/267"),
    # --- job control: "When any process in a background job tries to read from the terminal, all of the processes
    # in the job are sent a SIGTTIN signal. The default action for this signal is to stop the process" (SIGTTOU for a
    # write with `stty tostop`, or a change of the terminal's modes); the shell says "Stopped (tty input)" or "has
    # stopped". A server started with `&` that reads stdin sits stopped until `fg`
    ("told-tty-stop", "a background job stopped by its terminal (SIGTTIN / SIGTTOU)",
     ("sigttin", "sigttou", "tty input", "tty output", "background", "stopped"),
     # the shells' own job lines: bash "[1]+  Stopped (tty input)  ./si", zsh "suspended (tty input)", fish "Job 1,
     # './si &' has stopped", xonsh "[7] stopped: ./si &"
     r"\bSIGTT(?:IN|OU)\b|\b(?:Stopped|suspended) \(tty (?:input|output)\)|\bJob \d{1,4}, '[^'\n]{1,200}' has "
     r"stopped\b|\[\d{1,4}\]\+? {0,2}[Ss]topped:? [^\n]{1,200}&"
     # a stop of the job, not of what it does ("the loss stops decreasing": a verb in -ing follows)
     r"|\b(?:in(?:to)? (?:the )?background|as a background (?:job|process|task)|backgrounded)\b[^\n]{0,60}?\b(?:stops?"
     r"|stopped|suspend(?:s|ed)?|pauses?|paused)\b(?! \w{2,20}ing\b)"
     r"|\b(?:stop(?:s|ped|p?ing)?|suspended|pauses?|paused)\b[^\n]{0,60}?\b(?:when|if|once|as soon as) (?:it is |it's "
     r"|they are |I |we |you )?(?:run|start|put|launch|sen[dt])\w{0,3} (?:it |them )?(?:in(?:to)? (?:the )?background"
     r"|with &|as a background)",
     "https://www.gnu.org/software/libc/manual/html_node/Access-to-the-Terminal.html; "
     "https://www.gnu.org/software/bash/manual/html_node/Job-Control-Basics.html; "
     "https://github.com/nodejs/node/issues/20148 (a background process that reads stdin gets SIGTTIN, which pauses "
     "it); https://github.com/pmodels/mpich/issues/2022 (mpiexec jobs no longer run in background)"),
    # --- a wait for something that never comes: a service or server that never becomes available (ROS's
    # wait_for_service, a readiness wait), a wait() that never returns (threading.Event.wait blocks until the flag
    # is set, Popen.wait until the child exits)
    ("told-never-available", "a wait for a service or a wake-up that never comes", ("never", "wait"),
     r"\bnever (?:became|becomes|become|gets|got|came) (?:available|ready|up)\b"
     r"|\b(?:wait(?:s|ing)?|waited) for (?:the )?(?:service|server|action server|topic|node|endpoint"
     r"|peer) to (?:become|be|come) "
     r"(?:available|ready|up)\b[^\n]{0,60}?\b(?:forever|never|indefinitely|hangs?|stuck)\b"
     r"|\bwait_for_(?:service|server|message|topic)\w{0,10}(?:\(\))?[^\n]{0,40}?\b(?:hangs?|blocks?|forever"
     r"|indefinit\w{1,4}"
     r"|indefinatly|never returns)\b"
     r"|\.?\b\w{0,30}wait\w{0,12}\(\)[^\n]{0,40}?\bnever (?:returns?|returned|completes?|wakes?|woke|finishes|ends)\b",
     "https://docs.ros2.org/latest/api/rclpy/api/services.html (Client.wait_for_service); "
     "https://docs.python.org/3/library/threading.html#threading.Event.wait"),
)


def _signal(oid: str, term: str, needles: Tuple[str, ...], pattern: str, source: str) -> Signal:
    means = f"a mechanism named in words: {term}"
    # compiled when first used, like lazy_compile's
    pattern_ = cast("re.Pattern[str]", MechanismPattern(pattern, re.I, needles))
    return Signal(oid, means, pattern_, source, False, False)


MECHANISMS: tuple[Signal, ...] = tuple(_signal(*row) for row in ROWS)

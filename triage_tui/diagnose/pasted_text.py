"""`triage diagnose`: the engine over pasted text (one look), with the parts used and ignored.

On top of what the live engine observes in a snapshot, a paste carries evidence no collector reads: signal
words in prose, debugger dumps, figures quoted in sentences. Those become observations here (the lexicon's
ids and `prose-*`), and the same rules score them.

Scope. A kernel OOM kill or segfault names a PID and a command. When the paste shows the job's processes (a
`ps`, a /proc status, stack dumps) and the killed PID is not one of them and its name matches none of theirs,
it is about another program: it is shown (`oom-kill-elsewhere` / `segfault-elsewhere`) but does not count for
this job's causes. When the paste shows no processes at all (a dmesg excerpt alone), nothing contradicts it
and it counts: that is what someone pasting it means.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Optional

from ..model.diagnosis import Observation
from ..model.snapshot import Snapshot
from ..model.stacks import ProcessStacks, StackCapture
from ..parse.paste_evidence import PasteEvidence, evidence_from_paste
from ..parse.log_text import LOG_LINE
from ..parse.negation import stated_match
from ..parse.paste_split import PastePart
from ..parse.paste_words import phrases_of
from ..parse.prose_figures import ProseFigure
from ..parse.prose_mined import COUNTED, MINED_SIGNALS, more_id, phrase_key, phrases_in
from ..parse.prose_mined import PREFIX as MINED_PREFIX
from ..parse.signal_lexicon import scan_line
from ..parse.strace_text import findings as strace_findings
from .engine import Diagnosis, observe
from .figures import quote
from .hypotheses import evaluate, rule_ids
from .observations import Thresholds
from .paste_frames import frames_of_note
from .stack_reading import classify, group_processes
from .vocabulary import register
from .word_model import MAX_TEXT, place_id, rank_words

PASTE_OBSERVATIONS = (
    "prose-gpu-busy-low-power", "prose-gpu-busy", "prose-gpu-idle", "prose-cpu-idle", "prose-cpu-busy", "prose-stuck",
    "prose-rss", "oom-kill-elsewhere", "segfault-elsewhere", "stacks-one-in-collective", "stacks-one-waiting",
    "stacks-one-lock", "vmstat-blocked", "socket-connecting", "gpu-busy-low-watts", "log-several-ranks", "log-ranks-missing", "shm-nearly-full", "stacks-file-lock", "stacks-atexit-lock",
    "stacks-fork-lock", "log-ends-at-child-start", "pasted-code", "paste-no-other-evidence", "log-strace-spin",
    "log-strace-lock-wait", "log-strace-pending-wait",
)

_RANK = re.compile(r"\[(?:Rank|rank) ?(\d{1,5})\]")
# NCCL_DEBUG lines start `host:pid:tid [cuda device] NCCL INFO ...`: each (pid, device) pair is one rank's communicator
_NCCL_PREFIX = re.compile(r"^[\w.-]{1,128}:(\d{1,10}):\d{1,10} \[(\d{1,4})\] NCCL ")
_TIMEOUT_LINE = re.compile(r"Watchdog caught collective operation timeout|Timeout at NCCL work|timed out in blocking wait")
# a forked worker's first words: multiprocessing's and billiard's "child process calling self.run()" (their logger
# at INFO), gunicorn's "Booting worker with pid: N"
_CHILD_START = re.compile(r"child process calling self\.run\(\)|Booting worker with pid")
_LAST_SAID = re.compile(r"\blast (?:attempted |printed |logged )?(?:log )?(?:line|message|output)\b", re.I)
_SHM_DF = re.compile(r"\s(\d{1,3})%\s{1,8}/dev/shm\s*$")


@dataclass(frozen=True)
class PastedDiagnosis:
    parts: tuple[PastePart, ...]
    diagnosis: Diagnosis
    stacks: Optional[StackCapture] = None


def capture_from(stacks: tuple[ProcessStacks, ...], at: float = 0.0) -> Optional[StackCapture]:
    """Classify every thread's wait and group identical stacks, as a live capture would be."""
    if not stacks:
        return None
    classified = []
    for proc in stacks:
        threads = []
        for t in proc.threads:
            kind, frame = classify(t.frames, t.status)
            threads.append(replace(t, wait_kind=kind, wait_frame=frame))
        classified.append(replace(proc, threads=tuple(threads)))
    return StackCapture(taken_at=at, pids=tuple(p.pid for p in classified), processes=tuple(classified),
                        groups=group_processes(classified))


def _obs(oid: str, text: str, source: str, at: float, pids: Sequence[int] = (), **figures: object) -> Observation:
    clean = {k: v for k, v in figures.items() if isinstance(v, (int, float, str))}
    return Observation(id=register(oid), text=text, source=source, at=at, figures=clean, pids=tuple(pids))


def _lexicon(evidence: PasteEvidence, present: set[str], at: float) -> list[Observation]:
    """One observation per lexicon id found in the pieces the log reader did not already scan, then one per prose row
    id told in any piece (the live log reader never reads those)."""
    out: list[Observation] = []
    seen: set[str] = set(present)
    for no, line in evidence.signal_lines:
        for sig in scan_line(line):
            if sig.id in seen:
                continue
            seen.add(sig.id)
            out.append(_obs(sig.id, f"{sig.means} (line {no}): {quote(line.strip(), 160)}", "pasted text", at,
                            line=line.strip()[:200], line_no=no))
    for no, words, sig in evidence.told:  # a mechanism told in words (parse/prose_lexicon.py), in any piece
        if sig.id in seen:
            continue
        seen.add(sig.id)
        means = sig.means
        if sig.id.startswith(MINED_PREFIX):  # a cause's phrases are many: say which one this paste holds
            found = stated_match(sig.id, sig.pattern, words)  # not a phrase told under a negation
            means += f", here {quote(found.group(0), 60)}" if found else ""
            out.append(_obs(sig.id, f"{means} (line {no}): {quote(words.strip(), 160)}", "pasted text", at,
                            line=words.strip()[:200], line_no=no, phrase=phrase_key(found.group(0)) if found else ""))
            continue
        out.append(_obs(sig.id, f"{means} (line {no}): {quote(words.strip(), 160)}", "pasted text", at,
                        line=words.strip()[:200], line_no=no))
    return out


_MINED_IDS = frozenset(s.id for s in MINED_SIGNALS)


def _more_phrases(text: str, observations: Sequence[Observation], at: float) -> list[Observation]:
    """Each further distinct phrase of a cause whose mined phrase was found (the lines read alone, as the selection
    reads them; at most 10,000 characters of a line), one observation each, up to COUNTED phrases a cause: each is a
    row of its own (diagnose/mined_rows.py), so the cause that shares more phrases with its seen cases ranks first."""
    out: list[Observation] = []
    lines = text.split("\n")
    for o in observations:
        if o.id not in _MINED_IDS:
            continue
        cause, keys = o.id[len(MINED_PREFIX):], [str(o.figures.get("phrase", ""))]
        for no, line in enumerate(lines, 1):
            for key in phrases_in(o.id, line[:10_000]):
                if len(keys) >= COUNTED or key in keys:
                    continue
                keys.append(key)
                out.append(_obs(more_id(cause, len(keys)), f"one phrase more the seen cases of {cause} share, here "
                                f"'{key}' (line {no}): {quote(line.strip(), 160)}", "pasted text", at,
                                line=line.strip()[:200], line_no=no, phrase=key))
            if len(keys) >= COUNTED:
                break
    return out


_PLACES = ("first", "second", "third")


def _word_ranks(text: str, at: float) -> list[Observation]:
    """The causes the paste's words rank (diagnose/word_model.py), one observation each, naming the phrases that
    weigh most for it and the seen cases they come from."""
    out = []
    for r in rank_words(text):
        said = "; ".join(f"{quote(w.phrase, 40)} ({w.in_cause} of {w.cause_cases} seen cases of it, {w.in_others} of "
                         f"the others" + (f": {', '.join(w.sources)}" if w.sources else "") + ")" for w in r.phrases)
        out.append(_obs(place_id(r.cause, r.place), f"the paste's words rank {r.cause} {_PLACES[r.place - 1]} of the "
                        f"seen causes ({r.found} of its phrases are in the word model): {said}", "pasted text", at,
                        cause=r.cause, place=r.place, phrases=", ".join(w.phrase for w in r.phrases)))
    return out


def _prose(figures: Sequence[ProseFigure], at: float) -> list[Observation]:
    out: list[Observation] = []
    by_line: dict[int, dict[str, ProseFigure]] = {}
    for f in figures:
        by_line.setdefault(f.line_no, {}).setdefault(f.kind, f)
    seen: set[str] = set()

    def add(oid: str, f: ProseFigure, text: str, **figs: object) -> None:
        if oid not in seen:
            seen.add(oid)
            out.append(_obs(oid, f"{text} (quoted in prose, line {f.line_no}): {quote(f.line, 120)}", "pasted text", at,
                            (), **figs))

    for line_figs in by_line.values():
        util, power = line_figs.get("gpu-util"), line_figs.get("gpu-power")
        if util is not None and util.value >= 95 and power is not None and power.value <= 120:
            add("prose-gpu-busy-low-power", util, f"GPU at {util.value:.0f} % utilisation drawing {power.value:.0f} W: "
                "a spin-wait, not compute", gpu_util=util.value, power_w=power.value)
        elif util is not None and util.value >= 95:
            add("prose-gpu-busy", util, f"GPU at {util.value:.0f} % utilisation", gpu_util=util.value)
        elif util is not None and util.value <= 5:
            add("prose-gpu-idle", util, f"GPU at {util.value:.0f} % utilisation", gpu_util=util.value)
        cpu = line_figs.get("cpu-util")
        if cpu is not None and cpu.value <= 2:
            add("prose-cpu-idle", cpu, f"{cpu.value:.0f} % CPU", cpu_percent=cpu.value)
        elif cpu is not None and cpu.value >= 90:
            add("prose-cpu-busy", cpu, f"{cpu.value:.0f} % CPU", cpu_percent=cpu.value)
        stuck = line_figs.get("stuck-for")
        if stuck is not None:
            add("prose-stuck", stuck, f"stuck for {stuck.value:.0f} s", stuck_s=stuck.value)
        rss = line_figs.get("rss")
        if rss is not None:
            add("prose-rss", rss, f"memory quoted: {rss.value / 1e9:.1f} GB", rss_bytes=rss.value)
    return out


def _names(snapshot: Snapshot, capture: Optional[StackCapture]) -> tuple[set[int], set[str]]:
    pids = {p.pid for p in snapshot.processes}
    names = {p.name for p in snapshot.processes} | {os.path.basename(p.cmdline[0]) for p in snapshot.processes if p.cmdline}
    if capture is not None:
        pids |= {p.pid for p in capture.processes if p.pid}
        names |= {p.name.split()[0] for p in capture.processes if p.name}
    return pids, {n[:15] for n in names if n}


def _scoped(observations: list[Observation], snapshot: Snapshot, capture: Optional[StackCapture]) -> list[Observation]:
    """Kernel kills of other programs become `*-elsewhere` (shown, not counted) when the paste shows the job."""
    pids, names = _names(snapshot, capture)
    if not pids:
        return observations
    comm = {e.pid: e.text for e in snapshot.kernel.events}
    out = []
    for o in observations:
        if o.id in ("oom-kill", "segfault") and o.pids and o.source == "kernel":
            text = comm.get(o.pids[0], o.text)
            tied = o.pids[0] in pids or any(n and (f"({n})" in text or f" {n}[" in text or f"{n}[" in text) for n in names)
            if not tied:
                o = dataclasses.replace(o, id=f"{o.id}-elsewhere",
                                        text=f"{o.text} — PID {o.pids[0]} is none of the pasted processes and its "
                                             "name matches none of theirs: another program, not counted")
        out.append(o)
    return out


def _one_look_stacks(capture: Optional[StackCapture], at: float) -> list[Observation]:
    """A single process's dump: what its main thread waits on (several ranks are the live rules' job)."""
    if capture is None or len(capture.processes) != 1:
        return []
    proc = capture.processes[0]
    if not proc.threads:
        return []
    named = [t for t in proc.threads if t.name == "MainThread"]
    main = named[0] if named else proc.threads[0]
    if main.wait_kind == "collective":
        return [_obs("stacks-one-in-collective", f"the one dumped process (PID {proc.pid}) waits in a collective: "
                     f"{main.wait_frame}", "stacks", at, [proc.pid], frame=main.wait_frame)]
    if main.wait_kind == "lock":
        return [_obs("stacks-one-lock", f"the one dumped process (PID {proc.pid}) waits to acquire a lock: "
                     f"{main.wait_frame}", "stacks", at, [proc.pid], frame=main.wait_frame)]
    if main.wait_kind in ("condition", "queue", "socket", "sleep"):
        return [_obs("stacks-one-waiting", f"the one dumped process (PID {proc.pid}) waits ({main.wait_kind}): "
                     f"{main.wait_frame}", "stacks", at, [proc.pid], frame=main.wait_frame, kind=main.wait_kind)]
    return []


def _ranks_and_shm(text: str, at: float) -> list[Observation]:
    """Ranks named in the log lines (several ranks = a collective job; timeouts reported by some ranks only =
    the others are elsewhere), and a `df` line showing /dev/shm nearly full."""
    out: list[Observation] = []
    seen: set[int] = set()
    timed_out: set[int] = set()
    shm: int | None = None
    nccl: set[tuple[str, str]] = set()
    for line in text.split("\n"):
        if "NCCL" in line:
            n = _NCCL_PREFIX.match(line.strip())
            if n:
                nccl.add((n.group(1), n.group(2)))
        if "ank" in line:
            ranks = {int(r) for r in _RANK.findall(line)}
            seen |= ranks
            if ranks and _TIMEOUT_LINE.search(line):
                timed_out |= ranks
        if "/dev/shm" in line:
            m = _SHM_DF.search(line)
            if m:
                shm = int(m.group(1))
    if len(seen) >= 2 or len(nccl) >= 2:
        how = f"{len(seen)} ranks named in the log lines" if len(seen) >= len(nccl) else \
            f"NCCL lines from {len(nccl)} communicators (process:device pairs)"
        out.append(_obs("log-several-ranks", how, "pasted text", at, ranks=max(len(seen), len(nccl))))
    if len(timed_out) >= 2:
        missing = sorted(set(range(max(timed_out) + 1)) - timed_out)
        if missing and len(missing) < len(timed_out):
            who = ", ".join(map(str, sorted(timed_out)))
            out.append(_obs("log-ranks-missing", f"ranks {who} report the collective timeout; rank(s) "
                            f"{', '.join(map(str, missing))} do not: they never reached it", "pasted text", at,
                            missing=", ".join(map(str, missing))))
    if shm is not None and shm >= 80:
        out.append(_obs("shm-nearly-full", f"/dev/shm is {shm} % used (df)", "pasted text", at, shm_percent=shm))
    return out


# NCCL_DEBUG_SUBSYS=COLL: `NCCL INFO Broadcast: opCount 0 ... count 53 datatype 4 op 0 root 0 comm 0x... [nranks=8]`
_NCCL_COLL = re.compile(r"NCCL INFO (\w{1,40}): opCount ([0-9a-fA-Fx]{1,20}) .{0,300}?count (\d{1,15}) datatype (\d{1,3}) "
                        r"op (\d{1,3}) root (-?\d{1,6}) comm (0x[0-9a-f]{1,16})")


def _nccl_collectives(text: str, at: float) -> list[Observation]:
    """NCCL's per-call collective lines from several communicators: the same operation number called with a
    different collective, count, type or root on some ranks is a mismatch (the ranks' calls disagree)."""
    calls: dict[str, dict[str, tuple[str, ...]]] = {}
    for line in text.split("\n"):
        if "opCount" not in line:
            continue
        m = _NCCL_COLL.search(line)
        if m:
            name, op, count, dtype, red, root, comm = m.groups()
            calls.setdefault(op, {})[comm] = (name, count, dtype, red, root)
    for op, by_comm in calls.items():
        shapes = sorted(set(by_comm.values()), key=lambda v: -sum(1 for x in by_comm.values() if x == v))
        if len(by_comm) >= 2 and len(shapes) >= 2:
            common, odd = shapes[0], shapes[1]
            odd_n = sum(1 for v in by_comm.values() if v == odd)
            return [_obs("log-collective-mismatch", f"NCCL collective calls disagree at opCount {op}: {common[0]} of count "
                         f"{common[1]} on {len(by_comm) - odd_n} communicator(s), {odd[0]} of count {odd[1]} on {odd_n} "
                         "(NCCL_DEBUG_SUBSYS=COLL lines)", "pasted text", at, op_count=op)]
    return []


def _ends_at_child_start(evidence: PasteEvidence, at: float) -> list[Observation]:
    """The log stops where a forked worker announces its start (the pasted log's last line, or prose saying that
    this is the last line): the child blocked before its first task, where a lock copied held across fork stops it."""
    logs = [p for p in evidence.parts if p.kind == "log"]
    lines = [ln for ln in logs[-1].text.split("\n") if ln.strip()] if logs else []
    # the last record: a log's own line (a remark typed after it, "... after this ... nothing.", is not one)
    last = next((ln for ln in reversed(lines) if LOG_LINE.match(ln)), lines[-1] if lines else "")
    if last and _CHILD_START.search(last):
        return [_obs("log-ends-at-child-start", f"the log ends where a forked worker starts: {quote(last.strip(), 100)}",
                     "pasted text", at)]
    for no, line in evidence.signal_lines:
        if _CHILD_START.search(line) and _LAST_SAID.search(line):
            return [_obs("log-ends-at-child-start", f"the last log line is a forked worker's start (line {no}): "
                         f"{quote(line.strip(), 100)}", "pasted text", at, line_no=no)]
    return []


def _system(evidence: PasteEvidence, at: float) -> list[Observation]:
    """vmstat's blocked count, sockets still connecting, and a GPU at full utilisation on little power when its
    limit was not pasted (dmon): the live engine reads these from /proc, sock_diag and NVML instead."""
    out: list[Observation] = []
    vm = evidence.vmstat
    if vm is not None and vm.blocked > 0:
        wa = f", {vm.iowait_percent} % of CPU time in iowait" if vm.iowait_percent is not None else ""
        out.append(_obs("vmstat-blocked", f"vmstat: {vm.blocked} process(es) blocked in uninterruptible I/O (b){wa}",
                        "pasted text", at, blocked=vm.blocked))
    if evidence.connecting:
        peers = ", ".join(sorted(set(evidence.connecting))[:3])
        out.append(_obs("socket-connecting", f"{len(evidence.connecting)} socket(s) still connecting (SYN-SENT) to {peers}: "
                        "nothing answers there", "pasted text", at, peer=peers))
    gpus = evidence.snapshot.gpus
    spin = [d for d in gpus.devices if isinstance(d.utilization_gpu_percent, int) and d.utilization_gpu_percent >= 95
            and isinstance(d.power_draw_w, float) and d.power_draw_w <= 120 and not isinstance(d.power_limit_w, float)]
    if spin:
        d = spin[0]
        out.append(_obs("gpu-busy-low-watts", f"{len(spin)} GPU(s) at {d.utilization_gpu_percent} % utilisation drawing "
                        f"{d.power_draw_w:.0f} W ({gpus.source}): a spin-wait, not compute", "gpus", at, gpus=len(spin)))
    return out


def _script(evidence: PasteEvidence, at: float) -> list[Observation]:
    """A Python script pasted instead of its output: the library calls it makes (shown; a call is where a job waits,
    not why, so no rule rests on it)."""
    if not evidence.code:
        return []
    names = list(dict.fromkeys(c for _, found in evidence.code for c in found))
    said = f", calling {', '.join(names[:8])}" + (f" and {len(names) - 8} more" if len(names) > 8 else "") if names else ""
    return [_obs("pasted-code", f"a Python script pasted (line {evidence.code[0][0]}; code, not its output){said}",
                 "pasted text", at, calls=", ".join(names[:8]))]


def _strace(text: str, at: float) -> list[Observation]:
    """An strace excerpt read whole, one process at a time (parse/strace_text.py): a loop of calls that never sleep,
    or a wait left pending at its end; one observation of each kind, the first found."""
    out: dict[str, Observation] = {}
    for f in strace_findings(text):
        who = f"PID {f.pid}" if f.pid else "the traced process"
        if f.kind == "spin":
            oid, said = "log-strace-spin", (f"strace: {who} makes {f.calls} calls that return at once and repeat "
                                            f"({', '.join(f.names[:4])}), none that sleeps: a loop on the CPU")
        elif f.what == "file-lock":
            oid, said = "log-strace-lock-wait", f"strace: {who} ends waiting for a file lock ({f.names[0]})"
        else:
            oid, said = "log-strace-pending-wait", f"strace: {who} ends in {f.names[0]}() that never returned ({f.what})"
        if oid not in out:
            out[oid] = _obs(oid, f"{said} (line {f.line_no}): {quote(f.line.strip(), 120)}", "pasted text", at,
                            line_no=f.line_no, call=f.names[0])
    return list(out.values())


def diagnose_text(text: str, now: float = 0.0) -> PastedDiagnosis:
    evidence = evidence_from_paste(text, now)
    capture = capture_from(evidence.stacks, now)
    observations = observe([evidence.snapshot], capture, dataclasses.replace(Thresholds(), one_look=True))
    observations = _scoped(observations, evidence.snapshot, capture)
    present = {o.id for o in observations}
    observations += (_lexicon(evidence, present, now) + _prose(evidence.prose, now) + _one_look_stacks(capture, now)
                     + _ranks_and_shm(text, now) + frames_of_note(capture, now) + _system(evidence, now)
                     + _ends_at_child_start(evidence, now) + _script(evidence, now) + _strace(text, now))
    if not any(o.id == "log-collective-mismatch" for o in observations):
        observations += _nccl_collectives(text, now)
    observations += _more_phrases(text, observations, now)
    # the mined rows and the word model need their gate: what the other evidence ranks
    hypotheses = evaluate(observations)
    scored = {h.id for h in hypotheses if h.kind == "cause" and h.status != "ruled out" and h.score > 0}
    ranked = bool(scored)
    words = _word_ranks(text, now)
    if not ranked and (words or any(o.id.startswith(MINED_PREFIX) for o in observations)):
        # the weakest evidence there is, a phrase shared with the seen cases of a cause (the mined rows, the word
        # model), counts only where the other evidence ranks no cause (the nineteenth pass; before it, only where the
        # readers found nothing a rule weighs, for a cause or against it): said as an observation, which the rows
        # name beside their phrases
        observations.append(_obs("paste-no-other-evidence", "nothing else in the paste ranks a cause: the phrases it "
                                 "shares with seen cases count", "pasted text", now))
        observations += words
        hypotheses = evaluate(observations)
    elif words := [o for o in words if o.figures.get("cause") not in scored]:
        # where other evidence ranks a cause, the words only rank causes behind it (diagnose/word_rows.py), never one
        # it ranks: they never reorder what that evidence says
        observations.append(_obs("paste-other-evidence", "other evidence in the paste ranks a cause: the words it "
                                 "shares with seen cases only rank causes behind it", "pasted text", now))
        observations += words
        hypotheses = evaluate(observations)
    # where the words alone rank (nothing else does), the prose they were read in is a used piece
    parts = evidence.parts if ranked else _read_for_words(evidence.parts, words)
    return PastedDiagnosis(parts, Diagnosis(tuple(observations), hypotheses, ()), capture)


def _read_for_words(parts: tuple[PastePart, ...], words: Sequence[Observation]) -> tuple[PastePart, ...]:
    """A prose piece no reader used that holds a phrase the word model's rows name was read for its words: its used_as
    says so (a paste whose only reading is its words is not "nothing triage reads"). Pieces a reader used keep what
    they were read as."""
    if not words:
        return parts
    out = []
    for p in parts:
        if p.kind == "text" and not p.used:
            held = phrases_of(p.text[:MAX_TEXT])
            ids = [o.id for o in words if held & set(str(o.figures.get("phrases", "")).split(", "))]
            if ids:
                p = replace(p, used=True, used_as=f"words the seen cases share ({', '.join(ids)})", note="")
        out.append(p)
    return tuple(out)


# the observations some rule weighs, the mined phrases and their gate apart (the gate before the nineteenth pass;
# bench/paste_selection_15.py still reads it to simulate the engine with and without the mined rows)
_KNOWN = frozenset(i for i in rule_ids() if not i.startswith((MINED_PREFIX, "told-words-"))
                   and i not in ("paste-no-other-evidence", "paste-other-evidence"))

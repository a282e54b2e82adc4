"""The incident as Markdown, readable pasted into a ticket: what was seen, what it means, what to check next.

Pure text over the model (no rich, no I/O): `triage report` prints it, the app's export and
`report --from` reuse it. The last Moment gives the state (its snapshot, the engine's diagnosis,
the stacks); the first gives the time span. Hypotheses are listed in the engine's order, never
re-sorted here, so rank numbers agree with the app and the JSON.

Ticket-ready: a summary first (the verdict, its three strongest pieces of evidence, the next check,
the odd rank's stack), then the details. Hypotheses unlikely with nothing for them and ruled-out
ones are one short list; logs are verbatim; long tables end in "N more"; no app keystroke appears.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from ..model.diagnosis import Diagnosis, Hypothesis
from ..model.moment import Moment
from ..model.snapshot import (
    CgroupMemory,
    GpuReport,
    KernelReport,
    LogTail,
    PortReport,
    ProcessInfo,
    Snapshot,
    SystemMemory,
    TargetMemory,
)
from ..model.stacks import StackCapture, StackGroup
from ..model.text_format import clock as _clock
from ..model.text_format import stamp as _stamp
from ..model.unavailable import is_known, known_or
from .figures import duration, number, ratio, size, unavailable_text
from .hypotheses_text import evidence_markdown
from .plain_text import code_block, md_code, md_inline, terminal_text
from .verdict import is_quiet, shell_words, strongest_evidence, verdict, verdict_text
from .waits_text import wait_lines

LOG_LINES = 15  # last lines of each log in the report
TABLE_ROWS = 30  # a longer table ends in "N more" (a ticket is read, not searched)
STACK_FRAMES = 12  # frames of the odd rank's stack in the summary
RSS_ILLUSION_RATIO = 1.5  # RSS sum above this many times the PSS sum: say that RSS overstates memory


def _cell(text: object) -> str:
    # every cell as literal text: a name or a path is the target's choice (pipes, HTML, links, ESC)
    return md_inline(text)


def _un(value: object) -> str:
    """unavailable_text made literal (its reason can quote a path or a name)."""
    return md_inline(unavailable_text(value))  # type: ignore[arg-type]


def _table(header: Sequence[str], rows: Sequence[Sequence[object]], cap: int = 0) -> list[str]:
    """A Markdown table; with `cap`, at most that many rows and a line saying how many more there are."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    shown = rows[:cap] if cap and len(rows) > cap + 1 else rows
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in shown]
    if len(shown) < len(rows):
        out += ["", f"… and {len(rows) - len(shown)} more rows."]
    return out


# ---------------------------------------------------------------- the summary
def _summary(moments: Sequence[Moment]) -> list[str]:
    """The verdict, its three strongest pieces of evidence, the next check, the odd rank's stack."""
    first, last = moments[0].snapshot, moments[-1].snapshot
    hypotheses = list(moments[-1].diagnosis.hypotheses)  # the engine's order
    capture = moments[-1].stacks
    v = verdict(hypotheses, len(moments), last.taken_at - first.taken_at, capture is not None, in_app=False)
    top = next((h for h in hypotheses if h.id == v.hypothesis_id), None) if v.reached else None
    said = (f"{v.status}: {md_inline(v.title)} ({md_code(v.hypothesis_id)}, score {top.score:.2f})" if top is not None
            else md_inline(verdict_text(v)))
    lines = ["## Summary", "", f"**Verdict:** {said}"]
    if top is not None:
        evidence = strongest_evidence(top, 3)
        if evidence:
            lines += ["", "**Strongest evidence:**", ""] + [f"{i}. {md_inline(text)}" for i, text in enumerate(evidence, 1)]
        if top.next_check:
            lines += ["", f"**Next check:** {md_inline(shell_words(top.next_check))}"]
    odd = _odd_group(capture)
    if capture is not None and odd is not None:
        frames = list(reversed(odd.frames))[:STACK_FRAMES]  # outermost first, as a traceback reads
        more = len(odd.frames) - len(frames)
        lines += ["", f"**The odd rank's stack** (PID {', '.join(map(str, odd.pids))}, departs at "
                  f"{md_code(odd.departs_at or '?')}; captured {_clock(capture.taken_at)}):", ""]
        # a fence no frame name can close (a function named ``` is the target's to choose)
        body = [f"{f.function} ({f.file}:{f.line})" if f.file else f.function for f in frames]
        lines += code_block(body + ([f"… {more} more frames"] if more > 0 else []))
    return lines


def _odd_group(capture: Optional[StackCapture]) -> Optional[StackGroup]:
    if capture is None:
        return None
    return next((g for g in capture.groups if g.odd_one_out), None)


# ---------------------------------------------------------------- sections
def _header(first: Snapshot, last: Snapshot) -> list[str]:
    span = last.taken_at - first.taken_at
    lines = [
        f"# triage report: {md_inline(last.host or 'unknown host')}",
        "",
        f"- **Host:** {md_inline(last.host or 'unknown')}",
        f"- **Watched:** {_stamp(first.taken_at)} to {_clock(last.taken_at)} ({duration(span)}, "
        f"{'one snapshot' if first is last else 'several snapshots'})",
    ]
    target = last.target
    specs = md_inline(" ".join(target.specs)) if target.specs else "none given"
    lines.append(f"- **Target:** {specs}" + (" (no target given: candidates picked by triage)" if target.auto_picked else ""))
    for root in target.roots:
        lines.append(f"  - root PID {root.pid}: {md_inline(root.reason)}")
    if not target.roots:
        lines.append("  - no root resolved")
    return lines


def _tree_order(processes: Sequence[ProcessInfo]) -> list[tuple[int, ProcessInfo]]:
    """(depth, process) in tree order: each root, then its children by PID, depth first."""
    pids = {p.pid for p in processes}
    children: dict[int, list[ProcessInfo]] = {}
    for p in processes:
        children.setdefault(p.ppid, []).append(p)
    out: list[tuple[int, ProcessInfo]] = []

    def walk(p: ProcessInfo, depth: int) -> None:
        out.append((depth, p))
        for child in sorted(children.get(p.pid, []), key=lambda c: c.pid):
            walk(child, depth + 1)

    for root in sorted((p for p in processes if p.ppid not in pids), key=lambda p: p.pid):
        walk(root, 0)
    return out


def _processes(snap: Snapshot) -> list[str]:
    lines = ["## Processes", ""]
    if not snap.processes:
        return lines + ["No process of the target was found in the last snapshot."]
    states: dict[str, int] = {}
    for p in snap.processes:
        states[p.state] = states.get(p.state, 0) + 1
    summary = ", ".join(f"{n} in {s}" for s, n in sorted(states.items()))
    lines += [f"{len(snap.processes)} processes ({summary}). Source: /proc (stat, status, wchan) and smaps_rollup.", ""]
    rows = []
    for depth, p in _tree_order(snap.processes):
        name = ("· " * (depth - 1) + "└─ " if depth else "") + p.name + (" (exited)" if p.exited else "")
        rows.append([
            p.pid, p.ppid, name, p.state, number(p.cpu_percent, "{:.1f}"), duration(p.cpu_time_s),
            number(p.threads), size(p.rss_bytes), size(p.pss_bytes), number(p.wchan),
        ])
    lines += _table(["PID", "PPID", "Name", "State", "CPU %", "CPU time", "Threads", "RSS", "PSS", "wchan"], rows,
                    cap=TABLE_ROWS)
    errors = [p for p in snap.processes if p.error is not None]
    if errors:
        lines.append("")
        lines += [f"- PID {p.pid}: {_un(p.error)}" for p in errors if p.error is not None]
    if snap.exited:
        lines += ["", "Exited since first seen:"]
        lines += [f"- PID {e.pid} {md_inline(e.name)}: last seen {_clock(e.last_seen)}, exit {number(e.exit_code)}" for e in snap.exited]
    return lines


def _rss_illusion(snap: Snapshot) -> str:
    """The sentence that says RSS overstates memory, with the figures, when it does."""
    covered = [p for p in snap.processes if not p.exited and is_known(p.pss_bytes) and is_known(p.rss_bytes)]
    if len(covered) < 2:
        return ""
    rss = sum(known_or(p.rss_bytes, 0) for p in covered)  # all known: the 0 is never used
    pss = sum(known_or(p.pss_bytes, 0) for p in covered)
    r = ratio(rss, pss)
    if r is None or r < RSS_ILLUSION_RATIO:
        return ""
    shared_file = sum(p.rss_file_bytes for p in covered if is_known(p.rss_file_bytes))
    shared_shmem = sum(p.rss_shmem_bytes for p in covered if is_known(p.rss_shmem_bytes))
    system = snap.memory.system
    text = (
        f"**RSS overstates memory here:** the RSS sum of {len(covered)} processes is {size(rss)}, "
        f"{r:.1f}× their PSS sum of {size(pss)}. Pages shared between processes (file-backed RSS "
        f"{size(shared_file)}, shmem {size(shared_shmem)} summed) count once per process in RSS; PSS splits them."
    )
    if is_known(system.total_bytes):
        text += (
            f" The machine has {size(system.total_bytes)} in total, {size(system.used_bytes)} used and "
            f"{size(system.available_bytes)} available: those, and PSS/USS, are the true figures."
        )
    return text


def _memory(snap: Snapshot) -> list[str]:
    t: TargetMemory = snap.memory.target
    s: SystemMemory = snap.memory.system
    c: CgroupMemory = snap.memory.cgroup
    lines = ["## Memory", ""]
    pss_note = f" (PSS read for {t.pss_covered} of {t.processes} processes)" if t.pss_covered < t.processes else ""
    lines += _table(["Figure", "Value", "Source"], [
        [f"RSS sum ({t.processes} processes)", size(t.rss_sum_bytes), "/proc/PID/status VmRSS"],
        ["PSS sum" + pss_note, size(t.pss_sum_bytes), "smaps_rollup"],
        ["USS sum", size(t.uss_sum_bytes), "smaps_rollup (private clean + dirty)"],
        ["RSS file-backed sum", size(t.file_sum_bytes), "/proc/PID/status RssFile"],
        ["RSS anonymous sum", size(t.anon_sum_bytes), "/proc/PID/status RssAnon"],
        ["RSS shmem sum", size(t.shmem_sum_bytes), "/proc/PID/status RssShmem"],
        ["System total", size(s.total_bytes), "/proc/meminfo"],
        ["System used", size(s.used_bytes), "/proc/meminfo (as `free`)"],
        ["System available", size(s.available_bytes), "/proc/meminfo MemAvailable"],
        ["System buff/cache", size(s.buff_cache_bytes), "/proc/meminfo"],
        ["System shared", size(s.shared_bytes), "/proc/meminfo Shmem"],
        ["Swap used / total", f"{size(s.swap_used_bytes)} / {size(s.swap_total_bytes)}", "/proc/meminfo"],
        ["Cgroup current", size(c.current_bytes), number(c.path, "cgroup {}")],
        ["Cgroup limit", "no limit" if c.max_bytes is None else size(c.max_bytes), number(c.version, "cgroup v{}")],
    ])
    sentence = _rss_illusion(snap)
    if sentence:
        lines += ["", sentence]
    return lines


def _ports(report: PortReport) -> list[str]:
    lines = ["## Ports", ""]
    if report.error is not None:
        lines.append(_un(report.error))
    if report.listening:
        lines += [f"- PID {s.pid} listens on {md_inline(s.address)}:{s.port} ({s.family})" for s in report.listening]
    else:
        lines.append("- The target listens on no TCP port.")
    for probe in report.probes:
        detail = f" ({md_inline(probe.detail)})" if probe.detail else ""
        lines.append(f"- Connecting to {md_inline(probe.address)} port {probe.port}: **{md_inline(probe.result)}**{detail}")
    return lines


def _logs(logs: Sequence[LogTail]) -> list[str]:
    lines = ["## Logs", ""]
    if not logs:
        return lines + ["No log followed (give `--log FILE`; none was found on the target's stdout/stderr)."]
    for tail in logs:
        lines += [f"### {md_inline(tail.path)}", "", f"- Source: {md_inline(tail.source)}"]
        if tail.error is not None:
            lines.append(f"- {_un(tail.error)}")
        silent = tail.seconds_since_last_byte
        since = f" (last byte at {_clock(tail.last_byte_at)})" if is_known(tail.last_byte_at) else ""
        lines.append(f"- Silent for: {duration(silent)}{since}")
        lines.append(f"- Size: {size(tail.size_bytes)}")
        shown = tail.lines[-LOG_LINES:]
        if shown or tail.partial:
            # verbatim but inert: a line of backticks cannot close this block (the fence is longer)
            block = [x.text for x in shown]  # verbatim: a level prefix would be a line the log never had
            if tail.partial:
                block.append(f"{tail.partial}   <- no newline yet")
            lines += ["", *code_block(block)]
        lines.append("")
    return lines[:-1]


def _gpus(report: GpuReport) -> list[str]:
    lines = ["## GPUs", ""]
    if report.error is not None:
        lines.append(f"No GPU figures: {_un(report.error)}")
    if not report.devices:
        if report.error is None:
            lines.append(f"No GPU seen (source: {report.source}).")
        return lines
    lines.append(f"Source: {report.source}, driver {number(report.driver_version)}.")
    lines.append("")
    rows = [[
        d.index, number(d.name), f"{size(d.memory_used_bytes)} / {size(d.memory_total_bytes)}",
        number(d.utilization_gpu_percent, suffix=" %"), number(d.power_draw_w, "{:.0f}", " W"),
        ", ".join(str(p.local_pid or p.pid) for p in d.processes) or "none",
        "LOST" if d.lost else (unavailable_text(d.error) if d.error else ""),
    ] for d in report.devices]
    return lines + _table(["GPU", "Name", "Memory used / total", "Util", "Power", "PIDs", "Note"], rows, cap=TABLE_ROWS)


def _kernel(report: KernelReport) -> list[str]:
    lines = ["## Kernel events", ""]
    if report.error is not None:
        lines.append(_un(report.error))
    if report.events:
        lines += [f"- {md_inline(e.kind)} PID {e.pid}: {md_inline(e.text)}" for e in report.events]
    elif report.error is None:
        lines.append("No OOM-kill or segfault line names a process of the target.")
    return lines


def _waits(snap: Snapshot) -> list[str]:
    """One line per process: what it waits on and who must act (the wait-for graph, render/waits_text)."""
    lines = ["## Waits", ""]
    if not snap.waits:
        error = snap.waits_source.error
        return lines + [unavailable_text(error) if error is not None else "No thread of the target is blocked."]
    lines += [f"- {md_inline(line.text)}" for line in wait_lines(snap)]
    source = snap.waits_source
    lines += ["", f"{source.blocked_threads} blocked threads read in {source.duration_ms:.1f} ms."]
    if source.error is not None:
        lines.append(unavailable_text(source.error))
    return lines


def _observations(diagnosis: Diagnosis) -> list[str]:
    lines = ["## Observations", ""]
    if not diagnosis.observations:
        return lines + ["None derived (the diagnosis engine found no fact to report)."]
    return lines + [f"- {_clock(o.at)} {md_inline(f'[{o.source}] {o.text}')}" for o in diagnosis.observations]


def _quiet(h: Hypothesis) -> bool:
    """Ruled out, or unlikely with nothing standing for it: one line in the short list, not a section."""
    return is_quiet(h)


def _hypotheses(diagnosis: Diagnosis) -> list[str]:
    lines = ["## Hypotheses", ""]
    if not diagnosis.hypotheses:
        return lines + ["None ranked yet."]
    ordered = list(diagnosis.hypotheses)  # the engine's order: never re-sorted
    for i, h in enumerate([h for h in ordered if not _quiet(h)], 1):
        kind = " (a finding)" if getattr(h, "kind", "cause") == "finding" else ""
        lines.append(f"### {i}. {md_inline(h.title)} ({md_code(h.id)}): {h.status}, score {h.score:.2f}{kind}")
        lines += evidence_markdown(h)
        if h.next_check:
            lines.append(f"- Next check: {md_inline(shell_words(h.next_check))}")
        lines.append("")
    quiet = [h for h in ordered if _quiet(h)]
    unlikely = [h for h in quiet if h.status == "unlikely"]
    ruled_out = [h for h in quiet if h.status == "ruled out"]
    if unlikely:
        lines += [f"**Unlikely (nothing stands for them):** "
                  f"{', '.join(f'{md_inline(h.title)} ({md_code(h.id)})' for h in unlikely)}.", ""]
    if ruled_out:
        lines += ["**Ruled out:**", ""] + [
            f"- {md_inline(h.title)} ({md_code(h.id)})" + (f": {md_inline(h.against[0])}" if h.against else "")
            for h in ruled_out] + [""]
    return lines[:-1]


def _timeline(changelog: Sequence[str]) -> list[str]:
    lines = ["## Timeline", ""]
    return lines + ([f"- {md_inline(c)}" for c in changelog] if changelog else ["No hypothesis changed while watching."])


def _stacks(capture: StackCapture) -> list[str]:
    lines = ["## Stacks", "", f"Captured at {_clock(capture.taken_at)} from {len(capture.pids)} processes "
             "(py-spy paused each process for a moment to read it; `--no-stacks` takes none)."]
    lines += [f"- note: {md_inline(n)}" for n in capture.notes]
    failed = [p for p in capture.processes if p.error is not None]
    lines += [f"- PID {p.pid}: {_un(p.error)}" for p in failed if p.error is not None]
    for g in capture.groups:
        odd = f", odd one out (departs at {md_code(g.departs_at)})" if g.odd_one_out else ""
        unchanged = f", unchanged for {duration(g.unchanged_for_s)}" if g.unchanged_for_s is not None else ""
        lines += [
            "",
            f"### {len(g.members)} threads in PIDs {', '.join(map(str, g.pids))}: {g.wait_kind}"
            + (f" in {md_code(g.wait_frame)}" if g.wait_frame else "") + odd + unchanged,
            "",
        ]
        lines += code_block(f"{f.function} ({f.file}:{f.line})" if f.file else f.function for f in g.frames)
    return lines


# ---------------------------------------------------------------- the report
def render_report_markdown(moments: Sequence[Moment], changelog: Sequence[str] = ()) -> str:
    """The whole report for a timeline of Moments (oldest first) and the engine's changelog."""
    if not moments:
        return "# triage report\n\nNo snapshot was taken.\n"
    first, last = moments[0].snapshot, moments[-1].snapshot
    diagnosis = moments[-1].diagnosis
    title, details = _header(first, last)[:1], _header(first, last)[2:]
    sections = [
        title + [""] + _summary(moments), ["## Details", ""] + details, _hypotheses(diagnosis), _processes(last),
        _memory(last), _ports(last.ports), _logs(last.logs), _gpus(last.gpus), _kernel(last.kernel), _waits(last),
        _observations(diagnosis), _timeline(changelog),
    ]
    stacks = moments[-1].stacks
    if stacks is not None:
        sections.append(_stacks(stacks))
    troubled = [s for s in last.sources if s.status != "ok"]
    if troubled:
        sections.append(["## Sources", ""] + [md_inline(f"- {s.name}: {s.status} {s.detail}".rstrip()) for s in troubled])
    # the last guard of this face: every field above is made visible, a section written since may not be
    return terminal_text("\n\n".join("\n".join(section) for section in sections) + "\n")

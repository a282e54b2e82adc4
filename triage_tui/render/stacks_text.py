"""A stack capture as plain text: groups largest first, the odd one out called out, tracebacks in Python's order.

Pure: a StackCapture in, lines out. Each stack reads like a Python traceback (outermost call first,
`File "x.py", line N, in func` and the source line below), so it can be pasted into an issue as is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..diagnose.wait_kinds import frame_label
from ..model.stacks import Frame, ProcessStacks, StackCapture, StackGroup, ThreadStack
from ..model.text_format import clock, duration


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}es" if word.endswith("s") else f"{n} {word}s"


def pid_list(pids: Sequence[int]) -> str:
    return ("PID " if len(pids) == 1 else "PIDs ") + ", ".join(str(p) for p in pids)


def format_frame(frame: Frame, show_locals: bool = True) -> list[str]:
    if frame.native:
        where = f'  File "{frame.file}", line {frame.line}' if frame.line else f'  File "{frame.file}"'
        return [f"{where}, in {frame.function} (native)"]
    lines = [f'  File "{frame.file}", line {frame.line}, in {frame.function}']
    if frame.code:
        lines.append(f"    {frame.code}")
    if show_locals and frame.locals:
        for name, value in frame.locals.items():
            lines.append(f"      {name} = {value}")
    return lines


def format_traceback(frames: Sequence[Frame], show_locals: bool = True, departs_at: str = "") -> list[str]:
    """Outermost first, as Python prints a traceback (the model keeps py-spy's innermost-first order).
    The frame where an odd group leaves the majority gets a marker at the end of its line."""
    lines = ["Traceback (most recent call last):"]
    marked = False
    for frame in reversed(frames):
        frame_lines = format_frame(frame, show_locals)
        if departs_at and not marked and frame_label(frame) == departs_at:
            frame_lines[0] += "   <-- departs from the majority here"
            marked = True
        lines.extend(frame_lines)
    return lines


def format_kernel_thread(thread: ThreadStack) -> list[str]:
    parts = [f"state {thread.kernel_state or '?'}"]
    if thread.kernel_wchan:
        parts.append(f"wchan {thread.kernel_wchan}")
    if thread.kernel_syscall:
        parts.append(f"syscall {thread.kernel_syscall}")
    lines = ["Kernel view (no Python stack): " + ", ".join(parts)]
    lines.extend(f"  {line}" for line in thread.kernel_stack)
    return lines


def _threads_by_member(capture: StackCapture) -> dict[tuple[int, int], ThreadStack]:
    return {(t.pid, t.tid): t for p in capture.processes for t in p.threads}


def group_header(number: int, group: StackGroup, threads: Sequence[ThreadStack]) -> list[str]:
    head = (
        f"[{number}] {_plural(len(group.members), 'thread')} in {_plural(len(group.pids), 'process')}: "
        f"{pid_list(group.pids)}"
    )
    if group.odd_one_out:
        head += "  << ODD ONE OUT"
    lines = [head]
    if group.odd_one_out and group.departs_at:
        lines.append(f"    departs from the majority at: {group.departs_at}")
    wait = f"    waits on: {group.wait_kind}"
    if group.wait_frame:
        wait += f" at {group.wait_frame}"
    lines.append(wait)
    statuses = Counter(t.status for t in threads)
    names = sorted({t.name for t in threads if t.name})
    detail = "    threads: " + ", ".join(f"{status} {n}" for status, n in sorted(statuses.items()))
    if names:
        detail += " (" + ", ".join(names[:4]) + (", ..." if len(names) > 4 else "") + ")"
    lines.append(detail)
    if group.unchanged_for_s is not None:
        lines.append(f"    unchanged for {duration(group.unchanged_for_s)} (same stack in the earlier capture)")
    return lines


def format_group(number: int, group: StackGroup, capture: StackCapture, show_locals: bool = True) -> list[str]:
    by_member = _threads_by_member(capture)
    threads = [by_member[m] for m in group.members if m in by_member]
    lines = group_header(number, group, threads)
    if group.frames:
        lines.extend(format_traceback(group.frames, show_locals, group.departs_at if group.odd_one_out else ""))
    elif threads:
        lines.extend(format_kernel_thread(threads[0]))
    return lines


def format_errors(processes: Sequence[ProcessStacks]) -> list[str]:
    lines = []
    for process in processes:
        if process.error is None:
            continue
        name = f" ({process.name})" if process.name else ""
        lines.append(f"PID {process.pid}{name}: {process.error.reason}")
        if process.error.hint:
            lines.append(f"    fix: {process.error.hint}")
        if process.threads:
            lines.append(f"    shown from the kernel's view ({_plural(len(process.threads), 'thread')})")
    return lines


def summary_lines(capture: StackCapture) -> list[str]:
    threads = sum(len(p.threads) for p in capture.processes)
    sources = Counter(p.source for p in capture.processes if p.threads)
    when = clock(capture.taken_at)
    head = (
        f"Stacks of {_plural(len(capture.pids), 'process')} ({_plural(threads, 'thread')}) at {when}, "
        f"in {duration(capture.duration_ms / 1000)}"
    )
    if sources:
        head += ": " + ", ".join(f"{n} by {src}" for src, n in sorted(sources.items()))
    lines = [head, f"{_plural(len(capture.groups), 'distinct stack')}"]
    for group in capture.groups:
        if group.odd_one_out:
            lines.append(f"Odd one out: {pid_list(group.pids)} departs at {group.departs_at} ({group.wait_kind})")
    return lines


def render_capture(capture: StackCapture, show_locals: bool = True) -> str:
    """The whole capture as text: summary, notes, per-process problems, then every group."""
    lines = summary_lines(capture)
    for note in capture.notes:
        lines.append(f"note: {note}")
    errors = format_errors(capture.processes)
    if errors:
        lines.append("")
        lines.append("Problems:")
        lines.extend(f"  {line}" for line in errors)
    for number, group in enumerate(capture.groups, 1):
        lines.append("")
        lines.extend(format_group(number, group, capture, show_locals))
    return "\n".join(lines) + "\n"

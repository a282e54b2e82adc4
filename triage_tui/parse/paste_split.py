"""A mixed paste (an issue body, a chat message) → its parts, each recognised by its content.

`split_paste` finds the parts line by line (ps, free, /proc/PID/status, nvidia-smi, py-spy text or JSON,
faulthandler, gdb, kernel lines, curl, a log tail, a traceback); every other line is kept as "text" (prose),
with its line numbers, so the used / ignored accounting can say what each line was read as.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

from . import curl_text, dmesg, faulthandler, free, gdb_text, kernel_stack, log_text, nvidia_smi, ps, pyspy_text, pyspy_top
from . import interrupted_traceback, system_text
from .paste_lines import FENCE, PROMPT, is_heading, unwrap
from .signal_lexicon import matches_any

_STATUS_KEY = re.compile(r"^[A-Za-z_()]{1,40}:\s")


@dataclass(frozen=True)
class PastePart:
    kind: str  # ps | free | proc-status | nvidia-smi | nvidia-smi-q | nvidia-smi-dmon | gpu-csv | vmstat | ss | py-spy
    #            | py-spy-json | faulthandler | gdb | pystack | kernel-stack | py-spy-top
    #            | kernel | curl | traceback | log | text | command
    first_line: int  # 1-based, inclusive
    last_line: int
    text: str
    used: bool = False
    used_as: str = ""  # what it became: "9 processes", "system memory", ...
    note: str = ""  # why it was ignored, or what failed


def _run(lines: list[str], i: int, keep: Callable[[str], bool], blank_ok: bool = False) -> int:
    j = i + 1
    while j < len(lines):
        line = lines[j]
        if not line.strip():
            nxt = next((k for k in range(j, len(lines)) if lines[k].strip()), None)
            if blank_ok and nxt is not None and keep(lines[nxt]) and not PROMPT.match(lines[nxt]):
                j = nxt
                continue
            break
        if FENCE.match(line) or (PROMPT.match(line) and not is_heading(line)) or not keep(line):
            break
        j += 1
    return j


def _nvsmi(lines: list[str], i: int) -> Optional[int]:
    window = "\n".join(lines[i:i + 3])
    if lines[i].lstrip().startswith(("+-", "| NVIDIA-SMI")) and "NVIDIA-SMI" in window:
        return _run(lines, i, lambda s: s.lstrip().startswith(("|", "+")), blank_ok=True)
    return None


def _json(lines: list[str], i: int) -> Optional[int]:
    if not lines[i].lstrip().startswith(("[", "{")):
        return None
    # a bounded window (never the whole rest of the paste for each line that starts with a bracket)
    rest = "\n".join(lines[i:i + 20_000])[:2_000_000]
    if '"frames"' not in rest[:200_000]:
        return None
    try:
        obj, end = json.JSONDecoder().raw_decode(rest.lstrip())
    except (ValueError, RecursionError):
        return None
    blob = json.dumps(obj)[:5000]
    if '"frames"' not in blob or ("thread_id" not in blob and "thread_name" not in blob):
        return None
    consumed = rest[: len(rest) - len(rest.lstrip()) + end]
    return i + consumed.count("\n") + 1


def _starts(lines: list[str], i: int, bullets: Optional[list[int]] = None) -> Optional[tuple[str, int]]:
    """The kind of part that starts at line i and the line after it, or None. `bullets` (one item, kept by the
    caller across lines): the end of the last run of `* ` lines found to be a Markdown list, not `curl -v`; a line
    inside it is the same list's (its run ends there too, and a part of an all-bullet run is all bullets), so it
    is not walked again: 5,000 bullets were 12.5 million line checks (a fuzzed paste took 19 s)."""
    line = lines[i]
    s = line.strip()
    end = _nvsmi(lines, i)
    if end:
        return "nvidia-smi", end
    if system_text.is_query_start(line):
        return "nvidia-smi-q", _run(lines, i, lambda t: t.startswith((" ", "\t", "=")) or bool(system_text._Q_GPU.match(t.strip()))
                                    or ":" in t, blank_ok=True)
    if system_text.DMON_HEADER.match(s):
        return "nvidia-smi-dmon", _run(lines, i, lambda t: t.strip().startswith("#") or t.strip()[:1].isdigit())
    if system_text.VMSTAT_HEADER.match(line) or s.startswith("procs ---"):
        return "vmstat", _run(lines, i, lambda t: bool(system_text.VMSTAT_HEADER.match(t)) or t.split()[:1] != []
                              and t.split()[0].isdecimal())
    if system_text.is_socket_line(line) or s.startswith(("State ", "Netid ", "Proto Recv-Q", "Active Internet")):
        return "ss", _run(lines, i, lambda t: system_text.is_socket_line(t) or t.lstrip().startswith(("State ", "Proto ")))
    if nvidia_smi.is_query_gpu_header(line):
        return "gpu-csv", _run(lines, i, lambda t: "," in t)
    if ps.is_ps_header(line):
        return "ps", _run(lines, i, lambda t: bool(t.split()) and not ps.is_ps_header(t))
    if free.is_free_header(line):
        return "free", _run(lines, i, lambda t: t.strip().split(":")[0] in ("Mem", "Swap", "-/+ buffers/cache", "Total", "Low", "High"))
    if s.startswith(("Name:", "Umask:", "State:")) and any(x.startswith("State:") for x in lines[i:i + 6]):
        return "proc-status", _run(lines, i, lambda t: bool(_STATUS_KEY.match(t)))
    if pyspy_text.PROCESS.match(s) or pyspy_text.THREAD.match(s):
        return "py-spy", _run(lines, i, lambda t: t.startswith((" ", "\t", "Process ", "Thread ", "Python v")), blank_ok=True)
    if faulthandler.THREAD.match(s) or s.startswith("Fatal Python error") or faulthandler.TIMEOUT.match(s) \
            or faulthandler.STACK.match(s):
        return "faulthandler", _run(lines, i, _faulthandler_like, blank_ok=True)
    if gdb_text.GDB_THREAD.match(s) or (gdb_text.GDB_FRAME.match(s) and s.startswith("#0 ")) or s == gdb_text.PY_BT \
            or gdb_text.BARE_FRAME_0.match(s):
        return "gdb", _run(lines, i, _gdb_like, blank_ok=True)
    if pyspy_top.is_start(s):
        return "py-spy-top", _run(lines, i, pyspy_top.is_line, blank_ok=True)
    if kernel_stack.LINE.match(s):
        return "kernel-stack", _run(lines, i, lambda t: bool(kernel_stack.LINE.match(t.strip())))
    if gdb_text.MODULE_FRAME.match(s):
        return "gdb", _run(lines, i, lambda t: bool(gdb_text.MODULE_FRAME.match(t.strip())))
    if gdb_text.PYSTACK_THREAD.match(s):
        return "pystack", _run(lines, i, lambda t: t.startswith((" ", "\t")) or bool(gdb_text.PYSTACK_THREAD.match(t.strip())),
                               blank_ok=True)
    end = _json(lines, i)
    if end:
        return "py-spy-json", end
    if s.startswith(("Traceback (most recent call last)", "^CTraceback (most recent call last)")):
        return "traceback", _run(lines, i, _traceback_like, blank_ok=True)
    # IPython / Jupyter: `KeyboardInterrupt        Traceback (most recent call last)`, `Cell In[3], line 1`, then
    # `File ~/x.py:118, in f(a)` frames with numbered source lines and a `--> 118` arrow
    if interrupted_traceback.IPY_HEADER.match(s) or interrupted_traceback.IPY_FRAME.match(s):
        return "traceback", _run(lines, i, _ipython_like, blank_ok=True)
    if _kernel_like(line):
        return "kernel", _run(lines, i, _kernel_like)
    if curl_text.CURL_LINE.match(line):
        if bullets is not None and i < bullets[0]:
            return None
        end = _run(lines, i, lambda t: bool(curl_text.CURL_LINE.match(t)) or t.lstrip().startswith(("{", '"')))
        # a Markdown bullet list (`* the requests never received a response`) is prose, not `curl -v`: curl's own
        # `* ` lines say what the connection did, and its `>` / `<` lines carry the request and the answer
        if all(ln.lstrip().startswith("* ") for ln in lines[i:end] if ln.strip()) and \
                not any(_CURL_INFO.match(ln) for ln in lines[i:end]):
            if bullets is not None:
                bullets[0] = end
            return None
        return "curl", end
    if log_text.LOG_LINE.match(line) or matches_any(line):
        return "log", _run(lines, i, lambda t: not _other_start(lines, t))
    return None


def _faulthandler_like(line: str) -> bool:
    s = line.strip()
    return line.startswith((" ", "\t", "Thread 0x", "Current thread", "Fatal Python", "Extension modules", "Stack (")) \
        or bool(faulthandler.FRAME.match(s)) or bool(faulthandler.TIMEOUT.match(s))


def _gdb_like(line: str) -> bool:
    s = line.strip()
    return (s.startswith(("#", "Thread ", "File ", "[")) or line.startswith((" ", "\t")) or s == gdb_text.PY_BT
            or bool(gdb_text.GDB_THREAD.match(s)) or bool(gdb_text.BARE_FRAME.match(s)))


def _traceback_like(line: str) -> bool:
    s = line.strip()
    return line.startswith((" ", "\t")) or s.startswith(("During handling", "The above exception", "Traceback (most")) or \
        bool(_EXCEPTION.match(s))


_EXCEPTION = re.compile(r"^[\w.]{1,120}(?:Error|Exception|Interrupt|Exit|Warning)\b")


# what curl -v says on its `* ` lines (connecting, TLS, the connection's end), never a bullet's words
_CURL_INFO = re.compile(r"^\s*\* {1,4}(?:Trying |Connected to |connect to |Closing connection|Failed to connect|Connection #"
                        r"|Established connection|Host |Uses proxy|Could not resolve|TLS|SSL|ALPN|Server certificate"
                        r"|Mark bundle|Request completely sent|using HTTP|Immediate connect fail|After \d|Recv failure"
                        r"|Operation timed out|Expire in|Connection timed out|  Trying )")


def _ipython_like(line: str) -> bool:
    s = line.strip()
    return _traceback_like(line) or s.startswith(("-----", "Cell In[", "[...]")) or bool(
        interrupted_traceback.IPY_FRAME.match(s) or interrupted_traceback.IPY_SOURCE.match(s)
        or interrupted_traceback.IPY_HEADER.match(s))


# dmesg, dmesg -T, journalctl -k, and dmesg -H / --reltime (`[  +0.000316] msg`, a minute's first line `[Jan21 10:00]`)
_KERNEL_STAMP = re.compile(r"^\s*\[\s*\+?\d+\.\d+\]|^\s*\[[A-Z][a-z]{2} ?\d{1,2} \d\d:\d\d\]|^\s*\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\]|\bkernel: ")


def _kernel_like(line: str) -> bool:
    return bool(_KERNEL_STAMP.search(line)) or dmesg.parse_kernel_line(line) is not None or "invoked oom-killer" in line


def _other_start(lines: list[str], line: str) -> bool:
    """True when `line` would start a part other than a log (so a log run stops there)."""
    found = _starts([line], 0)
    return found is not None and found[0] != "log"


def split_paste(text: str) -> list[PastePart]:
    """The parts of a paste, in order, recognised by their content (not by a header or a fence): a
    Markdown quote and chat prefixes are removed first, line numbers kept. Prose and unknown lines come
    back as kind "text"."""
    lines = [unwrap(ln) for ln in text.replace("\r\n", "\n").split("\n")]
    parts: list[PastePart] = []
    loose: list[int] = []

    def flush() -> None:
        if loose:
            parts.append(PastePart("text", loose[0] + 1, loose[-1] + 1, "\n".join(lines[k] for k in loose)))
            loose.clear()

    i = 0
    bullets = [0]  # see _starts
    ps_header: Optional[str] = None  # the header a `ps ... | grep` command line printed before its pipe removed it
    while i < len(lines):
        line = lines[i]
        if not line.strip() or FENCE.match(line):
            flush()
            i += 1
            continue
        m = PROMPT.match(line)
        if m and is_heading(line):
            m = None
        if m:
            flush()
            parts.append(PastePart("command", i + 1, i + 1, m.group(1).strip()))
            ps_header = ps.header_from_command(m.group(1).strip())
            i += 1
            continue
        if ps_header is not None and not ps.is_ps_header(line) and ps.is_headerless_row(ps_header, line):
            flush()
            j = i + 1
            while j < len(lines) and lines[j].strip() and ps.is_headerless_row(ps_header, lines[j]):
                j += 1
            parts.append(PastePart("ps", i + 1, j, "\n".join([ps_header] + lines[i:j]), note="header from the command line"))
            ps_header = None
            i = j
            continue
        ps_header = None
        found = _starts(lines, i, bullets)
        if found is None:
            loose.append(i)
            i += 1
            continue
        flush()
        kind, end = found
        parts.append(PastePart(kind, i + 1, end, "\n".join(lines[i:end])))
        i = end
    flush()
    return parts

"""Agentless stack capture: py-spy on the node driven by one plain shell script, parsed and grouped here.

Replaces `ssh node 'for p in ...; do timeout 10 py-spy dump --json --pid $p; done'` and reading the dumps
by eye. The script (one round trip) runs `py-spy dump --json` for every PID, `concurrency` at a time, each
under the node's `timeout`; it reads each PID's /proc/PID/stat before and after, and each thread's state,
wait channel and syscall (the kernel's view: what a non-Python process gets, and what py-spy's threads
get beside their frames, as a local capture does). Outputs come back cut by a random marker.

Nothing the user typed reaches the script: PIDs are ints, the py-spy path is shlex-quoted, the options are
flags chosen here. A process the capture left stopped (`T` after, not stopped before, same start time) is
resumed by `resume_command` in a follow-up call: SIGCONT is the only signal triage ever sends.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import paramiko

from ..collect.stacks import _KILLED, _STOPPED, _not_python, explain_pyspy_failure
from ..collect.thread_states import syscall_name
from ..diagnose.stack_groups import with_groups
from ..model.stacks import ProcessStacks, StackCapture, ThreadStack
from ..model.unavailable import Unavailable
from ..parse.pyspy_json import parse_pyspy_json
from .base import StackOptions
from .ssh_agent_bundle import PYSPY_NAME, TRUSTED_FN, ProbeResult, pyspy_upload_plan
from .ssh_agentless import Sections, new_marker, split_sections
from .ssh_connect import Connection, SshError
from .ssh_exec import bounded_shell, run_command

TIMED_OUT_CODES = ("124", "137")  # coreutils timeout: TERM worked (124), or it needed -k's KILL (137)
# the node's py-spy only when the privilege rule allows it (ssh_agent_bundle's `trusted`); else ours is uploaded
PROBE_SCRIPT = (TRUSTED_FN + 'echo "arch=$(uname -m)"; s=$(command -v py-spy 2>/dev/null); '
                'if [ -n "$s" ]; then t=$(trusted "$s") && echo "pyspy=$t" || echo "skipped=$s"; fi')
# Holds the uploaded py-spy for the connection's life: makes the private 0700 directory, writes py-spy (the
# first N bytes on stdin) into it, prints the directory, then waits for EOF on stdin. EOF comes when we close
# the channel, or when the client dies or the network drops (sshd closes the pipe): the EXIT trap then
# removes the directory, so nothing stays on the node however triage ends. The traps are set before mktemp and
# mktemp itself ignores the signals (as the agent's bootstrap holds them around its mkdtemp): a HUP between mktemp
# and the traps, or one that killed mktemp after it made the directory, left it on the node (30 of 300 HUPs at
# random moments of the start did; tests/realproc/test_holder_signals.py).
def holder_command(size: int) -> str:
    return (
        "umask 077; d=; trap '[ -z \"$d\" ] || rm -rf -- \"$d\"' EXIT; trap 'exit 129' HUP TERM INT PIPE; "
        "d=$(trap '' HUP TERM INT PIPE; mktemp -d \"${TMPDIR:-/tmp}/triage-pyspy.XXXXXXXX\") || exit 3; "
        f"head -c {int(size)} > \"$d/{PYSPY_NAME}\" && chmod 700 \"$d/{PYSPY_NAME}\" && echo \"dir=$d\" || exit 4; "
        "cat > /dev/null"
    )


# One PID's job: state before, then py-spy unless the process is gone, a zombie, or already stopped
# (somebody else's stop: not attached to). $o is the script's private output directory.
_JOB = (
    "job() { p=$1; s=$(cat /proc/$p/stat 2>/dev/null); printf '%s\\n' \"$s\" > \"$o/$p.before\"; "
    "case \"${s##*) }\" in ''|T*|t*|Z*) echo skip > \"$o/$p.rc\"; return;; esac; "
    "RUST_BACKTRACE=0 $to \"$spy\" dump --json --pid \"$p\" $flags > \"$o/$p.out\" 2> \"$o/$p.err\" < /dev/null; "
    "echo $? > \"$o/$p.rc\"; }"
)
# Every thread as `TID|WCHAN|SYSCALL|STAT` (stat printed last: only the comm inside it could hold a '|'), read in
# the order thread_states.kernel_thread reads them: stat, then syscall, then wchan. A task that has just gone to
# sleep can still be on its run queue (Linux 6.12's delayed dequeue), where wchan prints "0"; the syscall read
# returns only once it is off it, so the wchan read after it names the wait.
_TASKS = (
    "tasks() { for t in /proc/$1/task/[0-9]*; do [ -d \"$t\" ] || continue; st=$(cat \"$t/stat\" 2>/dev/null); "
    "sc=$(cat \"$t/syscall\" 2>/dev/null); "
    "printf '%s|%s|%s|%s\\n' \"${t##*/}\" \"$(cat \"$t/wchan\" 2>/dev/null)\" \"$sc\" \"$st\"; done; }"
)


def pyspy_plan(probe_text: str) -> tuple[ProbeResult, Optional[str], str]:
    """From PROBE_SCRIPT's output: (what the node has, local binary to upload or None, a note).
    The same decision as agent mode's (ssh_agent_bundle.pyspy_upload_plan): the node's own py-spy wins."""
    fields = dict(line.partition("=")[::2] for line in probe_text.splitlines() if "=" in line)
    probe = ProbeResult(fields.get("arch", "").strip(), fields.get("pyspy", "").strip())
    binary, note = pyspy_upload_plan(probe)
    return probe, binary, note


def capture_script(marker: str, pids: Sequence[int], options: StackOptions, pyspy: str) -> str:
    """The whole capture as one `sh -s` script; its output is cut with ssh_agentless.split_sections."""
    flags = " ".join(f for f, on in (("--native", options.native), ("--locals", options.locals)) if on)
    pids = [int(p) for p in pids]
    width = max(1, int(options.concurrency))

    def section(name: str) -> str:
        return f"echo; echo {marker}{name}; "

    lines = [
        # the traps come before the directory and mktemp ignores the signals, as in holder_command
        "umask 077; o=; trap '[ -z \"$o\" ] || rm -rf -- \"$o\"' EXIT; trap 'exit 143' TERM INT HUP; "
        "o=$(trap '' HUP TERM INT; mktemp -d \"${TMPDIR:-/tmp}/triage-stacks.XXXXXXXX\") || exit 3",
        # the EXIT trap does not run when the node's `timeout` has to KILL the script: a watcher in its own
        # session (out of timeout's process group; not our child, so `wait` below does not wait for it)
        "if command -v setsid >/dev/null 2>&1; then ( setsid sh -c 'while kill -0 \"$1\" 2>/dev/null; do sleep 1; done; "
        "rm -rf -- \"$2\"' _ $$ \"$o\" </dev/null >/dev/null 2>&1 & ); fi",
        f"spy={shlex.quote(pyspy)}; flags='{flags}'",
        f"if command -v timeout >/dev/null 2>&1; then to='timeout -k 1 {float(options.timeout_s):g}'; else to=''; fi",
        _JOB,
        _TASKS,
    ]
    for start in range(0, len(pids), width):  # `concurrency` py-spys at a time
        lines.append(" ".join(f"job {p} &" for p in pids[start:start + width]) + " wait")
    # a py-spy killed while attached can leave its SIGSTOP pending a moment: let it land before "after"
    lines.append(f"if cat \"$o\"/*.rc 2>/dev/null | grep -qxE '{'|'.join(TIMED_OUT_CODES)}'; then sleep 0.2; fi")
    for p in pids:
        lines.append(section(f"before {p}") + f"cat \"$o/{p}.before\"")
        lines.append(section(f"rc {p}") + f"cat \"$o/{p}.rc\" 2>/dev/null")
        lines.append(section(f"out {p}") + f"cat \"$o/{p}.out\" 2>/dev/null")
        lines.append(section(f"err {p}") + f"head -c 4096 \"$o/{p}.err\" 2>/dev/null")
        lines.append(section(f"after {p}") + f"cat /proc/{p}/stat 2>/dev/null")
        lines.append(section(f"tasks {p}") + f"tasks {p}")
    lines.append(section("end") + "true")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class ProcStat:
    """The fields of /proc/PID/stat the capture needs; state "" when the process was not there."""

    state: str = ""
    name: str = ""
    ppid: int = 0
    start_ticks: int = 0


def parse_stat(text: str) -> ProcStat:
    head, _, rest = text.strip().rpartition(")")
    fields = rest.split()
    if not head or len(fields) < 20:
        return ProcStat()
    return ProcStat(state=fields[0], name=head.partition("(")[2], ppid=int(fields[1]) if fields[1].isdecimal() else 0,
                    start_ticks=int(fields[19]) if fields[19].isdecimal() else 0)


def parse_tasks(pid: int, text: str, machine: Optional[str] = None) -> tuple[ThreadStack, ...]:
    threads = []
    for line in text.splitlines():
        parts = line.split("|", 3)
        if len(parts) != 4 or not parts[0].isdecimal():
            continue
        stat = parse_stat(parts[3])
        if not stat.state:
            continue  # the thread ended between the listing and the read
        wchan = parts[1].strip()
        threads.append(ThreadStack(
            pid=pid, tid=int(parts[0]), name=stat.name, status="active" if stat.state == "R" else "idle",
            kernel_state=stat.state, kernel_wchan="" if wchan == "0" else wchan,
            kernel_syscall=syscall_name(parts[2], machine),
        ))
    return tuple(threads)


def _with_kernel(process: ProcessStacks, kernel: Sequence[ThreadStack]) -> ProcessStacks:
    by_tid = {t.tid: t for t in kernel}
    threads = []
    for thread in process.threads:
        seen = by_tid.get(thread.tid)
        if seen is not None:
            thread = dataclasses.replace(thread, kernel_state=seen.kernel_state, kernel_wchan=seen.kernel_wchan,
                                         kernel_syscall=seen.kernel_syscall)
        threads.append(thread)
    return dataclasses.replace(process, threads=tuple(threads))


def _failure(pid: int, code: str, err: str, after: ProcStat, options: StackOptions) -> Unavailable:
    lowered = err.lower()
    if code in TIMED_OUT_CODES:
        return Unavailable(f"{_KILLED} {options.timeout_s:g} s and was killed",
                           "the process may be in uninterruptible I/O (D) or under another tracer; the kernel view "
                           "is shown; a larger --timeout may help")
    if code in ("126", "127"):
        return Unavailable(f"cannot run py-spy on the node: {err.strip()[:160] or 'exit ' + code}", "")
    if "permission denied" in lowered or "operation not permitted" in lowered:
        # collect.stacks.permission_problem reads THIS machine's uid and Yama setting: not the node's
        return Unavailable(f"permission denied on the node: py-spy could not attach to PID {pid}",
                           "ssh as the process's user or as root; check kernel.yama.ptrace_scope and, in a "
                           "container, CAP_SYS_PTRACE")
    number = int(code) if code.lstrip("-").isdecimal() else -1
    return explain_pyspy_failure(pid, number, err, after.state not in ("", "Z"))


def process_result(pid: int, sections: Sections, options: StackOptions, machine: Optional[str] = None) -> ProcessStacks:
    """One PID's sections as ProcessStacks: py-spy's threads, or the kernel's view and why."""
    before, after = parse_stat(sections.get(f"before {pid}")), parse_stat(sections.get(f"after {pid}"))
    name, ppid = before.name or after.name, before.ppid or after.ppid
    kernel = parse_tasks(pid, sections.get(f"tasks {pid}"), machine)
    code = sections.get(f"rc {pid}").strip()

    def kernel_view(error: Optional[Unavailable]) -> ProcessStacks:
        return ProcessStacks(pid=pid, name=name, source="kernel", threads=kernel, error=error, ppid=ppid)

    if not before.state:
        return ProcessStacks(pid=pid, source="kernel", error=Unavailable("no such process", "it has exited"))
    if before.state == "Z":
        return kernel_view(Unavailable("zombie: the process has exited and its parent has not reaped it", "look at its parent"))
    if before.state in _STOPPED:
        return kernel_view(Unavailable(
            f"stopped (state {before.state}) before the capture: not attached to, and not resumed (not triage's doing)",
            f"if nothing (a debugger, a job control stop) should hold it: kill -CONT {pid}"))
    err = sections.get(f"err {pid}")
    if code != "0":
        if _not_python(err):
            return kernel_view(Unavailable("not a Python process: py-spy could not read it", "the kernel's view is shown"))
        return kernel_view(_failure(pid, code, err, after, options))
    try:
        parsed = _parse(sections.get(f"out {pid}"), pid, name)
    except ValueError as exc:
        return kernel_view(Unavailable(f"unexpected py-spy output: {exc}", ""))
    own = next((p for p in parsed if p.pid == pid), ProcessStacks(pid=pid, name=name))
    return dataclasses.replace(_with_kernel(own, kernel), ppid=ppid)


def _parse(text: str, pid: int, name: str) -> tuple[ProcessStacks, ...]:
    # no source lines: the frames' files are on the node (frames still group and classify by name/file/line)
    return parse_pyspy_json(text, None, pid=pid, name=name)


def stopped_by_capture(pids: Sequence[int], sections: Sections) -> dict[int, int]:
    """{pid: start ticks} of processes not stopped before and stopped (`T`) after: the capture's doing.
    The start time ties the PID to the same process (a reused PID is left alone)."""
    found = {}
    for pid in pids:
        before, after = parse_stat(sections.get(f"before {pid}")), parse_stat(sections.get(f"after {pid}"))
        if before.state and before.state not in _STOPPED and after.state == "T" and after.start_ticks == before.start_ticks:
            found[int(pid)] = after.start_ticks
    return found


def resume_command(stopped: dict[int, int]) -> str:
    """SIGCONT each PID that is still stopped and still the same process; prints `resumed PID` per signal."""
    return "; ".join(
        f"s=$(cat /proc/{int(p)}/stat 2>/dev/null); r=${{s##*) }}; set -- $r; "
        f"[ \"$1\" = T ] && [ \"${{20}}\" = {int(t)} ] && kill -CONT {int(p)} && echo resumed {int(p)}"
        for p, t in stopped.items()
    ) + "; true"


def resumed_pids(output: str) -> set[int]:
    return {int(m) for m in re.findall(r"^resumed (\d+)$", output, re.MULTILINE)}


Count = Callable[[int, int], None]  # (bytes sent, bytes received) of one command, for the host's totals


@dataclass
class PyspyOnNode:
    """The py-spy agentless captures run on one connection: the node's own, or ours in a private dir.

    Replaces `scp py-spy node:/tmp/` (and forgetting it there): the upload goes into a 0700 `mktemp -d`
    directory that `remove` deletes when the connection closes."""

    path: str = ""  # "" when there is none: every capture says why
    private_dir: str = ""
    note: str = ""
    arch: str = ""  # the node's `uname -m`: its syscall numbers
    holder: Optional[Any] = None  # the channel whose shell keeps (and at EOF removes) the private directory

    @classmethod
    def prepare(cls, conn: Connection, timeout_s: float, count: Count, stale_dirs: Sequence[str] = ()) -> PyspyOnNode:
        removal = "".join(f"rm -rf -- {shlex.quote(d)}; " for d in stale_dirs)  # our own earlier uploads
        probe = run_command(conn, removal + PROBE_SCRIPT, timeout_s)
        count(probe.bytes_sent, probe.bytes_received)
        found, binary, note = pyspy_plan(probe.stdout.decode(errors="replace"))
        if found.node_pyspy:
            return cls(path=found.node_pyspy, note=note, arch=found.arch)
        if binary is None:
            return cls(note=note, arch=found.arch)
        with open(binary, "rb") as f:
            data = f.read()
        try:
            channel = conn.transport.open_session(timeout=timeout_s)
            channel.settimeout(timeout_s + 60)
            channel.exec_command(holder_command(len(data)))
            channel.sendall(data)
            line = b""
            while not line.endswith(b"\n"):
                chunk = channel.recv(4096)
                if not chunk:
                    break
                line += chunk
        except (OSError, EOFError, paramiko.SSHException) as exc:
            return cls(arch=found.arch, note=f"uploading py-spy failed: {type(exc).__name__}: {exc}")
        count(len(data), len(line))
        text = line.decode(errors="replace").strip()
        if not text.startswith("dir=/"):
            channel.close()
            return cls(arch=found.arch, note=f"uploading py-spy failed: {text[:160] or 'the holder exited'}")
        private_dir = text[len("dir="):]
        return cls(path=f"{private_dir}/{PYSPY_NAME}", private_dir=private_dir, note=note, arch=found.arch,
                   holder=channel)

    def capture(self, conn: Connection, pids: Sequence[int], options: StackOptions, timeout_s: float,
                count: Count) -> StackCapture:
        """One script for every PID, then (only when needed) one `kill -CONT` command. SshError when the
        connection fails; any process that fails costs its row only."""
        taken_at, started = time.time(), time.monotonic()
        unique = tuple(dict.fromkeys(int(p) for p in pids))
        if not self.path:
            kernel_only = tuple(ProcessStacks(pid=p, source="kernel", error=Unavailable(
                f"agentless mode: {self.note}", "install py-spy on the node (pip install py-spy)")) for p in unique)
            return StackCapture(taken_at=taken_at, pids=unique, processes=kernel_only, notes=(f"agentless mode: {self.note}",))
        batches = -(-len(unique) // max(1, options.concurrency))
        budget = (float(options.timeout_s) + 2) * max(1, batches) + timeout_s
        marker = new_marker()
        result = run_command(conn, bounded_shell(budget - 2), budget,
                             stdin=capture_script(marker, unique, options, self.path).encode())
        count(result.bytes_sent, result.bytes_received)
        sections = split_sections(result.stdout.decode(errors="replace"), marker)
        if "end" not in sections.parts:
            raise SshError(f"the stack capture script on {conn.endpoint.alias} did not finish: "
                           f"{result.stderr.decode(errors='replace').strip()[:160] or 'exit ' + str(result.exit_status)}")
        rows = [_row(pid, sections, options, self.arch or None) for pid in unique]
        resumed: set[int] = set()
        stopped = stopped_by_capture(unique, sections)
        if stopped:
            follow = run_command(conn, resume_command(stopped), timeout_s)
            count(follow.bytes_sent, follow.bytes_received)
            resumed = resumed_pids(follow.stdout.decode(errors="replace"))
        notes = [f"agentless mode: {self.note}"]
        final = []
        for row in rows:
            if row.pid in resumed:
                row = dataclasses.replace(row, resumed=True)
                notes.append(f"resumed PID {row.pid} with SIGCONT: the capture had left it stopped (T)")
            final.append(row)
        capture = StackCapture(taken_at=taken_at, pids=unique, processes=tuple(final), notes=tuple(notes),
                               duration_ms=round((time.monotonic() - started) * 1000, 1))
        return with_groups(capture)

    def remove(self, conn: Connection, timeout_s: float, count: Count) -> None:
        """Delete the uploaded py-spy's directory (nothing of triage's stays on the node): closing the holder's
        channel makes it remove the directory; the rm covers a holder that is already gone."""
        if self.holder is not None:
            self.holder.close()
        if not self.private_dir:
            return
        try:
            done = run_command(conn, f"rm -rf -- {shlex.quote(self.private_dir)}", timeout_s)
            count(done.bytes_sent, done.bytes_received)
        except SshError:
            pass


def _row(pid: int, sections: Sections, options: StackOptions, machine: Optional[str]) -> ProcessStacks:
    try:
        return process_result(pid, sections, options, machine)
    except Exception as exc:  # a parsing bug must cost one row, not the capture (and never a traceback)
        return ProcessStacks(pid=pid, error=Unavailable(f"internal error: {type(exc).__name__}: {exc}", ""))

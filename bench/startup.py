"""Start-up: to triage's first frame, and to every pane holding data, against htop and glances.

Each tool starts in a fresh 200x50 tmux pane; each of its frames is timed by the first capture-pane poll
that shows that frame's markers (one start times all of a tool's frames, in order). Three figures per frame:

- **from exec**: the pane's command takes a timestamp (`date +%s.%N`) just before it execs the tool, so
  this is what a user who has a terminal open sees: the tool's own start-up, not tmux's;
- **from tmux**: from the `tmux new-session` call (the pane's own start-up in it: a new session, a shell;
  on the benchmark's own tmux server, `-L`, kept up for the run by one idle session, so that no other user's
  `tmux kill-server` ends a run);
- **CPU**: the tool's utime+stime (`/proc/PID/stat`, 10 ms ticks) when the frame was seen.

For triage three frames: the early frame (commands/early_frame.py: the header line and "starting the
interface", written before textual is imported; timed apart, and its n is the starts whose polls caught
it before textual painted over it), textual's first frame (the
layout: the first and last pane's titles), and every pane holding data, on the demo's incident started beforehand (the launcher's row in
Processes, the RSS sum in Memory, a log line, a ranked hypothesis, the GPU line, the Stacks pane's text).
Python's bytecode caches are warm (a round first, not counted, with PYTHONDONTWRITEBYTECODE unset for the
tool), as on an installed triage. The tools are interleaved, one start at a time, and the load average is
taken before each round. Polling capture-pane (every 10 ms) costs a few ms, the same for every tool.

    python3 bench/startup.py                      # BENCH_REPEATS=8 rounds
    BENCH_BEFORE=/path/to/older/checkout python3 bench/startup.py   # that code's triage too, interleaved
    BENCH_BEFORE=/one/checkout:/another python3 bench/startup.py  # several, each labelled by its directory
    BENCH_PLAIN=0 python3 bench/startup.py   # without the row on a Python without this environment's .pth files
"""

from __future__ import annotations

import os
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from typing import Optional

from common import CLK_TCK, REPO, Spread, TmuxPane, have, load_line, spread
from overhead import GLANCES

sys.path.insert(0, str(REPO))

from triage_tui.demo.incident import DemoIncident, DemoInfo  # noqa: E402

# The tool's own bytecode caches written and read, as on an install; the stamp is the last thing before exec.
STAMPED = "unset PYTHONDONTWRITEBYTECODE; {cd}date +%s.%N > {stamp}; exec {command}"

Frame = tuple[str, Callable[[DemoInfo], Sequence[str]]]  # (row name, the markers that say it is on screen)
Tool = tuple[str, Callable[[DemoInfo], str], list[Frame], Callable[[], bool]]  # (code dir, command, frames, here?)


def _triage(code: str, label: str) -> Tool:
    py = sys.executable

    def command(demo: DemoInfo) -> str:
        return (f"{py} -m triage_tui {demo.launcher_pid} --log {demo.log_path} --port {demo.port} "
                "--interval 1 --no-record --no-auto-stacks")

    frames: list[Frame] = []
    if os.path.exists(os.path.join(code, "triage_tui", "commands", "early_frame.py")):
        frames.append((f"triage{label}: early frame (before textual)", lambda demo: ("starting the interface",)))
    frames += [
        (f"triage{label}: first frame (textual's)", lambda demo: ("1 Processes", "6 Hypotheses")),
        (f"triage{label}: every pane with data",
         lambda demo: ("▾ python3", "RSS sum", "Load weight", "1. ", "GPUs:", "No stack capture")),
    ]
    return (code, command, frames, lambda: True)


def _triage_plain(code: str) -> Tool:
    """triage on a Python without this environment's .pth files (an editable install's finder, the sandbox's
    certifi hook: ~30 ms of `site` here, which an installed triage on a plain Python does not pay): started
    with -S, site-packages put on sys.path by hand (site's own few ms are not paid either)."""
    code_tool = _triage(code, " (python -S: no .pth files)")
    site_packages = sysconfig.get_paths()["purelib"]
    plain = (f"{sys.executable} -S -c \"import runpy, sys; sys.path[:0] = ['', '{site_packages}']; "
             "runpy.run_module('triage_tui', run_name='__main__', alter_sys=True)\" ")

    def command(demo: DemoInfo) -> str:
        return plain + (f"{demo.launcher_pid} --log {demo.log_path} --port {demo.port} "
                        "--interval 1 --no-record --no-auto-stacks")

    return (code, command, code_tool[2], code_tool[3])


def tools() -> list[Tool]:
    out = [_triage(str(REPO), "")]
    if os.environ.get("BENCH_PLAIN", "1") == "1":
        out.append(_triage_plain(str(REPO)))
    befores = [d for d in os.environ.get("BENCH_BEFORE", "").split(":") if d]
    for before in befores:
        out.append(_triage(before, f" before ({os.path.basename(before.rstrip('/'))})" if len(befores) > 1 else " before"))
    out += [
        ("", lambda demo: "htop -d 10", [("htop", lambda demo: ("Load average", "PID"))], lambda: have("htop")),
        ("", lambda demo: f"{GLANCES} -t 1", [("glances", lambda demo: ("CPU", "MEM", "PID"))],
         lambda: os.path.exists(GLANCES)),
    ]
    return out


def _cpu_ms(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            rest = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(rest[11]) + int(rest[12])) * 1000 / CLK_TCK


Figures = dict[str, dict[str, list[float]]]  # frame -> clock -> ms


def start_once(code: str, command: str, frames: Sequence[tuple[str, Sequence[str]]], tag: str, workdir: str,
               limit_s: float = 30.0, poll_s: float = 0.01) -> dict[str, dict[str, float]]:
    """One start in a fresh pane; for each frame, the first poll that shows its markers: ms from exec, ms
    from tmux, CPU ms then. A frame that is painted over before a poll sees it is left out (not waited for)."""
    stamp = os.path.join(workdir, f"stamp-{tag}")
    cd = f"cd {code} && " if code else ""
    seen: dict[str, dict[str, float]] = {}
    t0 = time.time()
    pane = TmuxPane(f"bench-start-{os.getpid()}-{tag}", STAMPED.format(cd=cd, stamp=stamp, command=command),
                    socket=f"bench-start-{os.getpid()}")
    try:
        last = frames[-1][0]
        while last not in seen and time.time() - t0 < limit_s:
            screen = pane.capture()
            now = time.time()
            for name, markers in frames:
                if name not in seen and all(m in screen for m in markers):
                    seen[name] = {"tmux": (now - t0) * 1000, "cpu": _cpu_ms(pane.pid)}  # the shell exec'd the tool
            time.sleep(poll_s)
        if last not in seen:
            raise TimeoutError(f"{tag}: {frames[-1][1]} not on screen after {limit_s} s:\n{pane.capture()}")
        with open(stamp) as f:
            exec_at = float(f.read().strip())
    finally:
        pane.close()
        try:
            os.unlink(stamp)
        except OSError:
            pass
    for figures in seen.values():
        figures["exec"] = figures["tmux"] - (exec_at - t0) * 1000
    return seen


def run(repeats: int = 8) -> tuple[list[tuple[str, dict[str, Optional[Spread]]]], list[str]]:
    os.chdir(REPO)
    results: Figures = {}
    loads: list[str] = []
    # a session kept for the whole run: the benchmark's own tmux server stays up between starts (a server
    # exiting with its last session races the next start's new-session: "server exited unexpectedly")
    with closing(TmuxPane("keeper", "sleep 86400", socket=f"bench-start-{os.getpid()}")), \
            DemoIncident(workers=8, weights_mb=16) as demo, tempfile.TemporaryDirectory(prefix="bench-start-") as workdir:
        info = demo.info
        assert info is not None
        for i in range(repeats + 1):  # the first round warms the bytecode caches and is not counted
            if i > 0:
                loads.append(f"{os.getloadavg()[0]:.2f}")
            for k, (code, command, frames, available) in enumerate(tools()):
                if not available():
                    continue
                took = start_once(code, command(info), [(name, markers(info)) for name, markers in frames],
                                  f"{i}-{k}", workdir)
                if i > 0:
                    for name, figures in took.items():
                        for clock, ms in figures.items():
                            results.setdefault(name, {}).setdefault(clock, []).append(ms)
    names = [name for _, _, frames, _ in tools() for name, _ in frames]
    rows = [(name, {clock: spread(results[name][clock]) if name in results else None
                    for clock in ("exec", "tmux", "cpu")}) for name in names]
    return rows, loads


def table(rows: list[tuple[str, dict[str, Optional[Spread]]]]) -> str:
    lines = ["| tool | ms from exec (median, range) | ms from tmux new-session | CPU ms at the frame |",
             "|---|---|---|---|"]
    for name, clocks in rows:
        cells = [s.fmt(" ms", 0) if s else "not installed" for s in clocks.values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print("before: " + load_line())
    rows, loads = run(int(os.environ.get("BENCH_REPEATS", "8")))
    print(table(rows))
    print("load average (1 min) at each round: " + ", ".join(loads))
    print("after: " + load_line())

"""Hostile names, log lines, frames and hypothesis text through the app: it survives every one, the
screen it paints holds none of their control characters raw, and each is shown literally."""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console

from tests.hostile_strings import HOSTILE, raw_controls
from tests.ui.conftest import fixture_incident, make_app, settle
from triage_tui.demo.fixture import LAUNCHER, build_snapshots
from triage_tui.model.mappings import FileMapping
from triage_tui.model.snapshot import LogLine
from triage_tui.model.stacks import Frame, ProcessStacks, StackCapture, StackGroup, ThreadStack
from triage_tui.render.plain_text import visible

BASE_PID = 60000
ZOMBIES = 6  # the first hostile names die unreaped: the engine quotes them in its evidence (zombie, crashed-worker)


def hostile_snapshots() -> list:
    """The fixture's raw snapshots with one process per hostile string (as its name and command line,
    some as a wait channel) and every hostile string as a log line: the real engine judges them, so
    the hypotheses' evidence quotes the hostile names as the engine writes them."""
    snaps = build_snapshots(8)
    out = []
    for snap in snaps:
        template = snap.processes[1]
        extra = tuple(dataclasses.replace(template, pid=BASE_PID + i, ppid=LAUNCHER, name=s, cmdline=(s, "--flag", s),
                                          wchan=s if i % 2 else template.wchan, state="Z" if i < ZOMBIES else template.state)
                      for i, s in enumerate(HOSTILE))
        tail = snap.logs[0]
        lines = tail.lines + tuple(LogLine(s, snap.taken_at, "error" if i % 3 == 0 else "info") for i, s in enumerate(HOSTILE))
        logs = (dataclasses.replace(tail, lines=lines, partial="[/] no newline \x1b[2J"),)
        out.append(dataclasses.replace(snap, processes=snap.processes + extra, logs=logs))
    return out


def hostile_capture(pids, taken_at: float) -> StackCapture:
    frames = tuple(Frame(s, s + ".py", i + 1, code=s) for i, s in enumerate(HOSTILE[:12]))
    pids = tuple(pids)[:4] or (LAUNCHER,)
    threads = tuple(ProcessStacks(pid=p, name=HOSTILE[0], threads=(ThreadStack(p, p, HOSTILE[1], "idle", frames, "collective"),))
                    for p in pids)
    group = StackGroup("g1", frames, tuple((p, p) for p in pids), pids, "collective", HOSTILE[2], odd_one_out=True,
                       departs_at=HOSTILE[3])
    return StackCapture(taken_at=taken_at, pids=pids, processes=threads, groups=(group,), duration_ms=5.0,
                        notes=tuple(HOSTILE[8:12]))


def screen_text(app) -> str:
    """What the app paints, as the terminal would receive it, less the styles."""
    console = Console(file=io.StringIO(), record=True, width=app.size.width, height=app.size.height,
                      force_terminal=True, color_system=None, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text(styles=False)


async def test_hostile_text_is_shown_literally_and_never_raw(tmp_path) -> None:
    incident = fixture_incident(hostile_snapshots(), preload=4)
    incident._changelog += tuple(f"12:00:00 {s}" for s in HOSTILE[:8])  # the changelog quotes the target's text too
    incident.host.capture_stacks = lambda pids, options=None: hostile_capture(pids or (LAUNCHER,), incident.host.clock())
    # the engine quotes a hostile name in its evidence: this is the text the Hypotheses pane must show literally
    evidence = [t for h in incident.latest.diagnosis.hypotheses for t in h.for_ if any(s in t for s in HOSTILE[:ZOMBIES])]
    assert evidence
    app = make_app(incident, export_dir=str(tmp_path))
    seen: list[str] = []
    async with app.run_test(size=(220, 80)) as pilot:
        await settle(pilot)
        seen.append(screen_text(app))
        await pilot.press("S")
        await settle(pilot)
        for key in ("1", "4", "5", "6"):
            await pilot.press(key, "z")
            await settle(pilot)
            if key == "6":  # every hypothesis opened: its evidence lines are the target's text too
                tree = app.query_one("#hyp-tree")
                for node in tree.root.children:
                    node.expand()
                await settle(pilot)
            seen.append(screen_text(app))
            await pilot.press("z")
            await settle(pilot)
        assert app.is_running  # survived: `[/]` in a name or a log line used to end the app
        # literally: the processes table holds each name as the text it is, with its controls escaped
        table = app.query_one("#proc-table")
        names = {str(table.get_row(str(BASE_PID + i))[1]).strip(" ●▸▾") for i in range(len(HOSTILE))}
        assert names == {visible(s) for s in HOSTILE}
        log_pane = app.query_one("LogPane")
        assert [visible(s) for s in HOSTILE] == [visible(x) for x in log_pane.shown_lines[-len(HOSTILE):]]
    painted = "\n".join(seen)
    assert raw_controls(painted) == []
    for s in ("[/]", "[bold red]X[/]", "w[bold]x", "[anonymous]", "\\x1b[2J", "\\x1b]0;pwned title\\x07", "bidi\\u202eevil"):
        assert s in painted, s


async def test_mappings_of_anonymous_heap_and_stack_show_their_names(app, incident) -> None:
    def mappings_by_file(pid, targets):
        return tuple(FileMapping(path, 1, 2**20, 2**20, 0, 2**20, 0, 0) for path in ("[anonymous]", "[heap]", "[stack]", "[/]"))

    incident.host.mappings_by_file = mappings_by_file
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("j", "m")
        await settle(pilot)
        table = app.screen.query_one("#map-table")
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == ["[anonymous]", "[heap]", "[stack]", "[/]"]
        text = screen_text(app)
        assert "[anonymous]" in text and "[heap]" in text and "[stack]" in text


HOSTILE_CHILD = r"""
import ctypes, sys, time
name = sys.argv[1].encode("utf-8", "surrogateescape")[:15]
ctypes.CDLL(None).prctl(15, ctypes.c_char_p(name), 0, 0, 0)   # PR_SET_NAME: the name the kernel shows
print("READY", flush=True)
time.sleep(600)
"""


async def test_real_processes_with_hostile_names_and_a_hostile_log(tmp_path) -> None:
    """Real processes named with every hostile string (as argv[0] and as the kernel's comm), and a real
    log file holding every hostile string as a line, watched by the app on this machine: it survives,
    paints no control character raw, and shows the names and lines as text (never markup)."""
    import subprocess
    import sys

    from triage_tui.host.base import CollectOptions
    from triage_tui.host.local import local_host
    from triage_tui.incident import Incident
    from triage_tui.ui.app import TriageApp

    strings = [s for s in HOSTILE if "\x00" not in s]  # argv cannot hold NUL (the kernel's limit)
    log = tmp_path / "hostile.log"
    log.write_bytes(b"".join(s.encode("utf-8", "surrogateescape") + b"\n" for s in strings))
    launcher = subprocess.Popen([sys.executable, "-c", "import sys, time; print('READY', flush=True); time.sleep(600)"],
                                stdout=subprocess.PIPE, text=True)
    children: list[subprocess.Popen] = []
    host = local_host()  # the composition a local run uses: logs followed
    try:
        assert launcher.stdout is not None and launcher.stdout.readline().strip() == "READY"
        for s in strings:
            child = subprocess.Popen([s, "-c", HOSTILE_CHILD, s], executable=sys.executable, stdout=subprocess.PIPE,
                                     text=True, errors="surrogateescape")
            assert child.stdout is not None and child.stdout.readline().strip() == "READY"
            children.append(child)
        pids = [str(launcher.pid)] + [str(c.pid) for c in children]
        incident = Incident(host, host.resolve(pids), CollectOptions(logs=(str(log),), discover_logs=False))
        app = TriageApp(incident, interval=3600, live=True, export_dir=str(tmp_path))
        seen: list[str] = []
        async with app.run_test(size=(220, 80)) as pilot:
            await settle(pilot)
            while incident.latest is None:
                await pilot.pause()
            await pilot.press("r")
            await settle(pilot)
            seen.append(screen_text(app))
            for key in ("1", "4"):
                await pilot.press(key, "z")
                await settle(pilot)
                seen.append(screen_text(app))
                await pilot.press("z")
                await settle(pilot)
            assert app.is_running  # a `[/]` in a name or a log line used to end the app
            latest = incident.latest
            assert latest is not None
            names = {p.pid: p.name for p in latest.snapshot.processes}
            table = app.query_one("#proc-table")
            for child in children:  # each row's name is the name as read, with its controls escaped
                assert str(table.get_row(str(child.pid))[1]).strip(" ●▸▾") == visible(names[child.pid])
            assert [t.path for t in latest.snapshot.logs] == [str(log)], latest.snapshot.logs
            tail = latest.snapshot.logs[0]
            shown = app.query_one("LogPane").shown_lines
            assert [visible(line.text) for line in tail.lines] == [visible(x) for x in shown[-len(tail.lines):]]
        painted = "\n".join(seen)
        assert raw_controls(painted) == []
        for s in ("[/]", "[bold red]X[/]", "w[bold]x", "[anonymous]", "\\x1b[2J", "bidi\\u202eevil"):
            assert s in painted, s
    finally:
        host.close()
        for p in [launcher, *children]:
            p.kill()
            p.wait()

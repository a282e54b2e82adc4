"""A tree of 2,000 processes: every row is listed and the app still answers keys between refreshes."""

from __future__ import annotations

import dataclasses

from conftest import fixture_incident, make_app, settle

from triage_tui.demo.fixture import build_snapshots
from triage_tui.model.snapshot import ProcessInfo
from triage_tui.ui.messages import MomentReady
from triage_tui.ui.panes.memory import MemoryPane
from triage_tui.ui.panes.processes import ProcessesPane


def big_snapshots(count: int, n: int = 2000):
    # one launcher, 40 children, each with 49 grandchildren: 1 + 40 + 1960 = 2001 rows, trimmed to n
    procs = [ProcessInfo(pid=1000, ppid=1, name="launcher", state="S", cpu_percent=0.0, cpu_time_s=1.0, rss_bytes=1 << 20)]
    pid = 1001
    for c in range(40):
        parent = pid
        procs.append(ProcessInfo(pid=parent, ppid=1000, name=f"child{c}", state="S", cpu_percent=0.0, cpu_time_s=1.0))
        pid += 1
        for g in range(49):
            procs.append(ProcessInfo(pid=pid, ppid=parent, name=f"worker{c}-{g}", state="D" if g == 7 else "S",
                                     cpu_percent=1.0, cpu_time_s=float(g), rss_bytes=g << 20))
            pid += 1
    procs = procs[:n]
    return [dataclasses.replace(s, processes=tuple(procs)) for s in build_snapshots(count)]


async def test_two_thousand_processes_render_and_keys_still_answer(tmp_path):
    incident = fixture_incident(big_snapshots(4), preload=1)
    app = make_app(incident, str(tmp_path))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        procs = app.query_one(ProcessesPane)
        assert len(procs.rows) == 2000 and procs.table.row_count == 2000
        # a refresh starts; the key pressed right after it is handled (press returns once it was processed)
        await pilot.press("r", "3")
        assert app.focused_pane() is app.query_one(MemoryPane)
        await pilot.press("1", "slash", "w", "o", "r", "k", "e", "r", "3", "9", "minus", "4", "7")
        assert [r.process.pid for r in procs.rows] == [1000, 2951, 2951 + 1 + 47]
        await settle(pilot)
        assert incident.host.ticks >= 3  # the preload, the mount's, the r's


async def test_a_row_that_changed_off_screen_shows_its_new_value_when_scrolled_to(tmp_path):
    # The table repaints for changed cells only when one is on screen; a row already painted once,
    # changed while scrolled away, must not come back from the render caches with its old value.
    before = big_snapshots(1)[0]
    far = before.processes[1500]
    changed = tuple(dataclasses.replace(p, rss_bytes=777 << 20) if p.pid == far.pid else p for p in before.processes)
    # the same moment again but for that one row: nothing on screen changes
    incident = fixture_incident([before, dataclasses.replace(before, processes=changed)], preload=1)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        table = app.query_one(ProcessesPane).table
        row = next(i for i, r in enumerate(app.query_one(ProcessesPane).rows) if r.process.pid == far.pid)
        table.move_cursor(row=row, animate=False)  # paint the far row once, then go back to the top
        await pilot.pause()
        assert "777M" not in app.export_screenshot()
        table.move_cursor(row=0, animate=False)
        await pilot.pause()
        app.post_message(MomentReady(incident.tick()))
        await pilot.pause()
        table.move_cursor(row=row, animate=False)
        await pilot.pause()
        assert "777M" in app.export_screenshot()


async def test_a_refresh_of_unchanged_rows_touches_no_row_and_no_cell(tmp_path, monkeypatch):
    """Rows that are last refresh's objects (a process that did not run: collect/processes.py) are not
    laid out into tree rows again and write no cell but idle-for; the one row that changed is shown."""
    from triage_tui.ui.panes import processes as processes_pane

    before = big_snapshots(1)[0]
    later = dataclasses.replace(before, taken_at=before.taken_at + 1)  # the same row objects, a second later
    moved = before.processes[3]
    changed = tuple(dataclasses.replace(p, rss_bytes=555 << 20) if p is moved else p for p in before.processes)
    incident = fixture_incident([before, later, dataclasses.replace(later, taken_at=later.taken_at + 1,
                                                                    processes=changed)], preload=1)
    app = make_app(incident, str(tmp_path), live=False)
    built: list[int] = []
    real_rows = processes_pane.tree_rows
    monkeypatch.setattr(processes_pane, "tree_rows", lambda procs, *a: built.append(len(procs)) or real_rows(procs, *a))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        pane = app.query_one(ProcessesPane)
        cells: list[list] = []
        real_update = pane.table.update_cells
        monkeypatch.setattr(pane.table, "update_cells", lambda changes: cells.append(changes) or real_update(changes))
        built.clear()
        app.post_message(MomentReady(incident.tick()))  # the same rows
        await pilot.pause()
        # no tree rebuilt; the only cells written are idle-for's (a second went by: 0s -> 1s)
        assert built == [] and {column for c in cells for _, _, column, _, _ in c} <= {"idle"}
        app.post_message(MomentReady(incident.tick()))  # one row changed
        await pilot.pause()
        assert built == [2000]
        written = [(key, column, value) for _, key, column, value, _ in cells[-1] if column != "idle"]
        assert written == [(str(moved.pid), "RSS", "555M")]
        assert "555M" in app.export_screenshot()

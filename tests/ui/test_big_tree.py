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


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


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


async def test_a_refresh_of_unchanged_rows_makes_only_the_rows_on_screen_and_paints_nothing(tmp_path, monkeypatch):
    """Rows that are last refresh's objects (a process that did not run: collect/process_samples.py) are not
    laid out into tree rows again; the table asks for the cells of the rows on screen only, and when none
    of them changed (idle-for reads "10m" on both refreshes) it repaints nothing and nothing is laid out.
    The one row that changed later is repainted, alone, and shown."""
    from textual.widget import Widget

    from triage_tui.ui.panes import processes as processes_pane

    before = big_snapshots(1)[0]
    at = [dataclasses.replace(before, taken_at=before.taken_at + dt) for dt in (600, 605)]  # the same row objects
    moved = before.processes[3]
    changed = tuple(dataclasses.replace(p, rss_bytes=555 << 20) if p is moved else p for p in before.processes)
    incident = fixture_incident([before, *at, dataclasses.replace(at[-1], taken_at=at[-1].taken_at + 1,
                                                                  processes=changed)], preload=2)
    app = make_app(incident, str(tmp_path), live=False)
    built: list[int] = []
    real_rows = processes_pane.tree_rows
    monkeypatch.setattr(processes_pane, "tree_rows", lambda procs, *a: built.append(len(procs)) or real_rows(procs, *a))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        pane = app.query_one(ProcessesPane)
        table = pane.table
        assert "10m" in app.export_screenshot() and "555M" not in app.export_screenshot()
        asked: list[int] = []
        real_cells_at = pane._cells_at
        monkeypatch.setattr(pane, "_cells_at", lambda i: asked.append(i) or real_cells_at(i))
        refreshed: list[tuple[str, bool]] = []
        real_refresh = Widget.refresh

        painted: list = []  # the regions the table asked to repaint

        def refresh(self, *regions, **kw):
            refreshed.append((type(self).__name__, bool(kw.get("layout"))))
            if self is table:
                painted.extend(regions)
            return real_refresh(self, *regions, **kw)

        monkeypatch.setattr(Widget, "refresh", refresh)
        built.clear()
        made = table.rows_made
        app.post_message(MomentReady(incident.tick()))  # the same rows, five seconds later
        await pilot.pause()
        assert built == []  # no tree rebuilt
        on_screen = table.scrollable_content_region.height - 1
        assert asked and len(set(asked)) <= on_screen < 2000  # cells made for the rows on screen, not 2,000
        assert table.rows_made == made  # no row line rendered again
        assert ("ProcessTable", False) not in refreshed and not any(layout for _, layout in refreshed)
        app.post_message(MomentReady(incident.tick()))  # one row changed
        await pilot.pause()
        assert built == []  # swapped into its row in place: the same processes, parents and order
        assert table.rows_made == made + 1  # that row's line, and no other
        # and of that line only its RSS cell goes to the terminal (the other cells came from its kept cells)
        from triage_tui.ui.panes.process_table import COLUMN_WIDTHS, PAD
        assert [(r.width, r.height) for r in painted] == [(COLUMN_WIDTHS["RSS"] + 2 * PAD, 1)]
        assert "555M" in app.export_screenshot()


async def test_scrolling_the_table_shows_the_rows_scrolled_to(tmp_path):
    """Only the rows on screen are made: after a jump to row 1,500 the screen shows that row and the ones
    around it, with their own cells, and no longer the first rows; the header stays."""
    snaps = big_snapshots(1)
    incident = fixture_incident(snaps, preload=1)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        pane = app.query_one(ProcessesPane)
        first, far = pane.rows[1].process, pane.rows[1500].process
        shown = screen_text(app)
        assert f" {first.name} " in shown and f" {far.name} " not in shown
        pane.table.move_cursor(row=1500)
        await pilot.pause()
        shown = screen_text(app)
        assert f" {far.name} " in shown and f" {far.pid} " in shown and f" {pane.rows[1499].process.name} " in shown
        assert f" {first.name} " not in shown
        assert " PID " in shown and " wchan" in shown  # the header line stays on top
        assert pane.selected_pid() == far.pid
        await pilot.press("down", "down")
        assert pane.selected_pid() == pane.rows[1502].process.pid
        await pilot.press("home")
        assert pane.selected_pid() == pane.rows[0].process.pid
        shown = screen_text(app)
        assert f" {first.name} " in shown


async def test_a_process_that_moves_to_another_parent_rebuilds_the_tree_and_shows_it_there(tmp_path):
    """A row swapped in place must not keep a stale place in the tree: a new parent lays the tree out again."""
    from triage_tui.ui.panes import processes as processes_pane

    before = big_snapshots(1, n=200)[0]
    moved = before.processes[60]  # a grandchild of child1
    root = before.processes[0]
    changed = tuple(dataclasses.replace(p, ppid=root.pid) if p is moved else p for p in before.processes)
    later = dataclasses.replace(before, taken_at=before.taken_at + 1, processes=changed)
    incident = fixture_incident([before, later], preload=1)
    app = make_app(incident, str(tmp_path), live=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        pane = app.query_one(ProcessesPane)
        depth = {r.process.pid: r.depth for r in pane.rows}
        assert depth[moved.pid] == 2
        built: list[int] = []
        real_rows = processes_pane.tree_rows
        processes_pane.tree_rows = lambda procs, *a: built.append(len(procs)) or real_rows(procs, *a)
        try:
            app.post_message(MomentReady(incident.tick()))
            await pilot.pause()
        finally:
            processes_pane.tree_rows = real_rows
        assert built == [200]
        row = next(r for r in pane.rows if r.process.pid == moved.pid)
        assert row.depth == 1 and row.process.ppid == root.pid

"""SVG snapshots of the app on the fixture host, diagnosed by the real engine (regenerate: pytest --snapshot-update)."""

from __future__ import annotations

from conftest import fixture_incident, make_app, settle

from triage_tui.demo.fixture import build_snapshots


def demo_app(tmp_path):
    return make_app(fixture_incident(build_snapshots(80), preload=60), str(tmp_path))


def test_80x24_processes_first(snap_compare, tmp_path):
    """80x24: the header (gpu-node-07, :8000 → 46294, kernel stale), the Processes pane with the launcher
    and all eight sglang::scheduler_TP workers in state "S idle" at 0.0% CPU, RSS 396G next to PSS 52G,
    their GPU index, and the top of the GPUs pane; the footer with the keys."""
    assert snap_compare(demo_app(tmp_path), terminal_size=(80, 24), run_before=settle)


def test_80x24_zoomed_memory(snap_compare, tmp_path):
    """80x24, `3` then `z`: the Memory pane alone: RSS sum 3.1T, PSS sum 421G, system available 415G,
    and the sentence saying the RSS sum overstates memory (shared pages) with those figures."""
    assert snap_compare(demo_app(tmp_path), terminal_size=(80, 24), press=["3", "z"], run_before=settle)


def test_80x24_help(snap_compare, tmp_path):
    """80x24, `?`: the key help over the app, listing 1-6, z, /, space, s, S, m, p, r, [ ], End, e, q."""
    assert snap_compare(demo_app(tmp_path), terminal_size=(80, 24), press=["question_mark"], run_before=settle)


def test_160x50_all_panes(snap_compare, tmp_path):
    """160x50: all six panes at once: Processes (10 rows, wchan futex_wait_queue), GPUs (8 rows at
    76017/97887MiB, 0%, PIDs 46433..46440), Memory with the RSS-overstates sentence, Log with "last line
    … ago" and the 100% progress bar line, Stacks saying how to capture (s/S), Hypotheses as the real engine ranks
    them: the wait for a rank that never arrived likely first (0.75), the other causes, oom ruled out among
    them, and the RSS-illusion finding after every cause."""
    assert snap_compare(demo_app(tmp_path), terminal_size=(160, 50), run_before=settle)


def test_160x50_after_S_and_rewind(snap_compare, tmp_path):
    """160x50, `S` then `[`: the Stacks pane shows 7 threads in all_reduce and the ODD ONE OUT (46438)
    departing at init_draft_worker; the capture made the app refresh at once (the engine names PID 46438 in
    the latest moment), and `[` goes back to the moment before it: the LOOKING BACK banner above the panes."""

    async def before(pilot):
        await settle(pilot)
        await pilot.press("S")
        await settle(pilot)
        await pilot.press("left_square_bracket")
        await pilot.pause()

    assert snap_compare(demo_app(tmp_path), terminal_size=(160, 50), run_before=before)

"""Looking back through a long watch whose quiet past is thinned (#18): the keys land on Moments kept, the
recent past is there refresh by refresh, and the Moment on screen stays while refreshes go on."""

from __future__ import annotations

from conftest import fixture_incident, make_app, settle

from triage_tui.demo.fixture import build_snapshots
from triage_tui.model.timeline_thinning import RECENT_S, thinned


async def test_looking_back_through_a_thinned_timeline(tmp_path):
    snaps = build_snapshots(760, interval_s=1.0)  # a 1 s watch of the reference incident, over 12 minutes
    incident = fixture_incident(snaps, preload=660)
    app = make_app(incident, str(tmp_path))
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        latest = incident.latest.taken_at
        assert len(app.timeline) < 500  # thinned: 661 refreshes made
        assert [m.taken_at for m in app.timeline] == [m.taken_at for m in incident.timeline]  # as the Incident thins
        await pilot.press("left_square_bracket")
        assert app.shown_moment().taken_at == latest - 1  # the recent past refresh by refresh
        for _ in range(6):
            await pilot.press("left_curly_bracket")
        shown = app.shown_moment()  # six minutes back: the quiet past, one Moment per 30 s
        assert latest - 360 - 30 < shown.taken_at <= latest - 360
        await pilot.press("left_square_bracket")
        assert 0 < shown.taken_at - app.shown_moment().taken_at <= 30
        await pilot.press("right_square_bracket")
        assert app.shown_moment() is shown  # and the next one kept is the one stepped from
        await pilot.press("end")
        # a Moment of the recent past looked at stays on screen while it ages past the thinning
        for _ in range(5):
            await pilot.press("left_curly_bracket")
        looked = app.shown_moment()
        assert looked.taken_at == latest - RECENT_S
        for _ in range(40):
            await pilot.press("r")
            await settle(pilot)
        assert incident.latest.taken_at == latest + 40
        assert app.shown_moment() is looked
        assert looked not in thinned(app.timeline)  # kept only because it is on screen
        await pilot.press("end")
        assert app.shown_moment() is incident.latest

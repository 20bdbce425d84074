"""The live socket for /lrps/, /events/ and the shared chrome (dashboard.md L1, L2, M1, M2, D1)."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from diego_web.asgi import application

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

ORIGIN = [(b"origin", b"http://127.0.0.1:8000")]


async def test_lrps_view_snapshot_has_table_metrics_and_feed() -> None:
    """L1: the lrps view's first frame carries its own sections, out of band by id."""
    from auction.services.scenarios import scenario_load

    await sync_to_async(scenario_load)("seed-example")
    communicator = WebsocketCommunicator(application, "/ws/live/?view=lrps", headers=ORIGIN)
    connected, _ = await communicator.connect()
    assert connected
    snapshot = await communicator.receive_from(timeout=5)
    for element in ('id="sim-clock"', 'id="lrp-table"', 'id="domains"', 'id="convergence"', 'id="tasks"',
                    'id="metrics"', 'id="feed-incoming"', 'id="next-pass"'):
        assert element in snapshot, element
    assert 'data-instance="lrp-a.0"' in snapshot
    await communicator.disconnect()


async def test_a_crash_reaches_the_lrps_page_and_the_feed() -> None:
    """D1/D2, M2: an audited chaos action (an event) pushes the table, metrics and feed."""
    from auction.models import ActualLRP
    from auction.services.cells import actual_lrp_crash
    from auction.services.clock import clock_reset
    from auction.services.scenarios import scenario_load
    from auction.services.sim import auctioneer_run

    await sync_to_async(scenario_load)("seed-example")
    await sync_to_async(clock_reset)(0.0, paused=True)
    await sync_to_async(auctioneer_run)()
    communicator = WebsocketCommunicator(application, "/ws/live/?view=lrps", headers=ORIGIN)
    await communicator.connect()
    await communicator.receive_from(timeout=5)
    await sync_to_async(ActualLRP.objects.filter(desired_id="lrp-a", index=0).update)(crash_count=2)
    await sync_to_async(actual_lrp_crash)("lrp-a", 0, source="dashboard")
    frames = ""
    while 'data-type="actual_lrp_crash"' not in frames or "in 30 s, next pass" not in frames:
        frames += await communicator.receive_from(timeout=5)
    # The row of lrp-a: in the whole table (the group's first frame) or alone (D1, L3).
    assert '<tbody id="lrp-lrp-a"' in frames and 'id="metrics"' in frames
    await communicator.disconnect()


async def test_grid_and_events_views_get_feed_frames_but_not_the_lrps_table() -> None:
    """L2: a view joins only what it shows."""
    from auction.services.events import event_record

    for view in ("grid", "events"):
        communicator = WebsocketCommunicator(application, f"/ws/live/?view={view}", headers=ORIGIN)
        await communicator.connect()
        snapshot = await communicator.receive_from(timeout=5)
        assert 'id="lrp-table"' not in snapshot and 'id="feed-incoming"' in snapshot
        await sync_to_async(event_record)("clock_pause", 1.0, key="clock", source="dashboard")
        frame = await communicator.receive_from(timeout=5)
        assert 'data-type="clock_pause"' in frame and 'id="lrp-table"' not in frame
        await communicator.disconnect()


def _history(frames: str) -> str:
    start = frames.rfind('<div id="events-history"')
    return frames[start:frames.index("</div>", start)] if start >= 0 else ""


async def test_the_event_history_is_live_per_filter_and_page() -> None:
    """dashboard.md M2: an open /events/ page gets its own filtered page of the history
    re-rendered when events are stored; a view with other filters is not given rows it
    would not show."""
    from auction.services.events import event_record

    chaos = WebsocketCommunicator(application, "/ws/live/?view=events&type=chaos", headers=ORIGIN)
    control = WebsocketCommunicator(application, "/ws/live/?view=events&type=control", headers=ORIGIN)
    for communicator in (chaos, control):
        assert (await communicator.connect())[0]
        snapshot = await communicator.receive_from(timeout=5)
        assert 'No events.' in _history(snapshot)
    await sync_to_async(event_record)("clock_pause", 1.0, key="clock", source="dashboard")
    frames = ""
    while 'data-type="clock_pause"' not in _history(frames):
        frames += await communicator.receive_from(timeout=5)
    assert "(1 event)" in _history(frames)
    frames = ""
    while 'id="events-history"' not in frames:
        frames += await chaos.receive_from(timeout=5)
    assert "No events." in _history(frames) and "clock_pause" not in _history(frames)
    for communicator in (chaos, control):
        await communicator.disconnect()

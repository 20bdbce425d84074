"""The live socket (dashboard.md 10): snapshot first, frames from services, origin checked."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from diego_web.asgi import application

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

ORIGIN = [(b"origin", b"http://127.0.0.1:8000")]


async def test_snapshot_first_then_clock_frames() -> None:
    """L1: the first frame is a snapshot; a beat tick of a running clock then reaches the
    page's group (a tick that changes nothing sends nothing: L3)."""
    from auction.services.clock import clock_reset, clock_tick

    await sync_to_async(clock_reset)(0.0, paused=False)

    communicator = WebsocketCommunicator(application, "/ws/live/?view=grid", headers=ORIGIN)
    connected, _ = await communicator.connect()
    assert connected
    snapshot = await communicator.receive_from(timeout=5)
    assert 'id="sim-clock"' in snapshot and 'hx-swap-oob="true"' in snapshot
    await sync_to_async(clock_tick)()
    frame = await communicator.receive_from(timeout=5)
    assert 'id="sim-clock"' in frame and "data-sim-now" in frame
    await communicator.disconnect()


async def test_foreign_origin_is_refused() -> None:
    """L8: Origin is checked."""
    communicator = WebsocketCommunicator(
        application, "/ws/live/", headers=[(b"origin", b"http://evil.example")]
    )
    connected, _ = await communicator.connect()
    assert not connected


async def test_clock_control_publishes_after_commit() -> None:
    """Services publish after commit: pausing shows up as a paused clock frame."""
    from auction.services.clock import clock_pause

    communicator = WebsocketCommunicator(application, "/ws/live/", headers=ORIGIN)
    await communicator.connect()
    await communicator.receive_from(timeout=5)
    await sync_to_async(clock_pause)()
    frame = await communicator.receive_from(timeout=5)
    assert 'data-paused="true"' in frame and "paused" in frame
    await communicator.disconnect()


async def test_placements_reach_the_grid_as_cell_fragments() -> None:
    """dashboard.md L1/G2: an auction's commit sends the changed cells and the tray."""
    from auction.services.scenarios import scenario_load
    from auction.services.sim import auctioneer_run

    await sync_to_async(scenario_load)("seed-example")
    communicator = WebsocketCommunicator(application, "/ws/live/?view=grid", headers=ORIGIN)
    await communicator.connect()
    await communicator.receive_from(timeout=5)  # snapshot
    await sync_to_async(auctioneer_run)()
    # Marks left by the load may come first: read frames until the placed tray shows.
    frame = await communicator.receive_from(timeout=5)
    while "all work placed" not in frame:
        frame = await communicator.receive_from(timeout=5)
    assert 'data-instance="lrp-b.0"' in frame and 'data-state="CLAIMED"' in frame
    assert frame.count('hx-swap-oob="true"') >= 3
    await communicator.disconnect()


async def test_rep_starts_reach_the_grid() -> None:
    """dashboard.md G4: CLAIMED → RUNNING (a simulated rep's start) is pushed to the cell."""
    from auction.services.clock import clock_reset, clock_step
    from auction.services.scenarios import scenario_load
    from auction.services.sim import auctioneer_run, sim_advance

    await sync_to_async(scenario_load)("seed-example")
    await sync_to_async(clock_reset)(0.0, paused=True)
    await sync_to_async(auctioneer_run)()
    communicator = WebsocketCommunicator(application, "/ws/live/?view=grid", headers=ORIGIN)
    await communicator.connect()
    await communicator.receive_from(timeout=5)  # snapshot
    await sync_to_async(clock_step)(5.0)
    await sync_to_async(sim_advance)()
    # Marks left by the auction may render first (in their latest state at that tick).
    frame = await communicator.receive_from(timeout=5)
    while 'data-instance="lrp-b.0" data-state="RUNNING"' not in frame:
        frame = await communicator.receive_from(timeout=5)
    await communicator.disconnect()


async def test_unknown_socket_path_is_refused_at_the_handshake() -> None:
    """dashboard.md U5: /ws/nope/ is refused (the router alone raised: a 500)."""
    for path in ("/ws/nope/", "/ws/live/x", "/"):
        communicator = WebsocketCommunicator(application, path, headers=ORIGIN)
        connected, _ = await communicator.connect()
        assert not connected, path


async def test_unstorable_query_values_are_ignored_by_the_socket() -> None:
    """dashboard.md U5: a NUL or broken UTF-8 in the socket's query is dropped, not a crash."""
    communicator = WebsocketCommunicator(application, "/ws/live/?view=grid&zone=%00&mode=%ff",
                                         headers=ORIGIN)
    connected, _ = await communicator.connect()
    assert connected
    assert 'id="sim-clock"' in await communicator.receive_from(timeout=5)
    await communicator.disconnect()

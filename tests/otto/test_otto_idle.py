"""Waiting, not polling (otto.md 11; dashboard.md L9): the Otto processes sleep until an
arrival, a change of the clock or their next deadline, and beat's tick on a paused clock
does nothing. Nothing here is timed: a wake is observed as a tick that happened, idleness
as ticks that did not happen while the recheck was a minute away."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from otto_world import auction_of, submit

from auction.live.publish import clock_channel, sim_advanced, sim_channel
from auction.otto.lifecycle import wake_in
from auction.services.clock import clock_reset, clock_set_speed, clock_step
from auction.services.otto_runtime import (
    BOARD_FLUSH_S,
    Auctioneer,
    OrchestratorFleet,
    SimClockCache,
    clock_changes,
    clock_state_of,
)
from auction.sim.clock import ClockState

LONG = 60.0  # a recheck far beyond any test: only a message can wake the loop


# --- the timeout from the next deadline (pure) ------------------------------------------

def test_wake_in_is_the_wall_time_to_the_soonest_deadline_otto_md_11() -> None:
    assert wake_in(12.0, 10.0, 1.0, False, 5.0) == pytest.approx(2.0)
    assert wake_in(12.0, 10.0, 4.0, False, 5.0) == pytest.approx(0.5)  # 4x: a quarter of the wall time
    assert wake_in(12.0, 10.0, 0.25, False, 5.0) == 5.0  # 8 wall seconds away: the recheck first


def test_wake_in_is_zero_for_a_deadline_already_due_otto_md_11() -> None:
    assert wake_in(9.0, 10.0, 1.0, False, 5.0) == 0.0
    assert wake_in(10.0, 10.0, 1.0, False, 5.0) == 0.0


def test_wake_in_on_a_paused_clock_or_with_nothing_pending_is_the_recheck_otto_md_11() -> None:
    assert wake_in(12.0, 10.0, 1.0, True, 7.0) == 7.0  # a paused clock reaches no deadline
    assert wake_in(None, 10.0, 1.0, False, 7.0) == 7.0


def test_the_auctioneers_wait_follows_its_clock_and_what_is_pending_otto_md_11() -> None:
    auct = Auctioneer(layer=object(), recheck_s=5.0, paused_recheck_s=30.0)
    auct.clock.state = ClockState(100.0, time.time(), 2.0, False)
    auct.next_due = 103.0
    assert 1.4 < auct.wait_s() <= 1.5  # 3 sim seconds at 2x
    auct.next_due = None
    assert auct.wait_s() == 5.0
    auct.clock.state = ClockState(100.0, time.time(), 2.0, True)
    auct.next_due = 101.0
    assert auct.wait_s() == 30.0  # paused: only a message or the long recheck
    auct.touched = {"a-1"}
    auct.last_board = time.monotonic()
    assert auct.wait_s() <= BOARD_FLUSH_S  # the board's next flush
    auct.bids = [object()]  # type: ignore[list-item]
    assert auct.wait_s() == 0.0  # arrivals are recorded at once


def test_a_clock_message_carries_the_new_state_otto_md_11() -> None:
    state = clock_state_of(b'{"anchor_sim": 5.0, "anchor_wall": 1000.0, "speed": 3.0, "paused": false}')
    assert state == ClockState(5.0, 1000.0, 3.0, False)
    assert clock_state_of(b"{}") is None
    assert clock_state_of(b"not json") is None


# --- the real loops on the real Redis ------------------------------------------------------

async def _until(predicate: Any, timeout: float = 15.0, what: str = "") -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def _listeners(channel: str) -> int:
    """How many connections are subscribed to ``channel`` (PUBSUB NUMSUB)."""
    import redis.asyncio as aredis

    client = aredis.Redis.from_url(settings.REDIS_STATE_URL)
    try:
        [(_, count)] = await client.pubsub_numsub(channel)
        return int(count)
    finally:
        await client.aclose()


async def _subscribed(channel: str, before: int, timeout: float = 15.0) -> None:
    """Until a new listener has subscribed to ``channel``: a message published earlier
    would have reached nobody."""
    deadline = asyncio.get_running_loop().time() + timeout
    while await _listeners(channel) <= before:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"nobody subscribed to {channel}")
        await asyncio.sleep(0.02)


async def _stop(task: asyncio.Task[Any]) -> None:
    task.cancel()
    with contextlib.suppress(BaseException):
        await task


@contextlib.asynccontextmanager
async def _auctioneer() -> AsyncIterator[Auctioneer]:
    auct = Auctioneer(use_lock=False, recheck_s=LONG, paused_recheck_s=LONG)
    before = await _listeners(clock_channel())
    task = asyncio.create_task(auct.run())
    try:
        await asyncio.wait_for(auct.active.wait(), 20)
        await _until(lambda: auct.ticks >= 1, what="the first tick")
        await _subscribed(clock_channel(), before)
        yield auct
    finally:
        auct.stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 10)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("otto_bus")
async def test_an_idle_auctioneer_does_not_tick_otto_md_11() -> None:
    """A paused clock, nothing open, nothing arriving: no tick in a second (polling every
    20 ms would have made about 50)."""
    await database_sync_to_async(clock_reset)(0.0, paused=True)
    async with _auctioneer() as auct:
        before = auct.ticks
        await asyncio.sleep(1.0)
        assert auct.ticks - before <= 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("otto_bus")
async def test_the_auctioneer_wakes_on_a_change_of_the_clock_otto_md_11() -> None:
    await database_sync_to_async(clock_reset)(0.0, paused=True)
    async with _auctioneer() as auct:
        before = auct.ticks
        await database_sync_to_async(clock_step)(3.0)
        await _until(lambda: auct.ticks > before, what="a tick after the step")
        assert auct.clock.now() == pytest.approx(3.0)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("otto_bus")
async def test_the_auctioneer_wakes_on_a_change_of_the_world_otto_md_11() -> None:
    """A scenario loaded by ``simulate`` moves the clock with its messages suppressed; the
    world's change that follows wakes the auctioneer, which re-reads the clock row."""
    from django.db import transaction

    from auction.live.publish import suppressed
    from auction.services.world import world_changed

    await database_sync_to_async(clock_reset)(0.0, paused=True)
    async with _auctioneer() as auct:
        before = auct.ticks

        def load() -> None:
            with suppressed():
                clock_reset(40.0, paused=True)
            with transaction.atomic():
                world_changed()

        await database_sync_to_async(load)()
        await _until(lambda: auct.ticks > before, what="a tick after the world changed")
        assert auct.clock.now() == pytest.approx(40.0)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("otto_bus")
async def test_the_auctioneer_wakes_on_an_arriving_task_and_opens_its_auction_otto_md_11() -> None:
    await database_sync_to_async(clock_reset)(0.0, paused=True)
    async with _auctioneer():
        await database_sync_to_async(submit)("t-idle-wake")
        # Well inside the minute-long recheck: the arrival woke it.
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            row = await database_sync_to_async(auction_of)("t-idle-wake")
            if row is not None:
                break
            await asyncio.sleep(0.05)
        assert row is not None and row.state == "open"


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("otto_bus")
async def test_a_clock_message_puts_the_new_state_in_the_cache_before_any_read_otto_md_11() -> None:
    await database_sync_to_async(clock_reset)(0.0, paused=False)
    cache, wake = SimClockCache(), asyncio.Event()  # never refreshed from the row
    before = await _listeners(clock_channel())
    listener = asyncio.create_task(clock_changes(wake, cache))
    try:
        await _subscribed(clock_channel(), before)
        await database_sync_to_async(clock_set_speed)(4.0)
        await asyncio.wait_for(wake.wait(), 10)
        assert cache.state.speed == 4.0 and not cache.state.paused
    finally:
        await _stop(listener)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("otto_bus")
async def test_the_orchestrators_housekeep_only_when_told_otto_md_11() -> None:
    await database_sync_to_async(clock_reset)(0.0, paused=True)
    fleet = OrchestratorFleet(elastic=True)
    before = await _listeners(sim_channel())
    task = asyncio.create_task(fleet.run())
    try:
        await _until(lambda: fleet.rounds >= 1, what="the first round")
        await _subscribed(sim_channel(), before)  # one SUBSCRIBE names both channels
        before = fleet.rounds
        await asyncio.sleep(1.0)
        assert fleet.rounds == before  # polling every 250 ms would have made 4
        await database_sync_to_async(sim_advanced)()
        await _until(lambda: fleet.rounds > before, what="a round after an advance")
        before = fleet.rounds
        await database_sync_to_async(clock_step)(1.0)
        await _until(lambda: fleet.rounds > before, what="a round after a change of the clock")
    finally:
        await _stop(task)

"""The Otto processes' loops (otto.md 1, 7): the auctioneer leads only while it holds its
lock, and every failure the loops survive is logged with its context."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.exceptions import ChannelFull
from otto_world import auction_of, submit

from auction.models import OttoAuction
from auction.otto import messages as msg
from auction.services import locks, otto_runtime
from auction.services.clock import clock_reset
from auction.services.otto_runtime import Auctioneer, Orchestrator, SimClockCache


async def _until(predicate: Any, timeout: float = 10.0, what: str = "") -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.usefixtures("otto_bus")
async def test_auctioneer_steps_down_when_its_lock_is_lost_and_leads_again_when_it_is_back(caplog) -> None:  # type: ignore[no-untyped-def]
    """otto.md 1: the lock keeps exactly one auctioneer active. A renewal that fails (the lock
    lapsed and another process took it) stops this one at once; it stands by, does nothing,
    and leads again once the lock is free."""
    await database_sync_to_async(clock_reset)(0.0, paused=True)
    auct = Auctioneer(tick_s=0.02, duration_s=5, lock_ttl_s=5.0, renew_s=0.05, standby_s=0.05)
    run = asyncio.create_task(auct.run())
    try:
        await asyncio.wait_for(auct.active.wait(), 10)
        client = locks.redis_client()
        assert client.get(auct.lock_key()) is not None
        caplog.set_level(logging.WARNING)
        client.set(auct.lock_key(), "another-auctioneer", px=60_000)  # ours lapsed; someone took it
        await _until(lambda: not auct.active.is_set(), what="stepping down")
        await _until(lambda: auct.steps_down == 1, what="standing by")
        assert "renewal failed, no longer held" in caplog.text
        assert "lost the lock, stepped down" in caplog.text
        # Standing by, it acts on nothing: a task sent now stays on tasks.for_auction.
        await database_sync_to_async(submit)("t-standby")
        await asyncio.sleep(0.5)
        assert not await database_sync_to_async(OttoAuction.objects.exists)()
        assert not auct.active.is_set() and not run.done()
        # The other holder is gone: it acquires the lock again, leads, and opens the auction.
        client.delete(auct.lock_key())
        await asyncio.wait_for(auct.active.wait(), 10)
        for _ in range(200):
            if await database_sync_to_async(auction_of)("t-standby") is not None:
                break
            await asyncio.sleep(0.05)
        assert await database_sync_to_async(auction_of)("t-standby") is not None
        assert client.get(auct.lock_key()) not in (None, b"another-auctioneer")
    finally:
        auct.stop.set()
        await asyncio.wait_for(run, 10)
    assert locks.redis_client().get(auct.lock_key()) is None  # released on stop


def test_lock_renew_extends_a_held_lock_and_reports_a_lost_one(redis_socket, settings, caplog) -> None:  # type: ignore[no-untyped-def]
    """The one renewal helper (locks.lock_renew) every lock holder uses."""
    lock = locks.redis_client().lock("diego:main:t-renew-helper", timeout=0.3, blocking=False,
                                     thread_local=False)
    assert lock.acquire()
    try:
        assert locks.lock_renew(lock)
        assert locks.redis_client().pttl("diego:main:t-renew-helper") > 200
        locks.redis_client().set("diego:main:t-renew-helper", "someone-else")
        with caplog.at_level(logging.WARNING, logger="auction.services.locks"):
            assert not locks.lock_renew(lock)
        assert "lock diego:main:t-renew-helper: renewal failed, no longer held (LockNotOwnedError" in caplog.text
        # A holder for whom a lapse is expected (the live coalescer) says nothing at WARNING
        # (dashboard.md S5: a quiet run stays quiet).
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="auction.services.locks"):
            assert not locks.lock_renew(lock, expected=True)
        assert caplog.records == []
    finally:
        locks.redis_client().delete("diego:main:t-renew-helper")


@pytest.mark.asyncio
async def test_a_tick_of_an_ended_term_writes_nothing() -> None:
    """Cancelling the loops is not enough: a cancel can be swallowed under them (asgiref's
    sync_to_async returns normally when the sync call ended meanwhile). A tick whose term
    ended while it awaited stops before its next write, and leaves the buffers alone."""
    from auction.sim.clock import ClockState

    auct = Auctioneer(layer=object(), duration_s=5, use_lock=False)
    auct.term = 1
    task_message = {"type": msg.TASK, "task": {"raw": {"task_guid": "t-1"}, "capabilities": {}}}
    auct.tasks = [(task_message, 0.0)]
    calls: list[str] = []

    class Row:
        state = ClockState(0.0, 0.0, 1.0, True)

    async def timed(name: str, fn: Any, *args: Any) -> Any:
        calls.append(name)
        auct.term += 1  # stepped down meanwhile, and the cancel never arrived here
        return Row()

    auct._timed = timed  # type: ignore[method-assign]
    with pytest.raises(otto_runtime.SteppedDown):
        await auct._tick(None, 1)
    assert calls == ["clock"] and auct.tasks == [(task_message, 0.0)]
    await auct._ticks(1)  # the loop of an ended term returns at once
    assert calls == ["clock"]


@pytest.mark.asyncio
async def test_a_receiver_of_an_ended_term_drops_what_it_gets(caplog) -> None:  # type: ignore[no-untyped-def]
    auct = Auctioneer(layer=None, duration_s=5, use_lock=False)
    auct.term = 3

    class Layer:
        async def receive(self, channel: str) -> dict[str, Any]:
            auct.term += 1  # stepped down while this receive was blocked
            return msg.bid_message("a-1", 1, "cell-1", "agent", 0.02, {}, 0, 1.0)

    auct.layer = Layer()
    with caplog.at_level(logging.WARNING, logger="auction.services.otto_runtime"):
        await asyncio.wait_for(auct._receive("otto.main.tasks.bids", auct._on_bid, 3), 2)
    assert auct.bids == []
    assert "dropped otto.bid on otto.main.tasks.bids: it arrived after stepping down" in caplog.text


@pytest.mark.asyncio
async def test_settle_cancels_again_a_task_that_swallowed_its_cancel(caplog) -> None:  # type: ignore[no-untyped-def]
    async def stubborn() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            pass  # swallowed, as under asgiref's sync_to_async
        await asyncio.sleep(10)

    task = asyncio.create_task(stubborn(), name="stubborn")
    await asyncio.sleep(0)
    with caplog.at_level(logging.WARNING, logger="auction.services.otto_runtime"):
        await asyncio.wait_for(otto_runtime._settle([task], "test", patience_s=0.1), 2)
    assert task.cancelled()
    assert "otto: test: stubborn still running 0.1 s after a cancel; cancelling again" in caplog.text


# --- dropped failures are logged with their context ---------------------------------------

class FullLayer:
    """A channel layer whose every channel is full."""

    def __init__(self) -> None:
        self.sent = 0

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        self.sent += 1
        raise ChannelFull(channel)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        raise ChannelFull(group)


@pytest.mark.asyncio
async def test_an_orchestrators_message_dropped_on_a_full_channel_is_logged(monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(otto_runtime, "SEND_RETRIES", 3)
    layer = FullLayer()
    member = Orchestrator("cell-1", layer, {}, SimClockCache())
    bid = msg.bid_message("a-7", 1, "cell-1", "agent", 0.02, {}, 0, 1.0)
    with caplog.at_level(logging.WARNING, logger="auction.services.otto_runtime"):
        await member._send("otto.main.tasks.bids", bid)
    assert layer.sent == 3
    assert ("otto orchestrator cell-1: dropped otto.bid for a-7: otto.main.tasks.bids stayed full for 3 tries"
            in caplog.text)


@pytest.mark.asyncio
async def test_an_auctioneer_send_dropped_on_a_full_channel_is_logged(caplog) -> None:  # type: ignore[no-untyped-def]
    award = msg.award_message("a-8", 2, {"raw": {}, "capabilities": {}}, 0.02, 15.5)
    with caplog.at_level(logging.WARNING, logger="auction.services.otto_runtime"):
        await otto_runtime.send_all(FullLayer(), [("send", "otto.main.inbox.cell-1", award)])
    assert "dropped otto.award for a-8: otto.main.inbox.cell-1 is full" in caplog.text


def test_a_next_deadline_that_cannot_be_published_is_logged(monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    import redis

    class Down:
        def set(self, *args: Any, **kwargs: Any) -> None:
            raise redis.exceptions.ConnectionError("Connection refused")

    monkeypatch.setattr(otto_runtime, "redis_client", lambda: Down())
    with caplog.at_level(logging.WARNING, logger="auction.services.otto_runtime"):
        otto_runtime._store_deadline(12.5)
    assert "could not publish the next deadline 12.5 (Connection refused)" in caplog.text


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_malformed_message_on_an_inbox_is_logged_and_counted(caplog) -> None:  # type: ignore[no-untyped-def]
    """otto.md 3: dropped, counted, and (now) logged with the channel it came on."""

    class OneBadMessage:
        def __init__(self) -> None:
            self.given = False

        async def group_add(self, group: str, channel: str) -> None:
            return None

        async def receive(self, channel: str) -> dict[str, Any]:
            if not self.given:
                self.given = True
                return {"type": "otto.award", "auction_id": "a-9"}  # no attempt, task, ...
            await asyncio.sleep(3600)
            raise AssertionError("unreachable")

    from auction.models import Counter

    member = Orchestrator("cell-1", OneBadMessage(), {}, SimClockCache())
    caplog.set_level(logging.WARNING, logger="auction.services.otto_runtime")
    def counted() -> int | None:
        return Counter.objects.filter(name="OttoMalformedMessages").values_list("value", flat=True).first()

    task = asyncio.create_task(member.run())
    try:
        for _ in range(250):  # logged first, then counted: wait for the count
            if await database_sync_to_async(counted)() is not None:
                break
            await asyncio.sleep(0.02)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert "dropped a malformed message on otto.main.inbox.cell-1" in caplog.text
    assert await database_sync_to_async(counted)() == 1

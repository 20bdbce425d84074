"""The Otto processes' loops (otto.md 1, 7): the auctioneer leads only while it holds its
lock, and every failure the loops survive is logged with its context."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from channels.db import database_sync_to_async
from otto_world import auction_of, submit

from auction.models import OttoAuction
from auction.services import locks
from auction.services.clock import clock_reset
from auction.services.otto_runtime import Auctioneer


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
        assert auct.steps_down == 1
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
    finally:
        locks.redis_client().delete("diego:main:t-renew-helper")

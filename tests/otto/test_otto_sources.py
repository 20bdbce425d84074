"""Task sources and message hygiene (otto.md 2, 3, 7, 9)."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from auction.models import Counter, OttoAuction, PendingWork, Task, Zone
from auction.otto import messages as msg
from auction.services import otto_bus as bus
from auction.services.clock import clock_reset
from auction.services.otto import otto_auction_open, otto_due
from auction.services.sim import convergence_run
from auction.services.tasks import task_desire

pytestmark = pytest.mark.django_db(transaction=True)


def _drain(channel: str) -> list[dict]:
    layer = get_channel_layer()
    out = []

    async def take() -> None:
        import asyncio

        while True:
            try:
                out.append(await asyncio.wait_for(layer.receive(channel), 0.1))
            except TimeoutError:
                return

    async_to_sync(take)()
    return out


def test_otto_task_goes_to_for_auction_never_to_diego() -> None:
    """otto.md 9 Routing: an otto-mode task is sent to tasks.for_auction; Diego's queue never sees it."""
    clock_reset(0.0, paused=True)
    task_desire({"task_guid": "t-o", "domain": "d", "rootfs": "docker:///x", "memory_mb": 256,
                 "placement_mode": "otto"})
    task_desire({"task_guid": "t-d", "domain": "d", "memory_mb": 256})
    sent = _drain(bus.name(bus.FOR_AUCTION))
    assert [m["task"]["raw"]["task_guid"] for m in sent] == ["t-o"]
    checked = msg.validate(sent[0])
    assert checked["task"]["capabilities"] == {"cores": 1, "memory": "256M", "docker_run": True,
                                              "docker_build": False}
    assert list(PendingWork.objects.values_list("task_guid", flat=True)) == ["t-d"]


def test_convergence_refeeds_pending_otto_task_without_live_auction() -> None:
    """otto.md 7: a lost message: each convergence pass re-feeds a PENDING Otto task with no live
    auction, and not one that has one."""
    clock_reset(0.0, paused=True)
    task_desire({"task_guid": "t-lost", "domain": "d", "memory_mb": 64, "placement_mode": "otto"})
    first = _drain(bus.name(bus.FOR_AUCTION))  # the original send: "lost" here
    assert len(first) == 1
    convergence_run(30.0)
    again = _drain(bus.name(bus.FOR_AUCTION))
    assert [m["task"]["raw"]["task_guid"] for m in again] == ["t-lost"]
    otto_auction_open(msg.validate(again[0]), 30.0)
    convergence_run(60.0)
    assert _drain(bus.name(bus.FOR_AUCTION)) == []
    assert not PendingWork.objects.filter(task_guid="t-lost").exists()


def test_duplicate_task_message_opens_one_auction_and_pending_limit_fails() -> None:
    """otto.md 7: duplicates are idempotent; after 1800 s pending: Diego's "not started within time limit"."""
    Zone.objects.create(name="z1")
    clock_reset(0.0, paused=True)
    task = task_desire({"task_guid": "t-1", "domain": "d", "memory_mb": 64, "placement_mode": "otto"})
    message = msg.validate(_drain(bus.name(bus.FOR_AUCTION))[0])
    otto_auction_open(message, 0.0)
    otto_auction_open(message, 0.1)
    assert OttoAuction.objects.filter(task_guid="t-1").count() == 1
    for now in (5.5, 1800.0):
        otto_due(now)
    row = OttoAuction.objects.get(task_guid="t-1")
    task.refresh_from_db()
    assert (row.state, row.failure_reason) == ("failed", "not started within time limit")
    assert (task.state, task.failed, task.failure_reason) == ("COMPLETED", True, "not started within time limit")
    assert Task.objects.filter(state="PENDING").count() == 0


@pytest.mark.asyncio
async def test_malformed_messages_are_dropped_and_counted() -> None:
    """otto.md 3: a naive timestamp, an unknown type or a bad field drops the message and counts it."""
    import asyncio

    from channels.db import database_sync_to_async

    from auction.services.otto_runtime import Auctioneer

    await database_sync_to_async(clock_reset)(0.0, paused=True)
    auct = Auctioneer(use_lock=False, duration_s=5)
    run = asyncio.create_task(auct.run())
    await asyncio.wait_for(auct.active.wait(), 10)
    layer = auct.layer
    good = msg.bid_message("a-1", 1, "cell-1", "agent", 0.1, {}, 0, 1.0)
    for bad in ({**good, "sent_at": "2025-01-01T00:00:01.000"}, {"type": "otto.nope"}, {**good, "cost": "x"}):
        await layer.send(bus.name(bus.BIDS), bad)
    await layer.send(bus.name(bus.FOR_AUCTION), {"type": "otto.task", "task": {"raw": {}}, "submitted_at": "x"})
    for _ in range(100):
        value = await database_sync_to_async(
            lambda: Counter.objects.filter(name="OttoMalformedMessages").values_list("value", flat=True).first())()
        if value == 4:
            break
        await asyncio.sleep(0.05)
    auct.stop.set()
    await asyncio.wait_for(run, 10)
    assert value == 4


def test_clock_going_back_restamps_pending_auctions() -> None:
    """otto.md 7 (the clock goes back): pending auctions keep the time they had left; others stay."""
    Zone.objects.create(name="z1")
    clock_reset(5400.0, paused=True)
    task_desire({"task_guid": "t-open", "domain": "d", "memory_mb": 64, "placement_mode": "otto"})
    task_desire({"task_guid": "t-old", "domain": "d", "memory_mb": 64, "placement_mode": "otto"})
    opened = {m["task"]["raw"]["task_guid"]: msg.validate(m) for m in _drain(bus.name(bus.FOR_AUCTION))}
    otto_auction_open(opened["t-open"], 5400.0)
    otto_auction_open(opened["t-old"], 100.0)  # submitted before the instant the clock goes back to
    clock_reset(200.0, paused=True)
    row = OttoAuction.objects.get(task_guid="t-open")
    assert (row.submitted_at, row.starts, row.ends) == (200.0, 200.0, 205.0)
    assert row.note == "re-stamped: the clock went back"
    old = OttoAuction.objects.get(task_guid="t-old")
    assert (old.submitted_at, old.starts, old.ends) == (100.0, 100.0, 105.0)
    otto_due(205.6)  # closes at the new ends + grace, not 90 sim-minutes later
    assert OttoAuction.objects.get(task_guid="t-open").state != "open"


def test_arrival_is_never_after_the_clock_read_at_open() -> None:
    """otto.md 7 (the clock goes back): a stale arrival stamp is the clock read at open."""
    from auction.otto.lifecycle import arrival

    assert arrival(5400.0, 3.0) == 3.0
    assert arrival(2.5, 3.0) == 2.5

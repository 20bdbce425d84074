"""Otto auctions end to end: real Redis layer, paused sim clock, auctioneer and orchestrators
running in-process (otto.md 10 integration cases)."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from otto_world import auction_of, build_cells, running, step, submit, wait_for

from auction.models import Counter, OttoBid, PendingWork, Task

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio, pytest.mark.usefixtures("otto_bus")]

WORKED_CELLS = [
    # u after placing 2 cores / 1G: (1024/4096 + 2/8) / 2 = 0.25
    {"cell_id": "1", "zone": "z1", "memory_mb": 4096, "cores": 8},
    # (1024/2048 + 2/2) / 2 = 0.75
    {"cell_id": "2", "zone": "z2", "memory_mb": 2048, "cores": 2},
    # no docker rootfs provider
    {"cell_id": "3", "zone": "z1", "memory_mb": 8192, "cores": 8, "rootfs_providers": []},
]
WORKED_CAPS = {"cores": 2, "memory": "1G", "docker_run": True, "docker_build": False}


def _bids(guid: str) -> dict[str, tuple[float, str]]:
    return {b.bidder: (b.cost, b.status) for b in OttoBid.objects.filter(auction__task_guid=guid)}


def _counter(name: str) -> int:
    return Counter.objects.filter(name=name).values_list("value", flat=True).first() or 0


async def test_worked_example_cheapest_wins_and_starts() -> None:
    """otto.md 5 worked example / 10: three agents and the elastic bid; cell-1 wins at 0.018750 and starts;
    cell-3 (no docker) does not bid; the Diego auctioneer never sees the task (otto.md 9)."""
    await database_sync_to_async(build_cells)(WORKED_CELLS)
    async with running():
        await database_sync_to_async(submit)("t-7", WORKED_CAPS)
        await wait_for(lambda: len(_bids("t-7")) == 3, what="3 bids")
        await step(5.5)
        row = await wait_for(lambda: (a := auction_of("t-7")) and a.state == "started" and a, what="start")
        bids = await database_sync_to_async(_bids)("t-7")
        task = await database_sync_to_async(Task.objects.get)(task_guid="t-7")
        no_diego = not await database_sync_to_async(PendingWork.objects.filter(task_guid="t-7").exists)()
    assert row.winner == "cell-1" and row.cost == 0.018750
    assert bids == {"cell-1": (0.01875, "accepted"), "cell-2": (0.022917, "accepted"),
                    "elastic": (0.06625, "accepted")}
    assert "cell-3" not in bids
    assert (task.state, task.cell_id) == ("RUNNING", "1")
    assert row.start_by == 15.5 and row.started_cell == "1"
    assert no_diego


async def test_no_capable_bidder_backs_off_and_names_capability() -> None:
    """otto.md 10: docker_build, elastic off, no capable cell: no bids; re-announce after 2, 4, 8 s;
    the board names docker_build."""
    await database_sync_to_async(build_cells)(WORKED_CELLS)
    async with running(elastic=False):
        await database_sync_to_async(submit)("t-b", {"docker_build": True})
        await wait_for(lambda: auction_of("t-b"), what="auction")
        delays = []
        for n in range(1, 4):
            await step(5.5)
            row = await wait_for(lambda: (a := auction_of("t-b")) and a.state == "no_bids" and a, what="no bids")
            delays.append(row.next_announce_at - row.closed_at)
            assert "docker_build" in row.unmet and "nobody offers docker_build" in row.note
            await step(row.next_announce_at - (row.closed_at or 0))
            await wait_for(lambda n=n: (a := auction_of("t-b")) and a.announcements == n + 1, what="re-announce")
    # 2, 4, 8 s with the +-10 % seeded jitter
    assert all(0.9 * base - 1e-6 <= d <= 1.1 * base + 1e-6 for d, base in zip(delays, (2, 4, 8), strict=True))
    assert row.attempt == 1
    assert not await database_sync_to_async(lambda: OttoBid.objects.filter(auction__task_guid="t-b").exists())()


async def test_non_starter_loses_to_reauction_runner_up_starts() -> None:
    """otto.md 10: winner with start_failure_rate = 1: attempt 2 opens at start_by without it;
    the runner-up starts; OttoStartTimeouts = 1."""
    await database_sync_to_async(build_cells)(WORKED_CELLS)
    async with running(knobs={"cell-1": {"start_failure_rate": 1.0}}, elastic=False):
        await database_sync_to_async(submit)("t-s", WORKED_CAPS)
        await wait_for(lambda: len(_bids("t-s")) == 2, what="2 bids")
        await step(5.5)
        row = await wait_for(lambda: (a := auction_of("t-s")) and a.state == "awarded" and a, what="award")
        assert row.winner == "cell-1"
        await step(10.0)  # start_by = 5.5 + 10
        row = await wait_for(lambda: (a := auction_of("t-s")) and a.attempt == 2 and a, what="attempt 2")
        assert row.starts == 15.5 and row.excluded == ["cell-1"]
        await wait_for(lambda: any(b.attempt == 2 for b in OttoBid.objects.filter(auction__task_guid="t-s")),
                       what="attempt-2 bid")
        await step(5.5)
        row = await wait_for(lambda: (a := auction_of("t-s")) and a.state == "started" and a, what="start")
        timeouts = await database_sync_to_async(_counter)("OttoStartTimeouts")
        attempt2 = await database_sync_to_async(lambda: sorted(
            OttoBid.objects.filter(auction__task_guid="t-s", attempt=2).values_list("bidder", flat=True)))()
    assert row.winner == "cell-2" and row.started_cell == "2"
    assert attempt2 == ["cell-2"]
    assert timeouts == 1
    assert "did not start by" in " ".join(h[1] for h in row.history)


async def test_late_bidder_is_refused() -> None:
    """otto.md 7/10: a `late` bidder with clock_offset_s = -3 arrives 2.8 s after ends: marked late, not chosen."""
    await database_sync_to_async(build_cells)(WORKED_CELLS[:2])
    async with running(knobs={"cell-1": {"bid_timing": "late", "clock_offset_s": -3.0}}, elastic=False):
        await database_sync_to_async(submit)("t-l", WORKED_CAPS)
        await wait_for(lambda: len(_bids("t-l")) == 1, what="cell-2's bid")
        await step(5.5)
        row = await wait_for(lambda: (a := auction_of("t-l")) and a.state in ("awarded", "started") and a, what="award")
        await step(2.3)  # sim 7.8: cell-1's own clock reads 4.8 = ends - 0.2
        late = await wait_for(lambda: OttoBid.objects.filter(auction__task_guid="t-l", bidder="cell-1").first(),
                              what="late bid")
        late_count = await database_sync_to_async(_counter)("OttoLateBids")
    assert row.winner == "cell-2"
    assert late.status == "late" and late.reason == "late: arrived 2.8 s after ends"
    assert late_count == 1


async def test_auctioneer_restart_closes_exactly_once() -> None:
    """otto.md 10: auctioneer killed before close; after restart it closes exactly once, one award."""
    await database_sync_to_async(build_cells)(WORKED_CELLS[:2])
    async with running(elastic=False) as world:
        await database_sync_to_async(submit)("t-r", WORKED_CAPS)
        await wait_for(lambda: len(_bids("t-r")) == 2, what="bids")
        world["auctioneer"].stop.set()
        await world["auctioneer_task"]
        await step(5.5)
        import asyncio

        from auction.services.otto_runtime import Auctioneer

        again = [Auctioneer(tick_s=0.02), Auctioneer(tick_s=0.02, use_lock=False)]  # a stale second one too
        tasks = [asyncio.create_task(a.run()) for a in again]
        row = await wait_for(lambda: (a := auction_of("t-r")) and a.state == "started" and a, what="start")
        await asyncio.sleep(0.3)
        for a in again:
            a.stop.set()
        for t in tasks:
            await asyncio.wait_for(t, 10)
        awarded = await database_sync_to_async(_counter)("OttoAuctionsAwarded")
    assert row.winner == "cell-1"
    assert awarded == 1


async def test_five_failed_starts_fail_the_task() -> None:
    """otto.md 10: five failed starts: Task failed, "not started after 5 auctions"."""
    await database_sync_to_async(build_cells)(WORKED_CELLS[:1])
    async with running(knobs={"cell-1": {"start_failure_rate": 1.0}}, elastic=False):
        await database_sync_to_async(submit)("t-f", WORKED_CAPS)
        for attempt in range(1, 6):
            await wait_for(lambda attempt=attempt: OttoBid.objects.filter(
                auction__task_guid="t-f", attempt=attempt).exists() or (
                (a := auction_of("t-f")) and a.attempt == attempt and a.excluded), what=f"attempt {attempt}")
            await step(5.5)
            if attempt > 1:
                # excluded from the first announcement only: nobody bids, so back off then re-announce
                row = await wait_for(lambda: (a := auction_of("t-f")) and a.state == "no_bids" and a)
                await step(row.next_announce_at - row.closed_at)
                await wait_for(lambda attempt=attempt: OttoBid.objects.filter(
                    auction__task_guid="t-f", attempt=attempt).exists(), what="re-bid")
                await step(5.5)
            await wait_for(lambda: (a := auction_of("t-f")) and a.state == "awarded" and a, what="awarded")
            await step(10.0)
        row = await wait_for(lambda: (a := auction_of("t-f")) and a.state == "failed" and a, what="failed")
        task = await database_sync_to_async(Task.objects.get)(task_guid="t-f")
    assert row.failure_reason == "not started after 5 auctions"
    assert (task.state, task.failed, task.failure_reason) == ("COMPLETED", True, "not started after 5 auctions")


async def test_diego_commit_and_otto_start_race_for_last_gb() -> None:
    """otto.md 9/10: a Diego task commit and an Otto start race for a cell's last 1 GB: exactly one
    reservation succeeds; Otto's loser declines and the task is re-auctioned."""
    from auction.services.sim import auction_once

    await database_sync_to_async(build_cells)([{"cell_id": "1", "memory_mb": 1024, "cores": 4}])
    async with running(elastic=False):
        await database_sync_to_async(submit)("t-o", {"memory": "1G"})
        await wait_for(lambda: len(_bids("t-o")) == 1, what="bid")
        await step(5.5)
        await wait_for(lambda: (a := auction_of("t-o")) and a.state in ("awarded", "started") and a, what="award")
        # Diego's task for the same last GB, committed before the winner starts.
        def diego() -> None:
            from auction.services.tasks import task_desire

            task_desire({"task_guid": "t-d", "domain": "d", "memory_mb": 1024, "rootfs": "docker:///x"})
            auction_once()
        await database_sync_to_async(diego)()
        await wait_for(lambda: (a := auction_of("t-o")) and (a.state == "started" or a.attempt == 2), what="outcome")
        row = await database_sync_to_async(auction_of)("t-o")
        diego_task = await database_sync_to_async(Task.objects.get)(task_guid="t-d")
    running_on_cell = (row.state == "started") + (diego_task.state == "RUNNING")
    assert running_on_cell == 1
    if row.state != "started":
        assert diego_task.state == "RUNNING" and row.attempt == 2
        assert any("declined by cell-1" in h[1] for h in row.history)
    else:
        assert diego_task.state != "RUNNING"

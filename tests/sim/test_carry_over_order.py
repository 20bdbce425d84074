"""auction.md 1.8 (carry-over) with 1.4 (form the batch) and 2 (batch order): work an
auction failed joins the next batch first, in the order this batch gave it, and the
priority groups' stable sorts keep that order among equal keys.

A pure test of ``auction.sim.round``: no cell answers, so every item fails and is
carried; the queue between the two rounds is what the round's ``ChangeSet`` leaves.
"""

from __future__ import annotations

from auction.bbs import types as core
from auction.bbs.lrp_operations import new_unclaimed
from auction.engine import AuctionConfig
from auction.sim.changes import ChangeSet
from auction.sim.model import QueuedWork, SimApp, SimTask
from auction.sim.round import RoundInput, auction_round

# Every item the same size: within a group only the batch's own order separates them.
APPS = {guid: SimApp(guid, instances=3, memory_mb=256) for guid in "abcd"}
TASK = SimTask(core.Task("t1", core.PENDING, domain="cf-apps"), memory_mb=256)


def lrp(seq: int, guid: str, index: int, **carried: object) -> QueuedWork:
    return QueuedWork(seq, "lrp", process_guid=guid, index=index, **carried)  # type: ignore[arg-type]


def round_at(at: float, queue: list[QueuedWork]) -> ChangeSet:
    unclaimed = {(q.process_guid, q.index): new_unclaimed(q.process_guid, q.index, "cf-apps", 0.0)
                 for q in queue if q.kind == "lrp"}
    return auction_round(RoundInput(at=at, queue=queue, cells=[], loads={}, apps=APPS,
                                    unclaimed=unclaimed, tasks={"t1": TASK}, config=AuctionConfig()))


def after(queue: list[QueuedWork], change: ChangeSet) -> list[QueuedWork]:
    """The queue as a store leaves it after applying ``change`` (its queue part)."""
    by_seq = {q.seq: q for q in queue}
    for seq in change.queue_remove:
        by_seq.pop(seq, None)
    for q in change.queue_put:
        by_seq[q.seq] = q
    return list(by_seq.values())


def test_carried_work_keeps_this_batchs_order_within_its_priority_group() -> None:
    # Carried from an earlier batch in an order that is not their arrival order
    # (b.1, t1, a.1), then new arrivals: c.1 before c.0.
    queue = [
        lrp(1, "a", 1, carried=True, batch_position=2, attempts=1),
        lrp(2, "b", 1, carried=True, batch_position=0, attempts=1),
        QueuedWork(3, "task", task_guid="t1", carried=True, batch_position=1, attempts=1),
        lrp(4, "c", 1),
        lrp(5, "c", 0),
    ]
    first = round_at(10.0, queue)
    # Index 0 first, then tasks, then index > 0: b.1 and a.1 keep their carried order
    # ahead of the new c.1, though a.1 arrived first.
    assert first.auction.result.order == ["c.0", "t1", "b.1", "a.1", "c.1"]
    assert not first.auction.result.placements
    carried = sorted(first.queue_put, key=lambda q: q.batch_position)
    assert [(q.ident, q.batch_position, q.attempts) for q in carried] == [
        ("c.0", 0, 1), ("t1", 1, 2), ("b.1", 2, 2), ("a.1", 3, 2), ("c.1", 4, 1)]
    assert all(q.carried for q in carried)

    # New work arrives (d.1 before d.0): it follows every carried item of its group.
    queue = after(queue, first) + [lrp(6, "d", 1), lrp(7, "d", 0)]
    second = round_at(20.0, queue)
    assert second.auction.result.order == ["c.0", "d.0", "t1", "b.1", "a.1", "c.1", "d.1"]
    assert [q.ident for q in sorted(second.queue_put, key=lambda q: q.batch_position)] == \
        second.auction.result.order

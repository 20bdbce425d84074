"""bbs.md 1.4 [project rule]: a scale-down to M takes the start requests for indices >= M
out of the auctioneer's queue at once, in the memory store too: new and carried items
alike, exactly from index M, and only the scaled app's.
"""

from __future__ import annotations

from auction.sim.memory import SimApp, World


def queued(world: World) -> list[tuple[str, int, bool]]:
    return sorted((q.process_guid, q.index, q.carried) for q in world.queue.values())


def test_a_scale_down_drops_the_queued_items_from_the_new_count_on() -> None:
    """No cell answers: the first auction carries every item over, then new work joins."""
    world = World(seed=3)
    world.upsert_domain("cf-apps", 0)
    world.desire_lrp(SimApp("web", instances=6))
    world.run_until(1.0)
    assert queued(world) == [("web", i, True) for i in range(6)]
    world.desire_lrp(SimApp("web-2", instances=6))  # new work, another app at the same indices
    world.scale("web", 3)
    assert queued(world) == [("web", i, True) for i in range(3)] + [("web-2", i, False) for i in range(6)]
    assert world.has_new_work()


def test_a_scale_down_before_any_auction_leaves_no_new_work_behind() -> None:
    """New (not yet auctioned) items go too, with the index ``next_due`` reads them by."""
    world = World(seed=3)
    world.upsert_domain("cf-apps", 0)
    world.desire_lrp(SimApp("web", instances=4))
    world.scale("web", 1)
    assert queued(world) == [("web", 0, False)]
    assert sorted(world.timers.new_work) == [q.seq for q in world.queue.values()]
    world.scale("web", 0)
    assert world.queue == {}
    assert not world.has_new_work()
    assert world.next_due() == world.next_convergence_at  # no new work is due any more

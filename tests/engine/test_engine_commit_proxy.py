"""The commit on a proxy cell: a 0 MB LRP and the two budgets of the rep (auction.md 7.3).

The rep checks LRP memory alone first, every passed LRP lowering that budget by
``m + proxy`` (a 0 MB one too); the executor then allocates the containers against the
real free resources, a 0 MB LRP's container taking 0 MB, so the tasks do not see the
proxy of a 0 MB LRP.
"""

from __future__ import annotations

from engine_builders import cell

from auction.engine import (
    LRPWork,
    Resources,
    TaskWork,
    commit,
    final_memory_in_use,
    run_auction,
)


def zero(guid: str, disk_mb: int = 10) -> LRPWork:
    return LRPWork(guid, 0, 0, disk_mb)


def ids(items) -> list[str]:
    return [w.identifier for w in items]


def test_third_0_mb_lrp_rejected_64_free_proxy_32_auction_md_7_3():
    """auction.md 7.3: 64 MB free, proxy 32: two 0 MB LRPs pass (32 each against the LRP
    budget), the third finds nothing left and is rejected."""
    out = commit(Resources(64, 1000, 10), 32, [zero("a"), zero("b"), zero("c")])
    assert ids(out.accepted) == ["a.0", "b.0"] and ids(out.rejected) == ["c.0"]
    # One more MB and still only two: the budget is whole proxies, not what the containers take.
    assert ids(commit(Resources(95, 1000, 10), 32, [zero("a"), zero("b"), zero("c")]).rejected) == ["c.0"]
    assert commit(Resources(96, 1000, 10), 32, [zero("a"), zero("b"), zero("c")]).rejected == ()


def test_third_0_mb_lrp_rejected_through_the_auction_auction_md_7_3():
    """auction.md 4.6 and 7.3: the auction reserves 0 MB for each, so all three win the cell
    tentatively; the commit rejects the third with the empty error."""
    cells = [cell("P", available=Resources(64, 1000, 10), proxy_memory_mb=32)]
    result = run_auction(cells, [zero("a"), zero("b"), zero("c")])
    assert result.placements == {"a.0": "P", "b.0": "P"}
    assert result.failures == {"c.0": ""}


def test_a_task_after_two_0_mb_lrps_sees_them_take_nothing_auction_md_7_4():
    """auction.md 7.4: the tasks see the real free memory less what the containers take:
    after two 0 MB LRPs on 64 MB free with proxy 32, a 64 MB task still fits, 65 does not."""
    free = Resources(64, 1000, 10)
    out = commit(free, 32, [zero("a"), zero("b"), TaskWork("t", 64, 10)])
    assert ids(out.accepted) == ["a.0", "b.0", "t"] and out.rejected == ()
    out = commit(free, 32, [zero("a"), zero("b"), TaskWork("t", 65, 10)])
    assert ids(out.accepted) == ["a.0", "b.0"] and ids(out.rejected) == ["t"]
    # A task won before the LRPs is still allocated after them; the rejected third LRP
    # takes nothing either.
    out = commit(free, 32, [TaskWork("t", 64, 10), zero("a"), zero("b"), zero("c")])
    assert ids(out.accepted) == ["a.0", "b.0", "t"] and ids(out.rejected) == ["c.0"]


def test_0_mb_lrp_checked_after_the_larger_ones_auction_md_7_3():
    """auction.md 7.3: LRPs are checked largest first whatever the won order, so a 0 MB LRP
    meets the budget the non-zero ones left: 64 free, proxy 32, a 30 MB LRP takes 62."""
    for work in ([zero("z"), LRPWork("n", 0, 30, 10)], [LRPWork("n", 0, 30, 10), zero("z")]):
        out = commit(Resources(64, 1000, 10), 32, work)
        assert ids(out.accepted) == ["n.0"] and ids(out.rejected) == ["z.0"]
    # 80 free: the 10 MB LRP leaves 38 of the budget, the first 0 MB one 6, the second is
    # rejected; the tasks see 80 - 42 = 38.
    work = [zero("z1"), TaskWork("t", 38, 10), LRPWork("n", 0, 10, 10), zero("z2")]
    out = commit(Resources(80, 1000, 10), 32, work)
    assert ids(out.accepted) == ["n.0", "z1.0", "t"] and ids(out.rejected) == ["z2.0"]
    work[1] = TaskWork("t", 39, 10)
    assert ids(commit(Resources(80, 1000, 10), 32, work).rejected) == ["z2.0", "t"]


def test_no_proxy_0_mb_lrps_always_pass_auction_md_7_3():
    """auction.md 7.3: with no proxy a 0 MB LRP needs 0 MB of either budget."""
    out = commit(Resources(0, 1000, 10), 0, [zero("a"), zero("b"), zero("c")])
    assert ids(out.accepted) == ["a.0", "b.0", "c.0"]


def test_lrp_refused_a_container_still_spent_its_memory_check_auction_md_7_3():
    """auction.md 7.3: the memory check comes first, for all LRPs; one that passes it but
    then finds no disk is refused by the allocation, and what it took from the LRP budget
    stays taken (60 + 50 > 100 although the 60 MB LRP is not started)."""
    out = commit(Resources(100, 10, 10), 0, [LRPWork("a", 0, 60, 20), LRPWork("b", 0, 50, 5)])
    assert out.accepted == () and ids(out.rejected) == ["a.0", "b.0"]
    # The same for a 0 MB LRP's proxy: z1 passes the memory check (64 -> 32) and finds no
    # disk, z2 passes (32 -> 0) and starts, z3 fails the memory check.
    work = [zero("z1", disk_mb=20), zero("z2", disk_mb=5), zero("z3", disk_mb=5)]
    out = commit(Resources(64, 10, 10), 32, work)
    assert ids(out.accepted) == ["z2.0"] and ids(out.rejected) == ["z1.0", "z3.0"]


def test_final_memory_counts_what_the_containers_take_auction_md_9():
    """auction.md 9 and 7.3: after the commit an accepted 0 MB LRP adds 0 MB to memory in
    use, a non-zero one its memory plus the proxy, a task its memory."""
    cells = [cell("P", available=Resources(200, 1000, 10), proxy_memory_mb=32)]
    result = run_auction(cells, [zero("a"), zero("b"), LRPWork("n", 0, 10, 10),
                                 TaskWork("t", 20, 10)])
    assert set(result.placements) == {"a.0", "b.0", "n.0", "t"}
    assert final_memory_in_use(cells, result) == [800 + 42 + 20]

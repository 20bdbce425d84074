"""Explanations (the replay data), the commit step and the public run helpers."""

from __future__ import annotations

import json

from engine_builders import cell

from auction.engine import (
    AuctionConfig,
    LRPWork,
    Resources,
    TaskWork,
    commit,
    commit_all,
    run_auction,
    schedule,
)

CELLS = [cell("a", zone="z1", lrps=("w",)), cell("b", zone="z2", preloaded_rootfses=()),
         cell("c", zone="z2", available=Resources(5, 1000, 10)), cell("d", zone="z3")]
WORK = [LRPWork("w", 1, 100, 100), TaskWork("t", 10, 10), LRPWork("x", 0, 2000, 1)]


def test_explanations_cover_every_cell_and_split_scores_auction_md_4_4():
    """auction.md 2, 4.2, 4.4: group and position, zone counts and groups, per-cell
    filter / fit / score parts, winner; the plain path places identically."""
    plain = schedule(CELLS, WORK)
    explained = schedule(CELLS, WORK, explain=True)
    assert plain.explanations is None
    assert (plain.order, plain.placements, plain.failures, plain.scores) == (
        explained.order, explained.placements, explained.failures, explained.scores)
    notes = {n.identifier: n for n in explained.explanations}
    x, t, w = notes["x.0"], notes["t"], notes["w.1"]
    assert (x.priority_group, x.position, t.priority_group, w.priority_group) == (1, 0, 2, 3)
    assert w.position == 2 and w.group_position == 0
    assert w.zone_counts == {"z1": 1, "z2": 0, "z3": 0}
    # z2 and z3 pooled at 0 (b filtered, c unfit) -> d wins; z1 is never reached
    assert w.zone_groups == [{"count": 0, "zones": ["z2", "z3"]}]
    assert w.chosen_zones == ["z2", "z3"] and w.winner == "d"
    verdicts = {v.cell_id: v for v in w.cells}
    assert set(verdicts) == {"a", "b", "c", "d"}
    assert verdicts["b"].outcome == "filtered" and verdicts["b"].filter == "rootfs"
    assert verdicts["c"].outcome == "unfit" and verdicts["c"].problems == ("memory",)
    assert verdicts["a"].reached is False and verdicts["a"].locality == 1000.0
    d = verdicts["d"]
    assert d.score == ((d.resource + d.starting) + d.locality) + d.bin_pack == w.score
    assert x.error == "insufficient resources: memory" and x.winner is None
    json.dumps([n.to_dict() for n in explained.explanations])  # plain data


def test_explanations_for_other_strategies_auction_md_8():
    """auction.md 8: generic records with the candidates each strategy chose among."""
    result = schedule(CELLS, WORK, AuctionConfig(placement_strategy="dea", seed=1), explain=True)
    notes = {n.identifier: n for n in result.explanations}
    assert notes["w.1"].strategy == "dea" and notes["w.1"].winner in notes["w.1"].candidates
    assert set(notes["w.1"].candidates) <= {"d"}


def test_commit_proxy_example_auction_md_7():
    """auction.md 7: 300 MB free, proxy 32, LRPs 256 and 10 -> the 10 MB one is rejected."""
    big, small = LRPWork("big", 0, 256, 1), LRPWork("small", 0, 10, 1)
    out = commit(Resources(300, 100, 10), 32, [small, big])
    assert out.accepted == (big,) and out.rejected == (small,)
    result = run_auction([cell("a", available=Resources(300, 1000, 10), proxy_memory_mb=32)],
                         [big, small])
    assert result.placements == {"big.0": "a"} and result.failures == {"small.0": ""}
    assert "small.0" not in result.scores


def test_commit_lrps_by_memory_then_tasks_in_won_order_auction_md_7():
    """auction.md 7.3-7.4: LRPs by memory descending (stable), then tasks in won order."""
    work = [TaskWork("t1", 30, 1), LRPWork("a", 0, 20, 1), LRPWork("b", 0, 50, 1),
            TaskWork("t2", 10, 1)]
    out = commit(Resources(80, 100, 10), 0, work)
    assert [w.identifier for w in out.accepted] == ["b.0", "a.0", "t2"]
    assert [w.identifier for w in out.rejected] == ["t1"]
    assert commit(Resources(80, 100, 2), 0, work).rejected[-1].identifier == "t2"


def test_evacuating_rejects_all_and_silent_cell_counts_as_placed_auction_md_1_8():
    """auction.md 7.1 and 1 step 8: evacuating rejects everything (error ""); a cell that
    does not answer the commit rejects nothing."""
    cells = [cell("a")]
    work = [LRPWork("w", 0, 10, 10), TaskWork("t", 10, 10)]
    out = commit_all(schedule(cells, work), cells, evacuating={"a"})
    assert out.placements == {} and out.failures == {"w.0": "", "t": ""}
    tight = [cell("a", available=Resources(20, 1000, 10), proxy_memory_mb=32)]
    sched = schedule(tight, [LRPWork("w", 0, 1, 1)], AuctionConfig())
    assert sched.failures == {"w.0": "insufficient resources: memory"}
    proxied = [cell("a", available=Resources(60, 1000, 10), proxy_memory_mb=32)]
    work = [LRPWork("w", 0, 5, 1), LRPWork("v", 0, 5, 1)]
    # answering, the cell would reject v.0 (37 + 37 > 60) ...
    assert commit_all(schedule(proxied, work), proxied).failures == {"v.0": ""}
    # ... silent, both count as placed
    silent = commit_all(schedule(proxied, work), proxied, unreachable={"a"})
    assert silent.placements == {"w.0": "a", "v.0": "a"} and silent.failures == {}

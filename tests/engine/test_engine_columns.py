"""Columns kept between auctions (``CellColumns``) place exactly as columns gathered anew:
every auction schedules against a copy of the fetched states (auction.md 1.5), so a cell
that changed since the last auction must be read as it is now, its filters included
(auction.md 3)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from engine_builders import cell
from engine_gen import random_case

from auction.engine import AuctionConfig, LRPWork, Resources, diego, parse_case, schedule
from auction.engine.state import CellColumns

STRATEGIES = ["diego", "dea", "objective", "random"]


def lrp(guid: str, index: int = 0, memory: int = 100, rootfs: str = "preloaded:cflinuxfs4") -> LRPWork:
    return LRPWork(guid, index, memory, 100, rootfs)


def test_a_cell_filled_between_auctions_no_longer_wins_auction_md_1_5() -> None:
    """The emptiest cell wins the first auction; a new state of it (full) arrives before the
    second: kept columns would still see it empty and place there."""
    cells = [cell("a", "z1", available=Resources(1000, 1000, 10)),
             cell("b", "z1", 1, available=Resources(500, 1000, 10))]
    columns = CellColumns()
    first = schedule(cells, [lrp("app", 0)], AuctionConfig(), columns=columns)
    assert first.placements == {"app.0": "a"}
    cells = [replace(cells[0], available=Resources(50, 1000, 10)), cells[1]]
    second = schedule(cells, [lrp("app", 1)], AuctionConfig(), columns=columns)
    assert second.placements == {"app.1": "b"}
    assert second.to_case_output() == schedule(cells, [lrp("app", 1)], AuctionConfig()).to_case_output()


def test_a_cell_that_stops_running_a_rootfs_leaves_the_filter_class_auction_md_3_1() -> None:
    """The filter classes are kept with the columns: a cell whose rootfses changed must not
    stay compatible (nor a cell become compatible unseen)."""
    cells = [cell("a", "z1"), cell("b", "z1", 1, available=Resources(500, 1000, 10))]
    columns = CellColumns()
    assert schedule(cells, [lrp("app", 0)], columns=columns).placements == {"app.0": "a"}
    cells = [replace(cells[0], preloaded_rootfses=("cflinuxfs3",)), cells[1]]
    assert schedule(cells, [lrp("app", 1)], columns=columns).placements == {"app.1": "b"}
    cells = [cells[0], replace(cells[1], preloaded_rootfses=("cflinuxfs3",))]
    result = schedule(cells, [lrp("app", 2)], columns=columns)
    assert result.placements == {}
    assert result.failures == schedule(cells, [lrp("app", 2)]).failures


def test_cells_gone_or_reordered_between_auctions_are_gathered_anew_auction_md_1_3() -> None:
    """A cell that stopped answering, or another order: the columns follow the fetch."""
    a, b, c = cell("a", "z1"), cell("b", "z2"), cell("c", "z3", available=Resources(10, 1000, 10))
    columns = CellColumns()
    schedule([a, b, c], [lrp("app", 0)], columns=columns)
    for fetched in ([b, c], [c, b, a], [a, b, c]):
        kept = schedule(fetched, [lrp("app", 1), lrp("app", 2)], columns=columns)
        assert kept.to_case_output() == schedule(fetched, [lrp("app", 1), lrp("app", 2)]).to_case_output()
        assert columns.cell_ids == [x.cell_id for x in fetched]


@pytest.mark.parametrize(("strategy", "share"), [(s, 0.25) for s in STRATEGIES] + [("diego", 2.0)])
def test_kept_columns_place_like_fresh_ones_over_random_changes_auction_md_1_5(
        strategy: str, share: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random clusters, each auction followed by random new states for some cells (fuller,
    emptier, other instances, other filters) or another cell set: the same output as an
    auction that gathers its columns anew, auction after auction. ``share`` 2.0: the kept
    ``diego`` heaps are always brought up to date, never built anew."""
    monkeypatch.setattr(diego, "KEPT_DIRTY_SHARE", share)
    for seed in range(60):
        rng = random.Random(seed)
        columns = CellColumns()
        case = parse_case(random_case(rng, cells=rng.randint(1, 8), items=6))
        pool = parse_case(random_case(rng, cells=8, items=0)).cells
        cells = list(case.cells)
        config = replace(case.config, placement_strategy=strategy, seed=seed)
        for step in range(6):
            kept = schedule(cells, case.work, config, columns=columns)
            fresh = schedule(cells, case.work, config)
            assert kept.to_case_output() == fresh.to_case_output(), (seed, step)
            if rng.random() < 0.2:  # another fetch: cells gone, come back, or reordered
                cells = rng.sample(cells, rng.randint(0, len(cells)))
                continue
            for pos in rng.sample(range(len(cells)), rng.randint(0, min(2, len(cells)))):
                other = rng.choice(pool)  # another state of the same cell (id and zone kept)
                cells[pos] = replace(other, cell_id=cells[pos].cell_id, zone=cells[pos].zone)

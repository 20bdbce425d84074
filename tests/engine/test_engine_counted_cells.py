"""Cells whose instances come counted (``CellState.lrp_counts``) place exactly as cells that
list them: the zone walk (auction.md 4.2) and the locality term (auction.md 4.4) read the
same numbers either way, and the caller's count is only read."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest
from engine_gen import random_case

from auction.engine import LRPWork, parse_case, schedule
from auction.engine.state import FEW_APPS, AuctionState

STRATEGIES = ["diego", "dea", "objective", "random"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_counted_cells_place_like_listed_cells_auction_md_4_2(strategy: str) -> None:
    """Many random cases (ties, shared apps, filters): the same output, counted or listed."""
    for seed in range(150):
        case = parse_case(random_case(random.Random(seed), apps=3))
        config = replace(case.config, placement_strategy=strategy, seed=seed)
        counts = [dict(Counter(c.lrps)) for c in case.cells]
        counted = [replace(c, lrp_counts=n) for c, n in zip(case.cells, counts, strict=True)]
        listed = schedule(case.cells, case.work, config)
        result = schedule(counted, case.work, config)
        assert result.to_case_output() == listed.to_case_output(), seed
        assert result.won.keys() == listed.won.keys()
        # The auction counted its wins on copies: the caller's counts are as given.
        assert [dict(Counter(c.lrps)) for c in case.cells] == counts


def test_zone_counts_summed_in_one_walk_equal_the_per_app_sums_auction_md_4_2() -> None:
    """A batch of many apps sums their zone counts in one walk of the cells: the counts
    equal those summed app by app, and wins after the sum are added to it."""
    for seed in range(50):
        case = parse_case(random_case(random.Random(seed), cells=12, apps=12, filters=False))
        guids = sorted({g for c in case.cells for g in c.lrps} | {"absent"})
        if len(guids) <= FEW_APPS:
            continue  # app by app anyway
        one_walk, per_app = AuctionState(case.cells), AuctionState(case.cells)
        # Twelve apps on twelve cells of at most four instances: one walk is cheaper.
        assert len(guids) * len(case.cells) > sum(len(c) for c in one_walk.lrp_counts)
        one_walk.count_zones(guids)
        assert {g: one_walk.zone_counts_of(g) for g in guids} == {
            g: per_app.zone_counts_of(g) for g in guids}
        expected = {z: sum(c.lrps.count(guids[0]) for c in case.cells if c.zone == z)
                    for z in {c.zone for c in case.cells}}
        assert one_walk.zone_counts_of(guids[0]) == {z: n for z, n in expected.items() if n}
        if case.cells:
            one_walk.reserve(0, LRPWork(guids[0], 99, 1, 1))
            zone = case.cells[0].zone
            assert one_walk.zone_counts_of(guids[0])[zone] == expected[zone] + 1


def test_many_apps_with_a_holders_index_are_summed_in_one_walk_auction_md_4_2() -> None:
    """A caller's index (``holders``) is read app by app for a few apps; a batch of more
    than ``HOLDERS_UP_TO`` apps is summed in one walk of the cells. Both equal the counts."""
    from auction.engine.state import HOLDERS_UP_TO

    rng = random.Random(7)
    guids = [f"app{i}" for i in range(HOLDERS_UP_TO + 20)]
    case = parse_case(random_case(rng, cells=10, apps=3, filters=False))
    cells = [replace(c, lrps=tuple(rng.choice(guids) for _ in range(rng.randint(0, 30))))
             for c in case.cells]

    def holders(guid: str) -> dict[str, int]:
        return {c.cell_id: c.lrps.count(guid) for c in cells if guid in c.lrps}

    expected = {g: {z: n for z in {c.zone for c in cells}
                    if (n := sum(c.lrps.count(g) for c in cells if c.zone == z))} for g in guids}
    for batch in (guids[:3], guids):
        state = AuctionState(cells, holders)
        state.count_zones(batch)
        assert (set(state._zone_counts) == set(batch)) == (len(batch) > HOLDERS_UP_TO)
        assert {g: state.zone_counts_of(g) for g in batch} == {g: expected[g] for g in batch}

"""The ``diego`` strategy's scores, zone walk, ties and reservation (auction.md 4)."""

from engine_builders import cell

from auction.engine import AuctionConfig, LRPWork, Resources, TaskWork, schedule

#: auction.md 4.5's operation order for a 10 MB / 10 MB item on an empty 1000/1000/10 cell.
EMPTY_10 = (((1.0 - 990 / 1000) + (1.0 - 990 / 1000)) + (1.0 - 9 / 10)) / 3.0



def test_numerics_bit_exact_auction_md_4_5():
    """auction.md 4.5: an empty 1000/1000/10 cell taking 100/100 scores 0.09999999999999998."""
    result = schedule([cell("a")], [LRPWork("w", 0, 100, 100)])
    assert result.scores["w.0"] == 0.09999999999999998


def test_exact_tie_goes_to_first_cell_in_input_auction_md_4_6():
    """auction.md 4.6: strictly lower replaces the best, so ties keep input order."""
    cells = [cell("b", zone="z2"), cell("a", zone="z1"), cell("c", zone="z1")]
    result = schedule(cells, [TaskWork("t", 10, 10), LRPWork("w", 0, 10, 10)])
    assert result.placements == {"w.0": "b", "t": "a"}


def test_locality_and_starting_weights_auction_md_4_4():
    """auction.md 4.4: +1000 per same-process instance, +w_start per starting container."""
    cells = [cell("a", lrps=("w",)), cell("b", starting_containers=2)]
    result = schedule(cells, [LRPWork("w", 1, 100, 100)])
    assert result.placements == {"w.1": "b"}
    assert result.scores["w.1"] == 0.09999999999999998 + 2 * 0.25
    config = AuctionConfig(locality_offset=0)
    assert schedule(cells, [LRPWork("w", 1, 100, 100)], config).placements == {"w.1": "a"}


def test_task_locality_counts_any_task_auction_md_4_3():
    """auction.md 4.3 / 5: tasks count every task on the cell, any guid; zones ignored."""
    cells = [cell("a", zone="z1", tasks=("other",)), cell("b", zone="z1", lrps=("x",) * 5)]
    result = schedule(cells, [TaskWork("t1", 10, 10), TaskWork("t2", 10, 10)])
    assert result.placements == {"t1": "b", "t2": "a"}
    assert result.scores["t2"] > 1000


def test_zone_walk_pools_equal_counts_and_counts_incompatible_cells_auction_md_4_2():
    """auction.md 4.2: counts over all cells (compatible or not); equal-count zones pooled."""
    cells = [
        cell("z1-full", zone="z1", available=Resources(100, 100, 1)),
        cell("z2-empty", zone="z2"),
        cell("z3-win", zone="z3", starting_containers=3),
        cell("z1-incompatible", zone="z1", preloaded_rootfses=(), lrps=("w",)),
    ]
    # z1 holds one instance (on an incompatible cell): z2 and z3 are pooled at 0;
    # z2-empty scores lower than z3-win (starting containers) and wins.
    result = schedule(cells, [LRPWork("w", 1, 10, 10)])
    assert result.placements == {"w.1": "z2-empty"}
    # after that win z2 has 1 too; z3 (0) is walked first although z1 and z2 score lower
    cells[0] = cell("z1-full", zone="z1", available=Resources(1000, 1000, 10))
    work = [LRPWork("w", 1, 10, 10), LRPWork("w", 2, 10, 10)]
    assert schedule(cells, work).placements == {"w.1": "z2-empty", "w.2": "z3-win"}


def test_fall_through_to_next_group_auction_md_4_2():
    """auction.md 4.2 step 3: no fitting cell in the emptiest zone -> the next group."""
    cells = [cell("empty-zone", zone="z1", available=Resources(5, 1000, 10)),
             cell("loaded", zone="z2", lrps=("w", "w"))]
    result = schedule(cells, [LRPWork("w", 2, 100, 10)])
    assert result.placements == {"w.2": "loaded"}
    assert result.scores["w.2"] > 2000


def test_bin_pack_normalised_per_zone_auction_md_4_4():
    """auction.md 4.4: w_bin > 0 ranks each zone's cells by index (0, 1, ...)."""
    cells = [cell("a", zone="z1", index=7), cell("b", zone="z1", index=3),
             cell("c", zone="z2", index=9)]
    config = AuctionConfig(bin_pack_first_fit_weight=0.5)
    result = schedule(cells, [TaskWork("t", 1, 1), LRPWork("w", 0, 10, 10)], config)
    # b ranks 0 in z1, c ranks 0 in z2: tie broken by input order -> b
    assert result.placements["w.0"] == "b"
    result = schedule(cells[:1] + cells[2:], [LRPWork("w", 0, 10, 10)], config)
    assert result.scores["w.0"] == (EMPTY_10 + 0.0) + 0.0  # rank 0: no bin term although index 7


def test_negative_bin_weight_uses_raw_index_auction_md_4_4():
    """auction.md 4.4: w_bin <= 0 multiplies the raw index."""
    cells = [cell("a", index=0), cell("b", index=4)]
    config = AuctionConfig(bin_pack_first_fit_weight=-0.5)
    result = schedule(cells, [LRPWork("w", 0, 10, 10)], config)
    assert result.placements == {"w.0": "b"}
    assert result.scores["w.0"] == ((EMPTY_10 + 0.0) + 0.0) + 4 * -0.5


def test_reservation_raw_memory_and_later_bids_auction_md_4_6():
    """auction.md 4.6: a win reserves raw memory (not the proxy) and changes later bids."""
    c = cell("a", available=Resources(300, 1000, 10), proxy_memory_mb=32)
    result = schedule([c], [LRPWork("x", 0, 256, 1), LRPWork("y", 0, 10, 1)])
    assert result.placements == {"x.0": "a", "y.0": "a"}  # 300-256=44 >= 10+32
    assert [w.identifier for w in result.won["a"]] == ["x.0", "y.0"]
    two = [cell("a"), cell("b")]
    result = schedule(two, [TaskWork("t1", 100, 100), TaskWork("t2", 100, 100)])
    assert result.placements == {"t1": "a", "t2": "b"}


def test_bin_pack_ties_go_to_the_lower_cell_index_auction_md_4_6():
    """auction.md 4.6: with bin_pack_first_fit_weight > 0 a zone's input positions are
    dealt to its cells in index order: X (z1, index 5), B (z2), Y (z1, index 1) are tried
    Y, B, X, so the empty cells' exact tie for a task goes to Y, not to X (input order)."""
    cells = [cell("X", "z1", 5), cell("B", "z2", 0), cell("Y", "z1", 1)]
    task = [TaskWork("t", 100, 100)]
    assert schedule(cells, task, AuctionConfig(bin_pack_first_fit_weight=0.5)).placements == {
        "t": "Y"}
    assert schedule(cells, task, AuctionConfig()).placements == {"t": "X"}
    # The explanation path walks the same order.
    explained = schedule(cells, task, AuctionConfig(bin_pack_first_fit_weight=0.5), explain=True)
    assert explained.placements == {"t": "Y"}
    assert [v.cell_id for v in explained.explanations[0].cells] == ["Y", "B", "X"]


def test_go_compat_bin_pack_ranks_equal_indices_in_go_order_auction_md_2_1():
    """auction.md 2.1 (3): 13 cells of one zone, twelve of index 1 and one of index 0: Go's
    sort.Sort ranks the index-1 cells 6, 2, 3, 4, 5, 0, 7, ... (positions), so the exact
    tie between the empty index-1 cells goes to the one Go ranks first (input position 6,
    cell c6), where the stable order would pick c0."""
    cells = [cell(f"c{n}", "z1", 1) for n in range(12)] + [cell("c12", "z1", 0)]
    # Every cell but the index-0 one is equally empty; index 0 is full.
    cells[12] = cell("c12", "z1", 0, available=Resources(0, 0, 0))
    lrp = [LRPWork("web", 0, 100, 100)]
    config = AuctionConfig(bin_pack_first_fit_weight=1e-9)
    assert schedule(cells, lrp, config).placements == {"web.0": "c0"}
    go = AuctionConfig(bin_pack_first_fit_weight=1e-9, go_compat=True)
    # With a bin-pack weight the lower rank scores lower too: the winner is Go's rank 1.
    assert schedule(cells, lrp, go).placements == {"web.0": "c6"}


def test_one_process_over_every_cell_places_as_the_scan_auction_md_4_4():
    """auction.md 4.4-4.6: once one process holds every cell its items are searched in
    heaps of its own (locality included); placements and scores stay the scan's, ties
    and the zone walk included."""
    from auction.engine import CellState

    total = Resources(4000, 4000, 200)
    cells = [CellState(f"c{i:02d}", f"z{i % 3}", i // 3, total,
                       Resources(4000 - 100 * (i % 4), 4000, 200), starting_containers=i % 2,
                       lrps=("big",) * (i % 5))
             for i in range(24)]
    work = [LRPWork("big", i, 64 + 64 * (i % 3), 64) for i in range(900)]
    work += [LRPWork("small", i, 64, 64) for i in range(30)]
    for config in (AuctionConfig(), AuctionConfig(bin_pack_first_fit_weight=0.5),
                   AuctionConfig(locality_offset=3, starting_container_weight=1.0)):
        fast = schedule(cells, work, config)
        scan = schedule(cells, work, config, explain=True)
        assert fast.failures
        assert (fast.placements, fast.failures, fast.scores) == (
            scan.placements, scan.failures, scan.scores)

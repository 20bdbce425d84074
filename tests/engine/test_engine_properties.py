"""Property tests over random clusters and batches, for every strategy (auction.md 4, 7, 8).

Each scheduled auction is replayed item by item against an independent model of the cells
(the oracle's filters and fit check), so the strategies' invariants are checked in the
state each decision saw.
"""

from __future__ import annotations

import math
import random
import zlib

from engine_gen import random_case
from engine_oracle import (
    _defaults,
    batch_order,
    drivers_ok,
    filter_error,
    problems_of,
    rootfs_ok,
    tags_ok,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auction.engine import AuctionConfig, commit_all, parse_case, schedule

STRATEGY_NAMES = ["diego", "dea", "objective", "random"]
PROPS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
cases = st.builds(lambda seed, big: random_case(random.Random(seed), cells=12 if big else None,
                                                items=40 if big else None),
                  st.integers(0, 2**32 - 1), st.booleans())


def _run(doc: dict, strategy: str, seed: int = 0, commit: bool = False):
    case = parse_case(doc)
    config = AuctionConfig(
        starting_container_weight=case.config.starting_container_weight,
        bin_pack_first_fit_weight=case.config.bin_pack_first_fit_weight,
        starting_container_count_maximum=case.config.starting_container_count_maximum,
        locality_offset=case.config.locality_offset, placement_strategy=strategy, seed=seed)
    result = schedule(case.cells, case.work, config)
    return (commit_all(result, case.cells) if commit else result), case


@PROPS
@given(cases, st.sampled_from(STRATEGY_NAMES), st.integers(0, 1000))
def test_every_item_placed_or_failed_exactly_once_auction_md_10(doc, strategy, seed):
    """auction.md 10: placements and failures hold every batch item exactly once."""
    result, _ = _run(doc, strategy, seed, commit=True)
    assert len(set(result.order)) == len(result.order)
    assert set(result.placements).isdisjoint(result.failures)
    assert set(result.placements) | set(result.failures) == set(result.order)
    assert set(result.scores) == set(result.placements)


@PROPS
@given(cases, st.sampled_from(STRATEGY_NAMES), st.integers(0, 1000))
def test_no_cell_exceeds_its_capacity_auction_md_7(doc, strategy, seed):
    """auction.md 4.6 and 7: tentative reservations never overdraw a cell, and what a cell
    accepts at commit (memory + proxy for LRPs, 0 MB for a 0 MB LRP) fits its available
    resources."""
    result, case = _run(doc, strategy, seed, commit=True)
    for cell in case.cells:
        won = result.won.get(cell.cell_id, [])
        assert sum(w.memory_mb for w in won) <= cell.available.memory_mb
        assert sum(w.disk_mb for w in won) <= cell.available.disk_mb
        assert len(won) <= cell.available.containers
        accepted = [w for w in result.won.get(cell.cell_id, [])
                    if result.placements.get(w.identifier) == cell.cell_id]
        mem = sum(w.memory_mb + (cell.proxy_memory_mb if hasattr(w, "index") and w.memory_mb
                                 else 0)
                  for w in accepted)
        assert mem <= cell.available.memory_mb
        assert sum(w.disk_mb for w in accepted) <= cell.available.disk_mb
        assert len(accepted) <= cell.available.containers


@PROPS
@given(cases, st.sampled_from(STRATEGY_NAMES), st.integers(0, 1000))
def test_same_input_same_output_auction_md_8(doc, strategy, seed):
    """auction.md 8: deterministic for a given seed (one Random(seed) per engine call)."""
    first, _ = _run(doc, strategy, seed)
    again, _ = _run(doc, strategy, seed)
    assert (first.order, first.placements, first.failures, first.scores) == (
        again.order, again.placements, again.failures, again.scores)


def _f_default(cell: dict, item: dict, zones: list[str]) -> float:
    """The default objective of auction.md 8.2, written out by hand, same operation order."""
    guid = item.get("process_guid", item.get("task_guid"))
    number = item.get("index", 0)
    total = number + 1 if item["kind"] == "lrp" else 1
    app = zlib.crc32(guid.encode())
    zone_number = zones.index(cell["zone"]) + 1
    running = [zlib.crc32(g.encode()) for g in cell["lrps"]].count(app)
    cached = 1 if guid in cell["lrps"] else 0
    av, tot = cell["available"], cell["total"]
    return ((((math.fmod(float(number + app + zone_number), len(zones)) + 1) + 0.0 * cached)
             + (1 / 3) * (av["memory_mb"] / tot["memory_mb"]))
            + (1 / 3) * (av["disk_mb"] / tot["disk_mb"])) + (1 / 3) * (1 - running / total)


@PROPS
@given(cases, st.sampled_from(STRATEGY_NAMES), st.integers(0, 1000))
def test_strategy_invariants_in_replay_auction_md_8(doc, strategy, seed):
    """auction.md 8: feasible winners, failures only for lack of a feasible cell (same
    string), dea's narrowing, objective's maximum; replayed against an independent model."""
    result, _ = _run(doc, strategy, seed)
    config, cells, lrps, tasks = _defaults(doc)
    items = batch_order(lrps, tasks)
    assert [i["id"] for i in items] == result.order
    zones = sorted({c["zone"] for c in cells})
    cap = config["starting_container_count_maximum"]
    in_flight = sum(c["starting_containers"] for c in cells)
    for item in items:
        ident = item["id"]
        compatible = [c for c in cells if rootfs_ok(c, item["rootfs"])
                      and drivers_ok(c, item["volume_drivers"]) and tags_ok(c, item["placement_tags"])]
        feasible = [c for c in compatible if not problems_of(c, item)]
        if not cells or (cap > 0 and in_flight >= cap):
            assert ident in result.failures
            continue
        if not compatible:
            assert result.failures[ident] == filter_error(cells, item)
            continue
        if not feasible:
            common = set.intersection(*(problems_of(c, item) for c in compatible))
            expected = "insufficient resources" + (": " + ", ".join(sorted(common)) if common else "")
            assert result.failures[ident] == expected
            continue
        assert ident in result.placements, ident
        chosen = next(c for c in cells if c["cell_id"] == result.placements[ident])
        assert chosen in feasible
        if strategy == "dea":
            pool = feasible
            if item["kind"] == "lrp":
                guid = item["process_guid"]
                zone_load = {z: sum(c["lrps"].count(guid) for c in cells if c["zone"] == z)
                             for z in zones}
                least = min(zone_load[c["zone"]] for c in pool)
                assert zone_load[chosen["zone"]] == least
                pool = [c for c in pool if zone_load[c["zone"]] == least]
                fewest = min(c["lrps"].count(guid) for c in pool)
                assert chosen["lrps"].count(guid) == fewest
                pool = [c for c in pool if c["lrps"].count(guid) == fewest]
            memory = sorted(c["available"]["memory_mb"] for c in pool)
            assert chosen["available"]["memory_mb"] >= memory[len(memory) // 2]
            assert result.scores[ident] is None
        if strategy == "objective":
            values = [_f_default(c, item, zones) for c in feasible]
            best = max(values)
            assert feasible[values.index(best)] is chosen  # first maximum in input order
            assert result.scores[ident] == best
        # the reservation of auction.md 4.6, shared by every strategy
        chosen["available"]["memory_mb"] -= item["memory_mb"]
        chosen["available"]["disk_mb"] -= item["disk_mb"]
        chosen["available"]["containers"] -= 1
        chosen["starting_containers"] += 1
        in_flight += 1
        (chosen["lrps"] if item["kind"] == "lrp" else chosen["tasks"]).append(
            item.get("process_guid", item.get("task_guid")))


def test_random_reaches_every_feasible_cell_auction_md_8_3():
    """auction.md 8.3: over many seeds every feasible cell gets chosen (loose frequencies)."""
    doc = {"cells": [{"cell_id": c, "zone": "z",
                      "total": {"memory_mb": 100, "disk_mb": 100, "containers": 5}}
                     for c in ("a", "b", "c")] + [
               {"cell_id": "small", "zone": "z",
                "total": {"memory_mb": 1, "disk_mb": 100, "containers": 5}}],
           "tasks": [{"task_guid": "t", "memory_mb": 10, "disk_mb": 10}]}
    seen = [(_run(doc, "random", seed)[0]).placements["t"] for seed in range(300)]
    counts = {c: seen.count(c) for c in ("a", "b", "c", "small")}
    assert counts["small"] == 0
    assert all(50 <= counts[c] <= 150 for c in ("a", "b", "c")), counts
    assert len({tuple(_run(doc, "random", s)[0].placements.values()) for s in range(5)}) > 1

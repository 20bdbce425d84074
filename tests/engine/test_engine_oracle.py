"""The fast engine against the straightforward oracle on thousands of random cases.

auction.md 2-7 and 10: identical order, placements, errors and (bit-identical) scores, for
the fast heap path, the explanation path (``explain=True``) and the commit.
"""

from __future__ import annotations

import random

import pytest
from engine_gen import random_case, scale_case
from engine_oracle import run as oracle_run

from auction.engine import commit_all, parse_case, run_case, schedule


def _engine(doc: dict, explain: bool = False) -> dict:
    case = parse_case(doc)
    if explain:
        return commit_all(schedule(case.cells, case.work, case.config, explain=True),
                          case.cells).to_case_output()
    return run_case(case).to_case_output()


@pytest.mark.parametrize("block", range(6))
def test_small_random_cases_match_oracle_auction_md_4(block: int):
    """auction.md 4 (+2, 3, 6, 7): 3,000 small random clusters/batches, exact equality."""
    for seed in range(block * 500, (block + 1) * 500):
        doc = random_case(random.Random(seed))
        assert _engine(doc) == oracle_run(doc), f"seed {seed}"


def test_explanation_path_matches_oracle_auction_md_4():
    """auction.md 4: the explanation path places exactly like the oracle (600 cases)."""
    for seed in range(10_000, 10_600):
        doc = random_case(random.Random(seed))
        assert _engine(doc, explain=True) == oracle_run(doc), f"seed {seed}"


@pytest.mark.parametrize("block", range(3))
def test_larger_random_cases_match_oracle_auction_md_4_6(block: int):
    """auction.md 4.6: many wins per cell (stale heap entries, exclusions) stay exact."""
    for seed in range(20_000 + block * 40, 20_000 + (block + 1) * 40):
        rng = random.Random(seed)
        doc = random_case(rng, cells=rng.randint(15, 50), items=rng.randint(80, 300),
                          filters=rng.random() < 0.5)
        assert _engine(doc) == oracle_run(doc), f"seed {seed}"


def test_uniform_clusters_with_ties_match_oracle_auction_md_4_6():
    """auction.md 4.6: identical cells and items, one or two processes: exact ties among
    cells with and without the process all go to the first cell in input order."""
    for seed in range(30_000, 30_400):
        rng = random.Random(seed)
        doc = random_case(rng, cells=rng.randint(2, 12), items=rng.randint(5, 60),
                          filters=False, apps=rng.randint(1, 2), uniform=True)
        assert _engine(doc) == oracle_run(doc), f"seed {seed}"


def test_scale_shape_matches_oracle_auction_md_4_2():
    """auction.md 4.2: the benchmark's shape (pooled equal zones, many apps) in miniature."""
    doc = scale_case(cells=25, zones=5, apps=60, instances=12)
    assert _engine(doc) == oracle_run(doc)


def test_full_cells_fail_identically_auction_md_6_4():
    """auction.md 6.4: a cluster that fills up fails the rest with the same strings."""
    doc = scale_case(cells=6, zones=3, apps=30, instances=5)
    for c in doc["cells"]:
        c["total"] = {"memory_mb": 1000, "disk_mb": 3000, "containers": 12}
    out = _engine(doc)
    assert out["failures"] and out == oracle_run(doc)


def test_a_flood_of_one_process_beside_others_that_still_fit_matches_oracle_auction_md_4_2():
    """auction.md 4.2: once an instance of a process finds no cell, the chooser answers the
    next of the same process and size without a walk until a win changes the state; a
    smaller process ordered between them still gets its cell, and every error is the
    oracle's."""
    placed_after_a_failure = 0
    for seed in range(40_000, 40_060):
        rng = random.Random(seed)
        cells = [{"cell_id": f"c{i}", "zone": f"z{i % 3}", "index": i,
                  "total": {"memory_mb": rng.choice([1000, 2000]), "disk_mb": 4000, "containers": 40}}
                 for i in range(rng.randint(2, 6))]
        lrps = ([{"process_guid": "flood", "index": i, "memory_mb": 400, "disk_mb": 10}
                 for i in range(rng.randint(20, 60))]
                + [{"process_guid": f"small{j}", "index": rng.randint(0, 70),
                    "memory_mb": rng.choice([50, 100, 500]), "disk_mb": 10} for j in range(rng.randint(1, 8))])
        doc = {"cells": cells, "lrps": lrps, "tasks": []}
        got = _engine(doc)
        assert got == oracle_run(doc), f"seed {seed}"
        first_failure = next((n for n, ident in enumerate(got["order"]) if ident in got["failures"]), None)
        placed_after_a_failure += first_failure is not None and any(
            ident in got["placements"] for ident in got["order"][first_failure:])
    assert placed_after_a_failure > 10  # the case the answer without a walk must not swallow

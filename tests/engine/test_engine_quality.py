"""Quality metrics of a placement (auction.md 9)."""

from __future__ import annotations

import math

import pytest
from engine_builders import cell

from auction.engine import (
    AuctionConfig,
    LRPWork,
    Resources,
    TaskWork,
    communications,
    distribution_score,
    distribution_scores,
    failure_summary,
    final_memory_in_use,
    memory_in_use,
    run_auction,
    schedule,
    spread,
    zone_skew,
)


def test_distribution_score_auction_md_9():
    """auction.md 9: population std-dev ÷ mean of memory in use; 0 when the mean is 0."""
    assert distribution_score([0, 0]) == 0.0
    assert distribution_score([100, 300]) == pytest.approx(100 / 200)
    cells = [cell("a", available=Resources(900, 1000, 10)), cell("b")]
    assert memory_in_use(cells) == [100, 0]
    result = run_auction(cells, [TaskWork("t", 100, 1)])
    assert final_memory_in_use(cells, result) == [100, 100]
    assert distribution_score(final_memory_in_use(cells, result)) == 0.0


def test_distribution_score_is_the_exact_ratio_rounded_once_auction_md_9():
    """auction.md 9: std ÷ mean, the figure of the exact values, whatever their size."""
    from fractions import Fraction

    values = [8192 * 64 + i % 7 for i in range(1000)]  # near-equal big numbers: cancellation
    n = len(values)
    mean = Fraction(sum(values), n)
    variance = sum((Fraction(v) - mean) ** 2 for v in values) / n
    assert distribution_score(values) == pytest.approx(math.sqrt(variance) / float(mean), rel=1e-15)
    assert distribution_score([5]) == 0.0 and distribution_score([]) == 0.0


def test_initial_and_final_distribution_of_an_auction_auction_md_9():
    """auction.md 9: the final score counts what the commit placed, proxy memory included,
    and nothing a cell rejected."""
    cells = [cell("a", available=Resources(900, 1000, 10)), cell("b"), cell("c", available=Resources(300, 1000, 10))]
    work = [LRPWork("w", 0, 200, 1), LRPWork("w", 1, 200, 1), TaskWork("t", 100, 1)]
    result = run_auction(cells, work)
    assert result.won
    expected = (distribution_score(memory_in_use(cells)), distribution_score(final_memory_in_use(cells, result)))
    assert distribution_scores(cells, result) == expected
    assert expected[0] != expected[1]


def test_zone_skew_auction_md_9():
    """auction.md 9: max − min instances per zone over every zone with a cell."""
    cells = [cell("a", zone="z1", lrps=("w", "w", "v")), cell("b", zone="z2"),
             cell("c", zone="z3", lrps=("w",))]
    skew = zone_skew(cells)
    assert skew.per_app == {"v": 1, "w": 2}
    assert (skew.worst_app, skew.worst_skew, skew.apps_over_one) == ("w", 2, 1)
    result = schedule(cells, [LRPWork("w", 3, 10, 10)])
    assert result.placements == {"w.3": "b"}
    assert zone_skew(cells, result).per_app["w"] == 1


def test_failures_and_communications_auction_md_9():
    """auction.md 9: failures with counts per error; communications per strategy."""
    cells = [cell("a"), cell("b")]
    work = [TaskWork("t", 10, 1), TaskWork("huge", 5000, 1), LRPWork("w", 0, 1, 1)]
    result = run_auction(cells, work)
    summary = failure_summary(result)
    assert (summary.count, summary.by_error) == (1, {"insufficient resources: memory": 1})
    assert math.isclose(summary.fraction, 1 / 3)
    assert communications(result, cells_asked=2, fetch_attempts=2) == 2 * 2 + len(result.won)
    dea = schedule(cells, work, AuctionConfig(placement_strategy="dea"))
    assert communications(dea, cells_asked=2) == 2 + 2


def test_spread_auction_md_9():
    """auction.md 9: min, max, mean, population std-dev (wait times, attempts)."""
    assert spread([1, 3]) == {"min": 1.0, "max": 3.0, "mean": 2.0, "std": 1.0}
    assert spread([]) == {"min": 0.0, "max": 0.0, "mean": 0.0, "std": 0.0}

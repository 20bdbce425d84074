"""The comparison strategies and the objective language (auction.md 8)."""

from __future__ import annotations

import math

import pytest
from engine_builders import cell

from auction.engine import (
    AuctionConfig,
    LRPWork,
    ObjectiveConfig,
    ObjectiveError,
    Resources,
    TaskWork,
    schedule,
    validate_objective,
)
from auction.engine.strategies.expr import evaluate, parse


def cfg(strategy, **kw):
    return AuctionConfig(placement_strategy=strategy, **kw)


def test_dea_zone_then_instances_then_top_half_auction_md_8_1():
    """auction.md 8.1: least-loaded zone, fewest instances, top half by memory."""
    cells = [cell("loaded-zone", zone="z1", lrps=("w",)),
             cell("has-one", zone="z2", lrps=("w",), available=Resources(1000, 1000, 10)),
             cell("low-mem", zone="z2", available=Resources(200, 1000, 10)),
             cell("high-mem", zone="z2", available=Resources(900, 1000, 10)),
             cell("z3-has", zone="z3", lrps=("w", "w"))]
    # zone counts: z1=1, z2=1, z3=2; min zone count 1 -> z1, z2; fewest on cell 0 ->
    # low-mem, high-mem; top half: threshold = sorted([200, 900])[1] = 900 -> high-mem.
    for seed in range(20):
        result = schedule(cells, [LRPWork("w", 3, 100, 10)], cfg("dea", seed=seed))
        assert result.placements == {"w.3": "high-mem"}
        assert result.scores == {"w.3": None}


def test_dea_tasks_skip_zone_and_instance_steps_auction_md_8_1():
    """auction.md 8.1: tasks go straight to the top half by memory."""
    cells = [cell("a", available=Resources(100, 1000, 10)), cell("b", lrps=("x",) * 3),
             cell("c", available=Resources(990, 1000, 10))]
    picks = {schedule(cells, [TaskWork("t", 10, 10)], cfg("dea", seed=s)).placements["t"]
             for s in range(40)}
    assert picks == {"b", "c"}  # threshold = sorted([100, 1000, 990])[1] = 990


def test_strategies_fail_exactly_like_diego_auction_md_8():
    """auction.md 8: an item fails only for lack of a feasible cell, with diego's string."""
    cells = [cell("a", available=Resources(50, 1000, 10)), cell("b", placement_tags=("s",))]
    work = [LRPWork("w", 0, 100, 10), TaskWork("t", 10, 10, rootfs="preloaded:nope")]
    expected = schedule(cells, work).failures
    for name in ("dea", "objective", "random"):
        assert schedule(cells, work, cfg(name, seed=3)).failures == expected


def test_objective_default_prefers_zone_term_and_reports_f_auction_md_8_2():
    """auction.md 8.2: the integer zone term dominates; the winner's score is its f."""
    cells = [cell("a", zone="z1"), cell("b", zone="z2")]
    result = schedule(cells, [LRPWork("w", 0, 100, 100)], cfg("objective"))
    assert result.placements["w.0"] in ("a", "b")
    assert 1.0 <= result.scores["w.0"] <= 3.0 + 1e-9  # (x mod 2) + 1 + weights summing to 1
    custom = ObjectiveConfig(expression="r.index - 5 * count(ai.app_source_blob_id, "
                                        "r.cached_blob_ids)")
    cells2 = [cell("a", cached_blob_ids=("w",)), cell("b")]
    result = schedule(cells2, [LRPWork("w", 0, 1, 1)], cfg("objective", objective=custom))
    assert result.placements == {"w.0": "b"} and result.scores == {"w.0": 0.0}


def test_objective_ties_go_to_first_cell_auction_md_8_2():
    """auction.md 8.2: ties go to the first cell in input order; no randomness."""
    flat = ObjectiveConfig(expression="1")
    cells = [cell("x"), cell("y")]
    assert schedule(cells, [TaskWork("t", 1, 1)], cfg("objective", objective=flat,
                                                      seed=9)).placements == {"t": "x"}


@pytest.mark.parametrize("text,position,reason", [
    ("1 +", 4, "unexpected end of expression"),
    ("r.nope * 2", 1, "unknown name"),
    ("ai.app_id mod r.index", 11, "modulus must be a constant"),
    ("r.running_app_ids + 1", 1, "only be used inside count"),
    ("ai.app_source_blob_id", 1, "only be used inside count"),
    ("count(ai.app_id, r.index)", 18, "count needs a list"),
    ("(1 + 2", 7, "expected ')'"),
    ("1 $ 2", 3, "unexpected character"),
    ("__import__('os')", 12, "unexpected character"),
    ("__import__(1)", 1, "unknown name"),
    ("1 2", 3, "unexpected '2'"),
])
def test_bad_expression_names_position_auction_md_8_2(text, position, reason):
    """auction.md 8.2: rejected with 'invalid objective: <reason>' naming the position."""
    with pytest.raises(ObjectiveError) as info:
        parse(text)
    message = str(info.value)
    assert message.startswith("invalid objective: ")
    assert reason in message and message.endswith(f"at position {position}")


def test_expression_limits_and_weights_auction_md_8_2():
    """auction.md 8.2: at most 1,000 characters; weights >= 0 summing to 1 (±1e-9)."""
    with pytest.raises(ObjectiveError):
        parse("1" + " + 1" * 300)
    validate_objective(ObjectiveConfig())
    with pytest.raises(ValueError):
        validate_objective(ObjectiveConfig(alpha=0.5))
    with pytest.raises(ValueError):
        validate_objective(ObjectiveConfig(alpha=-0.1, beta=1.1, gamma=0.0, delta=0.0))
    with pytest.raises(ValueError):
        schedule([cell("a")], [TaskWork("t", 1, 1)],
                 cfg("objective", objective=ObjectiveConfig(expression="r.bad")))


@pytest.mark.parametrize("text", ["(" * 333, "-" * 998, "(" * 65 + "1" + ")" * 65,
                                  "1" + " + 1" * 64, "-" * 65 + "1"])
def test_nesting_is_bounded_with_a_clear_error_auction_md_8_2(text):
    """auction.md 8.2: more than 64 levels of nesting is refused by name, never a
    RecursionError (333 "(" or 998 "-" crashed the compare page)."""
    with pytest.raises(ObjectiveError, match="nested deeper than 64 levels"):
        parse(text)
    parse("(" * 60 + "1" + ")" * 60)
    parse("1" + " + 1" * 60)


def test_expression_semantics_auction_md_8_2():
    """auction.md 8.2: precedence, unary minus, fmod sign, count, -inf on /0 or mod 0."""
    env = {"r.index": 3, "azs": 0.0, "alpha": 0.5, "r.running_app_ids": {7: 2},
           "ai.app_id": 7, "ai.app_source_blob_id": "g", "r.cached_blob_ids": {"g": 1}}
    assert evaluate(parse("1 + 2 * 3 - 4 / 2"), env) == 5.0
    assert evaluate(parse("-7 mod 3"), env) == math.fmod(-7, 3) == -1.0
    assert evaluate(parse("2 - -r.index"), env) == 5.0
    assert evaluate(parse("count(ai.app_id, r.running_app_ids) * 10"), env) == 20.0
    assert evaluate(parse("count(ai.app_source_blob_id, r.cached_blob_ids)"), env) == 1.0
    assert evaluate(parse("r.index / (alpha - 0.5)"), env) == -math.inf
    assert evaluate(parse("r.index mod azs"), env) == -math.inf
    assert evaluate(parse("1e308 * 10"), env) == -math.inf
    assert evaluate(parse("7 mod (azs + 4)"), env) == 3.0  # constants may be combined

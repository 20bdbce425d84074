"""A plan keeps its auctions' replay records, bounded (plans.md 1.7)."""

from __future__ import annotations

import json

import pytest

from auction.models import AuctionRun, PlanAuction
from auction.services import plans as service
from auction.services.plans import PlanReplays, plan_create
from auction.services.sim import simulate_in_database

pytestmark = pytest.mark.django_db

#: Three scale-ups at three instants: at least three auctions in the plan's run.
CHANGES = [{"action": "scale", "process_guid": "lrp-a", "instances": n, "at": at}
           for n, at in ((4, 0), (5, 30), (6, 60))]


@pytest.fixture
def placed(db: None) -> None:
    simulate_in_database("seed-example", 60.0)


def test_a_plan_keeps_its_first_auctions_the_first_with_every_verdict_plans_md_1_7(placed, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(service, "PLAN_REPLAYS", 2)
    monkeypatch.setattr(service, "PLAN_FULL_REPLAYS", 1)
    live = AuctionRun.objects.count()
    plan = plan_create({"changes": CHANGES, "horizon_s": 300})
    assert len(plan.result["auctions"]) >= 3
    kept = list(PlanAuction.objects.filter(plan=plan).order_by("number"))
    assert [k.number for k in kept] == [1, 2]
    assert [k.record["detail"] for k in kept] == ["full", "summary"]
    assert all(note["trimmed"] for note in kept[1].record["explanations"])
    # Each kept record is the auction the result's line of the same number describes.
    for k in kept:
        line = plan.result["auctions"][k.number - 1]
        assert (k.started_at, k.record["items"], k.record["placed"]) == (line["at"], line["items"], line["placed"])
    assert plan.result["replays"] | {"bytes": 0} == {"kept": 2, "limit": 2, "full": 1, "full_limit": 1, "bytes": 0,
                                                     "byte_limit": service.PLAN_REPLAY_BYTES, "stopped_by": "count"}
    assert AuctionRun.objects.count() == live  # never the live cluster's records
    plan.delete()
    assert not PlanAuction.objects.exists()


def test_a_plans_records_stay_within_the_byte_budget_plans_md_1_7(placed, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    first = plan_create({"changes": CHANGES, "horizon_s": 300})
    sizes = [len(json.dumps(k.record, separators=(",", ":")))
             for k in PlanAuction.objects.filter(plan=first).order_by("number")]
    assert len(sizes) >= 3
    # Room for two records, not three (a record's wall-clock timings vary by a few bytes).
    budget = sizes[0] + sizes[1] + 64
    assert budget < sum(sizes[:3]) - 64
    monkeypatch.setattr(service, "PLAN_REPLAY_BYTES", budget)
    plan = plan_create({"changes": CHANGES, "horizon_s": 300})
    kept = PlanAuction.objects.filter(plan=plan)
    assert kept.count() == 2
    assert sum(len(json.dumps(k.record, separators=(",", ":"))) for k in kept) <= budget
    assert plan.result["replays"]["stopped_by"] == "bytes"
    assert len(plan.result["auctions"]) > 2  # the rest are the summary lines


def test_the_sink_stops_asking_once_full_plans_md_1_7() -> None:
    sink = PlanReplays(count=3, full=0, budget=10_000)
    record = {"order": ["a.0"], "explanations": None, "detail": "none", "started_at": 0.0}
    assert [sink(dict(record)) for _ in range(3)] == [True, True, False]
    assert len(sink.kept) == 3 and sink.summary()["stopped_by"] == "count"
    tiny = PlanReplays(count=10, full=0, budget=10)
    assert tiny(dict(record)) is False and tiny.kept == [] and tiny.stopped_by == "bytes"


def test_the_result_lists_a_bounded_number_of_auction_lines_plans_md_1_4(placed, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from auction.sim import plans as core_plans

    monkeypatch.setattr(core_plans, "AUCTION_LINES", 2)
    plan = plan_create({"changes": CHANGES, "horizon_s": 300})
    assert len(plan.result["auctions"]) == 2 and plan.result["auctions_total"] >= 3

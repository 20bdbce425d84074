"""The auctioneer over the database (auction.md 1, 6, 7; bbs.md 1.4, 7)."""

from __future__ import annotations

import pytest

from auction.models import ActualLRP, AuctionRun, Cell, PendingWork, Task
from auction.services.lrps import desired_lrp_desire, desired_lrp_update
from auction.services.scenarios import scenario_load
from auction.services.sim import auction_once, auctioneer_run
from auction.services.tasks import task_desire

pytestmark = pytest.mark.django_db


def by_key() -> dict[str, tuple[str, str]]:
    return {f"{a.desired_id}.{a.index}": (a.state, a.cell_id) for a in ActualLRP.objects.all()}


def test_seed_example_places_all_seven_in_the_seed_order() -> None:
    """auction.md 2 / dashboard.md C4: B.0, A.0, C, D, B.1, A.1, A.2, all placed."""
    scenario_load("seed-example")
    summaries = auctioneer_run()
    assert [(s.items, s.placed, s.failed) for s in summaries] == [(7, 7, 0)]
    run = AuctionRun.objects.get()
    assert run.order == ["lrp-b.0", "lrp-a.0", "task-c", "task-d", "lrp-b.1", "lrp-a.1", "lrp-a.2"]
    states = by_key()
    assert {s for s, _ in states.values()} == {"CLAIMED"}
    zones = dict(Cell.objects.values_list("cell_id", "zone__name"))
    # Zone balancing (auction.md 4.2): each app's instances spread over both zones.
    for guid in ("lrp-a", "lrp-b"):
        assert {zones[c] for k, (_, c) in states.items() if k.startswith(guid)} == {"z1", "z2"}
    assert set(Task.objects.values_list("state", flat=True)) == {"RUNNING"}
    assert not PendingWork.objects.exists()
    assert run.explanations is not None and len(run.explanations) == 7


def test_failures_are_reported_and_carried_over() -> None:
    """auction.md 1 steps 7-8, 6: Fail keeps UNCLAIMED with the error; carried first next time."""
    scenario_load("seed-example")
    auctioneer_run()
    desired_lrp_desire({"process_guid": "huge", "domain": "cf-apps", "instances": 1,
                        "memory_mb": 100_000})
    auctioneer_run()
    huge = ActualLRP.objects.get(desired_id="huge")
    assert (huge.state, huge.placement_error) == ("UNCLAIMED", "insufficient resources: memory")
    carried = PendingWork.objects.get()
    assert (carried.ident, carried.carried, carried.attempts) == ("huge.0", True, 1)
    # Carried-over work alone starts no auction.
    assert auctioneer_run() == []
    desired_lrp_update("lrp-a", {"instances": 4})
    auctioneer_run()
    run = AuctionRun.objects.first()
    assert run.order == ["huge.0", "lrp-a.3"]
    assert run.carried_in == {"huge.0": 1}


def test_task_rejections_fail_on_the_fourth() -> None:
    """bbs.md 7 Reject: rejections 1-3 keep it PENDING, the 4th fails it."""
    scenario_load("seed-example")
    task_desire({"task_guid": "big", "domain": "cf-tasks", "memory_mb": 50_000})
    for attempt in range(1, 5):
        auction_once()
        task = Task.objects.get(task_guid="big")
        if attempt < 4:
            assert (task.state, task.rejection_count) == ("PENDING", attempt)
    assert (task.state, task.failed, task.failure_reason) == (
        "COMPLETED", True, "insufficient resources: memory")
    assert not PendingWork.objects.filter(ident="big").exists()


def test_duplicate_requests_never_place_twice() -> None:
    """auction.md 1 step 4: dedupe; an instance already claimed is not auctioned again."""
    scenario_load("seed-example")
    from auction.services.work import work_request_lrps

    work_request_lrps([("lrp-a", 0), ("lrp-a", 0)], 0.0, "test")
    auctioneer_run()
    assert ActualLRP.objects.filter(desired_id="lrp-a", index=0).count() == 1
    work_request_lrps([("lrp-a", 0)], 0.0, "again")
    auctioneer_run()
    assert not PendingWork.objects.exists()
    assert ActualLRP.objects.filter(state="CLAIMED").count() == 5


def test_failed_cell_does_not_answer() -> None:
    """auction.md 1 step 3: a failed cell is left out of the auction."""
    scenario_load("seed-example")
    Cell.objects.exclude(cell_id="cell-1").update(state="failed", presence_lost_at=0.0)
    auctioneer_run()
    assert {c for _, c in by_key().values() if c} == {"cell-1"}


def test_a_dead_holders_lock_lapses_and_a_live_one_is_renewed(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """auction.md 1 step 2 (Locket-like lock): renewed while held, gone after the TTL."""
    import time

    from auction.services import locks

    monkeypatch.setattr(locks, "LOCK_RENEW_S", 0.1)
    with locks.cluster_lock("t-renew", ttl_s=0.4) as held:
        assert held
        time.sleep(0.8)  # twice the TTL: only renewal keeps it
        with locks.cluster_lock("t-renew", ttl_s=0.4) as other:
            assert not other
    with locks.cluster_lock("t-renew", ttl_s=0.4) as again:
        assert again
    # A holder that dies (no renewer, no release) blocks others for one TTL only.
    dead = locks.redis_client().lock("diego:main:t-dead", timeout=0.3, blocking=False)
    assert dead.acquire()
    with locks.cluster_lock("t-dead", ttl_s=0.3) as other:
        assert not other
    time.sleep(0.4)
    with locks.cluster_lock("t-dead", ttl_s=0.3) as other:
        assert other


def test_a_scale_down_or_removal_takes_its_start_requests_out_of_the_queue_at_once() -> None:
    """bbs.md 1.4: a scale-down's void start requests leave the queue with it, so "waiting" is true."""
    scenario_load("seed-example")
    auctioneer_run()
    desired_lrp_desire({"process_guid": "huge", "domain": "cf-apps", "instances": 1,
                        "memory_mb": 100_000})
    desired_lrp_update("lrp-a", {"instances": 40})
    assert PendingWork.objects.filter(process_guid="lrp-a").count() == 37
    desired_lrp_update("lrp-a", {"instances": 5})
    assert sorted(PendingWork.objects.filter(process_guid="lrp-a").values_list("index", flat=True)) == [3, 4]
    assert PendingWork.objects.filter(process_guid="huge").count() == 1  # other apps keep theirs
    from auction.services.lrps import desired_lrp_remove

    desired_lrp_remove("lrp-a")
    assert not PendingWork.objects.filter(process_guid="lrp-a").exists()

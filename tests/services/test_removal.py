"""Removing and scaling down a big RUNNING app (bbs.md 1.4; issue 27): the rows go and
their events are summaries (bbs.md 8.1), and the request reads each cell's reachability
once, not once per instance."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from auction.models import ActualLRP, BBSEvent, Cell, DesiredLRP, Domain, Zone
from auction.services import events, lrps
from auction.services.cells import chaos_run
from auction.services.clock import clock_reset
from auction.services.lrps import desired_lrp_desire, desired_lrp_remove, desired_lrp_update
from auction.services.store import DbStore
from auction.sim.driver import advance

pytestmark = pytest.mark.django_db

CELLS = 12


def running(instances: int) -> None:
    """``instances`` of app "big" RUNNING on ``CELLS`` cells in 3 zones."""
    clock_reset(0.0, paused=True)
    zones = [Zone.objects.create(name=f"z{z}") for z in range(3)]
    Cell.objects.bulk_create(Cell(cell_id=f"cell-{i:02d}", zone=zones[i % 3], index=i // 3,
                                  memory_mb=8192, disk_mb=65_536, containers=250) for i in range(CELLS))
    Domain.objects.create(name="cf-apps", ttl_s=0, expires_at=None)
    desired_lrp_desire({"process_guid": "big", "domain": "cf-apps", "instances": instances,
                        "memory_mb": 64, "disk_mb": 64, "start_delay_s": 1.0})
    store = DbStore(trigger_auctions=False)
    advance(store, 5.0)
    assert ActualLRP.objects.filter(desired_id="big", state="RUNNING").count() == instances


def queries(action: object) -> int:
    with CaptureQueriesContext(connection) as captured:
        action()  # type: ignore[operator]
    return len(captured)


@pytest.mark.parametrize("instances", [30, 90])
def test_a_removal_reads_each_cell_once_however_many_instances_run(
        monkeypatch: pytest.MonkeyPatch, instances: int) -> None:
    """bbs.md 1.4: the app, every row and its stop go; the statements do not grow with
    the instances (one reachability query per instance made a removal of 100,000 take a
    minute while it held the write lock)."""
    monkeypatch.setattr(events, "EVENT_SUMMARY_OVER", 10)
    running(instances)
    count = queries(lambda: desired_lrp_remove("big"))
    assert count < 30, count
    assert not DesiredLRP.objects.filter(process_guid="big").exists()
    assert not ActualLRP.objects.filter(desired_id="big").exists()
    summary = BBSEvent.objects.get(type="actual_lrp_removed", key="big")
    assert summary.data["summary"]["count"] == instances
    assert BBSEvent.objects.filter(type="desired_lrp_removed", key="big").count() == 1


def test_a_scale_down_reads_each_cell_once() -> None:
    """bbs.md 1.4 stopInstancesFrom: indices from the new count go, the others stay."""
    running(60)
    count = queries(lambda: desired_lrp_update("big", {"instances": 2}))
    assert count < 30, count
    assert sorted(ActualLRP.objects.filter(desired_id="big").values_list("index", flat=True)) == [0, 1]


def test_a_failed_cell_is_unreachable_at_the_next_phase() -> None:
    """The reachability read once is forgotten where cells may have changed (a phase,
    an apply): a cell failed meanwhile keeps its RUNNING rows, extras for convergence."""
    running(24)
    store = DbStore()
    with store.phase():
        assert store.reachable("cell-00", 5.0)
    Cell.objects.filter(cell_id="cell-00").update(state=Cell.State.FAILED)
    with store.phase():
        assert not store.reachable("cell-00", 5.0)
    kept = set(ActualLRP.objects.filter(cell_id="cell-00").values_list("index", flat=True))
    assert kept
    desired_lrp_remove("big")
    assert set(ActualLRP.objects.filter(desired_id="big").values_list("index", flat=True)) == kept


def removal_events(after: int) -> list[tuple[str, str, str]]:
    return [(e.type, e.key, repr(sorted(e.data.items())))
            for e in BBSEvent.objects.filter(id__gt=after).order_by("id")]


def newest_event() -> int:
    return BBSEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0


def wipe() -> None:
    for model in (ActualLRP, DesiredLRP, BBSEvent, Cell, Zone, Domain):
        model.objects.all().delete()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("how", "scale_to"), [("api", None), ("api", 25), ("control", 25)])
def test_a_big_removal_answers_before_its_stops_and_ends_as_one_transaction_would(
        monkeypatch: pytest.MonkeyPatch, how: str, scale_to: int | None) -> None:
    """bbs.md 1.4: past ``STOP_CHUNK`` stops, the request keeps the desired LRP's change
    and answers; the stops follow in chunks, each its own transaction; the rows and the
    events at the end are those of the removal (or scale-down: the API's, or the
    dashboard's control) in one transaction."""
    monkeypatch.setattr(events, "EVENT_SUMMARY_OVER", 10)

    def act() -> None:
        if scale_to is None:
            desired_lrp_remove("big")
        elif how == "api":
            desired_lrp_update("big", {"instances": scale_to})
        else:
            chaos_run("scale", {"process_guid": "big", "instances": scale_to})

    running(80)
    first = newest_event()
    act()  # 80 stops (55 for a scale-down to 25): under STOP_CHUNK, one transaction
    assert lrps.stops_wait(10)
    whole_rows = sorted(ActualLRP.objects.values_list("desired_id", "index", "state"))
    whole_events = removal_events(first)
    wipe()

    running(80)
    monkeypatch.setattr(lrps, "STOP_CHUNK", 7)
    chunks: list[int] = []
    go = threading.Event()
    apply = lrps._stops_apply

    def held(store: DbStore, part: object) -> None:
        assert go.wait(10)
        chunks.append(len(part.lrp_ops))  # type: ignore[attr-defined]
        apply(store, part)

    monkeypatch.setattr(lrps, "_stops_apply", held)
    first = newest_event()
    act()
    # The request answered: the desired LRP changed, no instance stopped yet.
    assert DesiredLRP.objects.filter(process_guid="big").exists() is (scale_to is not None)
    assert ActualLRP.objects.filter(desired_id="big").count() == 80
    go.set()
    assert lrps.stops_wait(10)
    stopped = 80 - (scale_to or 0)
    assert chunks == [7] * (stopped // 7) + ([stopped % 7] if stopped % 7 else [])
    assert sorted(ActualLRP.objects.values_list("desired_id", "index", "state")) == whole_rows
    chunked = removal_events(first)
    assert sorted(chunked) == sorted(whole_events)
    if scale_to is None:
        # desired_lrp_removed, then the stops, either way; the audit's feed entry
        # (desired_lrp_remove) comes before the stops when they follow.
        def bbs(rows: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
            return [r for r in rows if r[0] != "desired_lrp_remove"]
        assert bbs(chunked) == bbs(whole_events)

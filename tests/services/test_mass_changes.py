"""Mass changes (issue 14): set-based writes, summary events and auction records
(bbs.md 8.1), a scale-up's rows and start requests (bbs.md 1.4), retries on a lock."""

from __future__ import annotations

import json

import pytest
from django.db import OperationalError, transaction

from auction.api.events import sse_frame
from auction.models import ActualLRP, AuctionRun, BBSEvent, ConvergenceRun, DesiredLRP, PendingWork
from auction.selectors.feed import feed_rows
from auction.services import bulk, events, retry, store
from auction.services.bulk import bulk_insert
from auction.services.clock import clock_reset
from auction.services.lrps import desired_lrp_update
from auction.services.retry import lock_stats, retry_locked
from auction.services.scenarios import scenario_load
from auction.services.sim import auction_once, convergence_run
from auction.sim.ids import row_epoch

pytestmark = pytest.mark.django_db

#: Small limits, so the boundaries are crossed with a few thousand rows, not 100,000.
SUMMARY_OVER = 10


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    monkeypatch.setattr(events, "EVENT_SUMMARY_OVER", SUMMARY_OVER)


def lrp_events(type_: str, after: int = 0) -> list[BBSEvent]:
    return list(BBSEvent.objects.filter(type=type_, key__startswith="lrp-a", id__gt=after).order_by("id"))


def newest_event() -> int:
    return BBSEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0


# -- bulk_insert: chunk boundaries ------------------------------------------------------

@pytest.mark.parametrize("rows", [0, 1, 6, 7, 8, 14, 15, 71])
def test_bulk_insert_writes_every_row_at_and_around_the_chunk_size(
        monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    """7 rows a statement (SQLite: 70 an executemany): exactly at, one under and one over."""
    monkeypatch.setattr(bulk, "INSERT_ROWS", 7)
    sent = bulk_insert(PendingWork, ("kind", "ident", "process_guid", "index", "queued_at", "last_error"),
                       [("lrp", f"a.{i}", "a", i, float(i), f"it's \"{i}\" ²") for i in range(rows)])
    assert sent == rows
    got = sorted(PendingWork.objects.values_list("index", "ident", "queued_at", "last_error", "carried"))
    assert got == [(i, f"a.{i}", float(i), f"it's \"{i}\" ²", False) for i in range(rows)]


@pytest.mark.parametrize("chunk", [7, 8, 2000])
def test_bulk_insert_ignores_conflicts_and_adapts_json(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """ActualLRP's (guid, index, presence) is unique: a duplicate is skipped, not an error."""
    monkeypatch.setattr(bulk, "INSERT_ROWS", chunk)
    DesiredLRP.objects.create(process_guid="a", domain="d", instances=1)
    fields = ("desired_id", "index", "domain", "state", "presence", "since", "ports",
              "modification_tag_epoch")
    rows = [("a", i % 9, "d", "UNCLAIMED", "ORDINARY", 1.5, [{"container_port": 8080, "host_port": i}],
             "e") for i in range(15)]
    bulk_insert(ActualLRP, fields, rows, ignore_conflicts=True)
    got = sorted(ActualLRP.objects.values_list("index", "ports"))
    assert got == [(i, [{"container_port": 8080, "host_port": i}]) for i in range(9)]


# -- scale-up (bbs.md 1.4) and its events (bbs.md 8.1) -----------------------------------

def test_scale_up_writes_exactly_the_new_rows_and_one_request_each(cluster: None) -> None:
    """bbs.md 1.4: scaling 3 → 2503 creates UNCLAIMED rows 3..2502 and queues each once."""
    waiting = set(PendingWork.objects.values_list("id", flat=True))
    desired_lrp_update("lrp-a", {"instances": 2503})
    rows = ActualLRP.objects.filter(desired_id="lrp-a", presence="ORDINARY")
    assert sorted(rows.values_list("index", flat=True)) == list(range(2503))
    new = rows.filter(index__gte=3)
    assert new.count() == 2500 and set(new.values_list("state", flat=True)) == {"UNCLAIMED"}
    some = new.get(index=1234)
    assert (some.since, some.crash_count, some.cell_id, some.ports) == (0.0, 0, "", [])
    assert some.modification_tag_epoch == row_epoch(("lrp-a", 1234), 0.0)
    queued = PendingWork.objects.filter(process_guid="lrp-a").exclude(id__in=waiting)
    assert sorted(queued.values_list("index", flat=True)) == list(range(3, 2503))
    assert set(queued.values_list("ident", "reason")) == {(f"lrp-a.{i}", "desire") for i in range(3, 2503)}


@pytest.mark.parametrize(("to", "summarised"), [(3 + SUMMARY_OVER, False), (4 + SUMMARY_OVER, True)])
def test_events_are_one_each_up_to_the_threshold_then_one_summary(
        cluster: None, to: int, summarised: bool) -> None:
    """bbs.md 8.1: more than the threshold of one type for one app → one summary event."""
    seen = newest_event()
    desired_lrp_update("lrp-a", {"instances": to})
    created = lrp_events("actual_lrp_instance_created", seen)
    group = lrp_events("actual_lrp_created", seen)
    if not summarised:
        assert [e.key for e in created] == [f"lrp-a.{i}" for i in range(3, to)]
        assert len(group) == to - 3 and all("summary" not in e.data for e in created)
        return
    assert len(created) == len(group) == 1
    event = created[0]
    assert event.key == "lrp-a"
    assert event.data["summary"] == {
        "process_guid": "lrp-a", "count": to - 3, "indices": [[3, to - 1]], "ranges": 1,
        "states": {"UNCLAIMED": to - 3}, "placement_errors": {}}
    assert event.data["message"] == f"{to - 3} instances created for lrp-a (indices 3..{to - 1})"
    # desired_lrp_changed keeps its place after the rows' events (bbs.md 1.4)
    types = list(BBSEvent.objects.filter(id__gt=seen, type__contains="lrp_").order_by("id")
                 .values_list("type", flat=True))
    assert types[:3] == ["actual_lrp_instance_created", "actual_lrp_created", "desired_lrp_changed"]


def test_a_summary_is_explained_by_the_feed_and_the_event_stream(cluster: None) -> None:
    seen = newest_event()
    desired_lrp_update("lrp-a", {"instances": 50})
    [event] = lrp_events("actual_lrp_instance_created", seen)
    rows = feed_rows(type_="actual_lrp", app="lrp-a")
    assert any(r.text == "47 instances created for lrp-a (indices 3..49)" and r.app == "lrp-a" for r in rows)
    frame = sse_frame(event)
    assert frame.startswith(f"id: {event.id}\nevent: actual_lrp_instance_created\n")
    data = json.loads(frame.split("data: ", 1)[1])
    assert data["summary"]["count"] == 47 and data["key"] == "lrp-a"


def test_summary_ranges_skip_indices_that_were_kept() -> None:
    assert events.index_ranges([5, 3, 4, 9, 10, 12]) == [(3, 5), (9, 10), (12, 12)]
    assert events.index_ranges([]) == []


# -- the unplaceable flood --------------------------------------------------------------

@pytest.fixture
def flood(cluster: None, monkeypatch: pytest.MonkeyPatch) -> int:
    """3 → 3003 instances of lrp-a, then one auction: the seed's 4 cells take a few."""
    monkeypatch.setattr(store, "RECORD_ITEMS_MAX", 100)
    monkeypatch.setattr(store, "RECORD_SAMPLE", 20)
    desired_lrp_update("lrp-a", {"instances": 3003})
    summary = auction_once()
    assert summary is not None
    return summary.run_id


def test_an_unplaceable_flood_is_recorded_as_a_summary_with_every_failure_counted(flood: int) -> None:
    """bbs.md 8.1: every failure counted per error, a bounded sample of the order."""
    run = AuctionRun.objects.get(pk=flood)
    unplaced = ActualLRP.objects.filter(desired_id="lrp-a", state="UNCLAIMED")
    errors: dict[str, int] = {}
    for error in unplaced.values_list("placement_error", flat=True):
        errors[error] = errors.get(error, 0) + 1
    assert run.failed == unplaced.count() > 2900
    assert run.failure_counts["errors"] == errors and "" not in errors
    assert run.failure_counts["lrp"] == run.failed and run.failure_counts["task"] == 0
    assert run.items == run.placed + run.failed >= 3003
    assert run.sampled == 20 and len(run.order) == 20
    assert set(run.failures) <= set(run.order) and set(run.batch) == set(run.order)
    assert len(run.placements) == run.placed
    # Every lrp-a instance was claimed or failed: one summary says which.
    changed = BBSEvent.objects.get(type="actual_lrp_instance_changed", key="lrp-a")
    claimed = ActualLRP.objects.filter(desired_id="lrp-a", state="CLAIMED").count()
    assert changed.data["summary"]["count"] == 3003
    assert changed.data["summary"]["states"] == {"CLAIMED": claimed, "UNCLAIMED": 3003 - claimed}
    assert sum(changed.data["summary"]["placement_errors"].values()) == 3003 - claimed


def test_a_convergence_pass_runs_while_the_flood_waits_and_leaves_the_queue_alone(flood: int) -> None:
    """bbs.md 4: the pass does not re-queue what already waits (one request per index)."""
    queued = PendingWork.objects.filter(process_guid="lrp-a").count()
    assert queued > 2900
    before = ConvergenceRun.objects.count()
    summary = convergence_run(30.0)
    assert ConvergenceRun.objects.count() == before + 1 and summary.metrics
    assert PendingWork.objects.filter(process_guid="lrp-a").count() == queued
    assert PendingWork.objects.filter(process_guid="lrp-a").values("index").distinct().count() == queued


def test_a_scale_down_after_the_flood_empties_the_queue(flood: int) -> None:
    """bbs.md 1.4 [project rule]: the start requests for indices ≥ M leave the queue."""
    desired_lrp_update("lrp-a", {"instances": 3})
    assert not PendingWork.objects.filter(process_guid="lrp-a").exists()
    assert sorted(ActualLRP.objects.filter(desired_id="lrp-a", presence="ORDINARY")
                  .values_list("index", flat=True)) == [0, 1, 2]
    removed = BBSEvent.objects.get(type="actual_lrp_instance_removed", key="lrp-a")
    assert removed.data["summary"]["count"] == 3000


# -- retries on a lock ------------------------------------------------------------------

# Outside a test transaction: inside one, the outermost writer is the one that retries.
@pytest.mark.django_db(transaction=True)
def test_a_writer_that_meets_a_lock_runs_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "FIRST_PAUSE_S", 0.0)
    lock_stats.clear()
    calls = []

    @retry_locked
    def write() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("database is locked")
        return "done"

    assert write() == "done" and len(calls) == 3
    assert lock_stats["retried"] == 2 and lock_stats["gave_up"] == 0


@pytest.mark.django_db(transaction=True)
def test_a_writer_gives_up_after_its_attempts_and_other_errors_are_not_retried(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "FIRST_PAUSE_S", 0.0)
    lock_stats.clear()
    calls = []

    @retry_locked
    def locked() -> None:
        calls.append(1)
        raise OperationalError("database is locked")

    with pytest.raises(OperationalError):
        locked()
    assert len(calls) == retry.ATTEMPTS and lock_stats["gave_up"] == 1

    @retry_locked
    def broken() -> None:
        calls.append(2)
        raise OperationalError("no such table: x")

    with pytest.raises(OperationalError):
        broken()
    assert calls.count(2) == 1


def test_inside_an_open_transaction_the_outermost_writer_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "FIRST_PAUSE_S", 0.0)
    calls = []

    @retry_locked
    def inner() -> None:
        calls.append(1)
        raise OperationalError("database is locked")

    with pytest.raises(OperationalError), transaction.atomic():
        inner()
    assert len(calls) == 1


def test_the_replay_of_a_summarised_auction_says_so_and_counts_every_failure(
        flood: int, client) -> None:  # type: ignore[no-untyped-def]
    """bbs.md 8.1: the replay steps through the sample; its commit step counts every failure."""
    run = AuctionRun.objects.get(pk=flood)
    page = client.get(f"/auctions/{run.pk}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert f"the steps show the first 20 of its {run.items} items" in text
    commit = client.get(f"/auctions/{run.pk}/?step={len(run.order) + 1}").content.decode()
    for error, n in run.failure_counts["errors"].items():
        assert f"× {n}" in commit and error.split(":")[0] in commit


def test_a_loop_round_that_meets_a_busy_database_is_one_line(caplog: pytest.LogCaptureFixture) -> None:
    """dashboard.md S6: a lock that outlasted the writer's retries is one warning line for
    the loop's round, with no traceback; another error keeps its traceback."""
    import logging

    from auction.services.retry import round_failed, round_guarded

    logger = logging.getLogger("test.loop")
    with caplog.at_level(logging.WARNING, logger="test.loop"):
        with round_guarded(logger, "clock tick"):
            raise OperationalError("database is locked")
    [record] = caplog.records
    assert record.levelname == "WARNING" and record.exc_info is None
    assert record.getMessage() == ("clock tick: OperationalError: database is locked; "
                                   "the next round runs it again")
    caplog.clear()
    round_failed(logger, "otto auctioneer: tick", KeyError("bug"))
    [record] = caplog.records
    assert record.levelname == "ERROR" and record.exc_info is not None


def test_beats_tick_survives_a_busy_database(monkeypatch: pytest.MonkeyPatch,
                                              caplog: pytest.LogCaptureFixture) -> None:
    """dashboard.md S6: the Celery tasks of the loop return; the next tick is the retry."""
    import logging

    from auction import tasks

    def locked() -> float:
        raise OperationalError("database is locked")

    monkeypatch.setattr(tasks, "sim_tick_run", locked)
    monkeypatch.setattr(tasks, "sim_advance", locked)
    with caplog.at_level(logging.WARNING, logger="auction.tasks"):
        assert tasks.sim_tick() == 0.0
        assert tasks.auction_run() == 0
    assert [r.exc_info for r in caplog.records] == [None, None]

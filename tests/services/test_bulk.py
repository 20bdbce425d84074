"""bulk_set: many rows, each to its own values, in one statement per batch (docs/architecture.md)."""

from __future__ import annotations

import pytest

from auction.models import OttoAuction, PendingWork
from auction.services.bulk import bulk_set

pytestmark = pytest.mark.django_db


def test_each_row_gets_its_own_values_and_other_rows_and_columns_stay() -> None:
    PendingWork.objects.bulk_create(
        PendingWork(kind="lrp", ident=f"a.{i}", process_guid="a", index=i, queued_at=float(i))
        for i in range(2500))
    rows = list(PendingWork.objects.order_by("id"))
    changed = [PendingWork(pk=r.pk, carried=True, batch_position=n, attempts=n % 7,
                           last_error=f"it's \"{n}\" ²\n") for n, r in enumerate(rows[:2300])]
    bulk_set(PendingWork, changed, ["carried", "batch_position", "attempts", "last_error"], batch_size=1000)
    after = {r.pk: r for r in PendingWork.objects.all()}
    for n, r in enumerate(rows):
        got = after[r.pk]
        if n < 2300:
            assert (got.carried, got.batch_position, got.attempts, got.last_error) == (
                True, n, n % 7, f"it's \"{n}\" ²\n")
        else:
            assert (got.carried, got.batch_position, got.attempts, got.last_error) == (False, 0, 0, "")
        assert (got.ident, got.queued_at) == (f"a.{n}", float(n))


@pytest.mark.parametrize("count", [1, 999, 1000, 1001, 2300])
def test_a_field_every_row_shares_is_set_once_and_rows_picked_by_key(count: int) -> None:
    """A flood's failures: every row gets the same values (set by key alone), or the same
    values but one field that varies (only that one sent per row); the rows not listed
    keep theirs."""
    PendingWork.objects.bulk_create(
        PendingWork(kind="lrp", ident=f"a.{i}", process_guid="a", index=i, queued_at=float(i))
        for i in range(2500))
    rows = list(PendingWork.objects.order_by("id"))
    same = [PendingWork(pk=r.pk, carried=True, attempts=1, last_error="insufficient resources: memory")
            for r in rows[:count]]
    bulk_set(PendingWork, same, ["carried", "attempts", "last_error"])
    varying = [PendingWork(pk=r.pk, carried=True, batch_position=n, attempts=2, last_error="it's ²")
               for n, r in enumerate(rows[:count])]
    bulk_set(PendingWork, varying[:count // 2], ["carried", "batch_position", "attempts", "last_error"])
    after = {r.pk: r for r in PendingWork.objects.all()}
    for n, r in enumerate(rows):
        got = (after[r.pk].carried, after[r.pk].batch_position, after[r.pk].attempts, after[r.pk].last_error)
        if n < count // 2:
            assert got == (True, n, 2, "it's ²")
        elif n < count:
            assert got == (True, 0, 1, "insufficient resources: memory")
        else:
            assert got == (False, 0, 0, "")


def test_nulls_floats_and_json_round_trip() -> None:
    made = [OttoAuction.objects.create(auction_id=f"x{i}", task_guid=f"t{i}", submitted_at=1.0, starts=1.0,
                                       ends=6.0, start_by=9.5, history=[[1.0, "opened"]]) for i in range(3)]
    for i, row in enumerate(made):
        row.start_by = None if i == 0 else 2.25 * i
        row.history = [[1.0, "opened"], [2.0, f"re-stamped {i}"]]
    bulk_set(OttoAuction, made, ["start_by", "history"])
    got = {r.auction_id: (r.start_by, r.history) for r in OttoAuction.objects.all()}
    assert got == {"x0": (None, [[1.0, "opened"], [2.0, "re-stamped 0"]]),
                   "x1": (2.25, [[1.0, "opened"], [2.0, "re-stamped 1"]]),
                   "x2": (4.5, [[1.0, "opened"], [2.0, "re-stamped 2"]])}


def test_insert_ignoring_conflicts_keeps_the_row_already_there_and_adds_the_rest() -> None:
    """A scale's new rows meet a row another writer created meanwhile (bbs.md 4.3): that
    row stays as it is, every other row is inserted (PostgreSQL: the straight copy fails
    and the rows go through the temporary table)."""
    from auction.models import ActualLRP, DesiredLRP
    from auction.services.bulk import bulk_insert

    DesiredLRP.objects.create(process_guid="a", domain="d", instances=3)
    ActualLRP.objects.create(desired_id="a", index=1, domain="d", placement_error="theirs")
    rows = [("a", i, "d", "ours") for i in range(3)]
    sent = bulk_insert(ActualLRP, ("desired_id", "index", "domain", "placement_error"), rows,
                       ignore_conflicts=True)
    assert sent == 3
    assert sorted(ActualLRP.objects.values_list("index", "placement_error")) == [
        (0, "ours"), (1, "theirs"), (2, "ours")]
    bulk_insert(ActualLRP, ("desired_id", "index", "domain", "placement_error"), [("a", 3, "d", "new")],
                ignore_conflicts=True)
    assert ActualLRP.objects.count() == 4


@pytest.mark.parametrize("count", [199, 200, 201, 20_001])
def test_many_rows_insert_in_order_with_shared_and_varying_values(count: int) -> None:
    """A scale-up's start requests: ids follow the tuples' order (the queue's arrival
    order), each row keeps its own ident and index, the shared values (a float among
    them) are exact; around the size where SQLite reads them as JSON, and across its
    20,000-row chunks."""
    from auction.services.bulk import bulk_insert

    queued_at = 0.1 + 0.2  # not a short decimal: it must not pass through text
    rows = [("lrp", f"a.{i}", "a", None if i % 5 == 0 else i, queued_at, "scale ²", i % 3 == 0,
             f"é{i % 4}") for i in range(count)]
    sent = bulk_insert(PendingWork, ("kind", "ident", "process_guid", "index", "queued_at", "reason",
                                     "carried", "last_error"), rows)
    assert sent == count
    got = list(PendingWork.objects.order_by("id").values_list(
        "kind", "ident", "process_guid", "index", "queued_at", "reason", "carried", "last_error"))
    assert got == rows
    assert set(PendingWork.objects.values_list("attempts", "batch_position", "task_guid")) == {(0, 0, "")}


def test_many_rows_with_varying_floats_and_conflicts() -> None:
    """Floats that vary are bound, never parsed from text; a row that breaks the unique key
    is skipped, the rest are written."""
    from auction.models import ActualLRP, DesiredLRP
    from auction.services.bulk import bulk_insert

    DesiredLRP.objects.create(process_guid="a", domain="d", instances=3)
    ActualLRP.objects.create(desired_id="a", index=7, domain="d", placement_error="theirs")
    since = [i / 3 for i in range(500)]
    bulk_insert(ActualLRP, ("desired_id", "index", "domain", "placement_error", "since"),
                [("a", i, "d", "ours", since[i]) for i in range(500)], ignore_conflicts=True)
    bulk_insert(ActualLRP, ("desired_id", "index", "domain", "placement_error", "presence"),
                [("a", i, "d", "evac", "EVACUATING") for i in range(500)], ignore_conflicts=True)
    rows = {(i, p): (e, s) for i, p, e, s in ActualLRP.objects.values_list("index", "presence",
                                                                           "placement_error", "since")}
    assert len(rows) == 1000
    assert rows[(7, "ORDINARY")] == ("theirs", 0.0)
    assert all(rows[(i, "ORDINARY")] == ("ours", since[i]) for i in range(500) if i != 7)
    assert all(rows[(i, "EVACUATING")][0] == "evac" for i in range(500))

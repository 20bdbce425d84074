"""auction.md 1.7, "An answer is applied only to the state it was computed from": a write
that only deletes something the round read (queued items, an instance row) counts as a
write. The round read apart is then read and run again inside the writing transaction,
and nothing it computed for what was deleted is applied.
"""

from __future__ import annotations

import pytest
from django.db import connection

from auction.models import ActualLRP, PendingWork
from auction.services import sim
from auction.services.bulk import bulk_delete
from auction.services.clock import clock_reset
from auction.services.lrps import desired_lrp_update
from auction.services.reading_apart import round_inputs_mark
from auction.services.scenarios import scenario_load

from .test_reading_apart import Interleaved, run_auction

pytestmark = pytest.mark.django_db(transaction=True)

#: The queued lrp-a items the other writer deletes (the flood queues indices 3 ... 2002).
GONE = range(1000, 1010)


@pytest.fixture(autouse=True)
def sqlite_only() -> None:
    if connection.vendor != "sqlite":
        pytest.skip("PostgreSQL reads the round FOR UPDATE in the writing transaction")


@pytest.fixture
def flood() -> None:
    """The seed, placed, then lrp-a scaled past what fits: 2,000 items wait."""
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    sim.auction_once()
    desired_lrp_update("lrp-a", {"instances": 2003})


def gone_items() -> list[int]:
    return list(PendingWork.objects.filter(process_guid="lrp-a", index__in=GONE).values_list("pk", flat=True))


def test_a_delete_alone_moves_the_mark(flood: None) -> None:
    before = round_inputs_mark()
    bulk_delete(PendingWork, gone_items())
    assert round_inputs_mark()[0] > before[0]
    moved = round_inputs_mark()
    ActualLRP.objects.filter(desired_id="lrp-a", index=GONE[0] - 1).delete()
    assert round_inputs_mark()[0] > moved[0]


@pytest.mark.parametrize("delete", ["bulk", "queryset"])
def test_queued_items_deleted_while_the_round_reads_apart_are_not_failed(flood: None, delete: str) -> None:
    """Between the round's read and its write another writer deletes ten queued items
    and nothing else. The stale answer would Fail their rows; the answer read again does
    not see them, so their rows stay as they were, without a placement error."""
    def writer() -> None:
        if delete == "bulk":
            bulk_delete(PendingWork, gone_items())
        else:
            PendingWork.objects.filter(process_guid="lrp-a", index__in=GONE).delete()

    store = Interleaved(writer)
    run_auction(store)
    assert store.writer_error is None and store.writer_done
    assert store.reads == 2, "the answer computed before the delete was applied"
    rows = ActualLRP.objects.filter(desired_id="lrp-a", index__in=GONE)
    assert rows.count() == len(GONE)
    assert set(rows.values_list("placement_error", "cell_id")) == {("", "")}
    assert not PendingWork.objects.filter(process_guid="lrp-a", index__in=GONE).exists()
    # The rest of the flood was auctioned: the retry is a real auction, not a no-op.
    assert ActualLRP.objects.filter(desired_id="lrp-a", placement_error__startswith="insufficient").count() > 1900

"""An auction read apart from the write lock on SQLite (docs/behaviour/auction.md 1.7, "An
answer is applied only to the state it was computed from"; issue 14 point 1).

Each test interleaves another writer with an auction deterministically: the round's
read is the real ``DbStore.round_input``, and right after it (the auction has read, the
engine has not run) another thread, with its own connection, writes through a service.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from auction.models import ActualLRP, BBSEvent, PendingWork, SimClock
from auction.services import sim
from auction.services.bulk import Values, bulk_set
from auction.services.cells import cell_fail
from auction.services.clock import clock_pause, clock_reset
from auction.services.domains import domain_upsert
from auction.services.lrps import desired_lrp_update
from auction.services.reading_apart import ROUND_TABLES, round_inputs_mark
from auction.services.scenarios import scenario_load
from auction.services.store import DbStore
from auction.sim.round import RoundInput

pytestmark = pytest.mark.django_db(transaction=True)

#: Long enough that only a writer held up by a lock misses it (the busy timeout is 20 s).
WRITER_WAIT_S = 10.0


@pytest.fixture(autouse=True)
def sqlite_only() -> None:
    if connection.vendor != "sqlite":
        pytest.skip("PostgreSQL reads the round FOR UPDATE in the writing transaction")


class Interleaved(DbStore):
    """The live store, with another writer's service call run right after each round's
    read (on its own thread and connection), once."""

    def __init__(self, writer: Callable[[], Any]) -> None:
        super().__init__(trigger_auctions=False)
        self.writer: Callable[[], Any] | None = writer
        self.reads = 0
        self.writer_done = False
        self.writer_error: BaseException | None = None

    def round_input(self, at: float) -> RoundInput:
        read = super().round_input(at)
        self.reads += 1
        if self.writer is not None:
            writer, self.writer = self.writer, None
            thread = threading.Thread(target=self._write, args=(writer,))
            thread.start()
            thread.join(WRITER_WAIT_S)
            self.writer_done = not thread.is_alive()
            if not self.writer_done:
                thread.join()  # let it finish once the auction lets go, then fail
        return read

    def _write(self, writer: Callable[[], Any]) -> None:
        try:
            writer()
        except BaseException as error:  # the test reports it
            self.writer_error = error
        finally:
            connection.close()


def run_auction(store: DbStore) -> None:
    assert sim.auction_one(store, sim._instant(store), PendingWork.objects.exists)


@pytest.fixture
def flood() -> None:
    """The seed, placed, then lrp-a scaled past what fits: 2,000 items wait."""
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    sim.auction_once()
    desired_lrp_update("lrp-a", {"instances": 2003})


def test_every_table_the_round_reads_bumps_the_counter(flood: None) -> None:
    """The counter is only as good as its list: each table ``round_input`` reads is one
    whose writes bump it (the clock's row only through its seed, which the mark holds)."""
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        DbStore().round_input(0.0)
    tables = {name for q in queries.captured_queries for name in re.findall(r'"(auction_\w+)"', q["sql"])}
    assert {"auction_actuallrp", "auction_pendingwork", "auction_cell", "auction_desiredlrp"} <= tables
    assert tables - {"auction_simclock"} <= ROUND_TABLES
    for table in sorted(ROUND_TABLES):
        before = round_inputs_mark()
        with connection.cursor() as cursor:  # any write statement, even one that matches no row
            cursor.execute(f'UPDATE "{table}" SET id = id WHERE id < 0')
        assert round_inputs_mark()[0] == before[0] + 1, table


def test_the_mark_moves_with_a_cell_the_seed_and_a_bulk_write_and_not_with_the_clock_or_a_domain(
        flood: None) -> None:
    before = round_inputs_mark()
    clock_pause()
    domain_upsert("cf-apps", 120.0)
    assert round_inputs_mark() == before
    cell_fail("cell-4")
    assert round_inputs_mark()[0] > before[0]
    moved = round_inputs_mark()
    SimClock.objects.filter(pk=1).update(seed=moved[1] + 7)
    assert round_inputs_mark() == (moved[0], moved[1] + 7)
    moved = round_inputs_mark()
    bulk_set(PendingWork, [Values(pk, attempts=5) for pk in PendingWork.objects.values_list("pk", flat=True)],
             ["attempts"])
    assert round_inputs_mark()[0] > moved[0]


def test_a_writer_is_not_held_up_while_an_auction_reads_and_runs(flood: None) -> None:
    """A clock control and a domain bump commit while the auction has read and not yet
    written; neither touches what the round read, so its answer is applied as computed
    (one read)."""
    store = Interleaved(lambda: (clock_pause(), domain_upsert("cf-apps", 120.0)))
    run_auction(store)
    assert store.writer_error is None
    assert store.writer_done, "the writer waited for the auction's lock"
    assert store.reads == 1
    failed = ActualLRP.objects.filter(placement_error__startswith="insufficient").count()
    placed = ActualLRP.objects.filter(desired_id="lrp-a", index__gte=3).exclude(cell_id="").count()
    assert failed == PendingWork.objects.filter(carried=True).count() > 1900
    assert failed + placed == 2000
    # Its events were made before the writing phase (``DbStore.prepare``): one summary.
    summary = BBSEvent.objects.filter(type="actual_lrp_changed", key="lrp-a").order_by("-id").first()
    assert summary is not None and summary.data["summary"]["count"] == 2000
    assert summary.data["summary"]["placement_errors"] == {"insufficient resources: memory": failed}


def test_an_answer_is_never_applied_to_a_state_it_did_not_see(flood: None) -> None:
    """The seed's cells have room for a few more lrp-a instances. Between the read and the
    write another writer fails cell-3: the round's answer (computed with cell-3 alive) is
    dropped, and the round read and run again under the lock places nothing there."""
    store = Interleaved(lambda: cell_fail("cell-3"))
    run_auction(store)
    assert store.writer_error is None and store.writer_done
    assert store.reads == 2, "the stale answer was applied"
    claimed_on_3 = ActualLRP.objects.filter(cell_id="cell-3", desired_id="lrp-a", index__gte=3).count()
    assert claimed_on_3 == 0
    placed = ActualLRP.objects.filter(desired_id="lrp-a", index__gte=3).exclude(cell_id="").count()
    assert placed > 0, "the retry placed nothing: the test would not see a stale answer"

"""The database store's check mode (``auction.sim.check_mode``): the primary keys it keeps
between reads are proved against the rows before a write goes through them."""

from __future__ import annotations

import pytest

from auction.bbs import types as core
from auction.bbs.changes import RowUpdate
from auction.models import ActualLRP
from auction.services.clock import clock_reset
from auction.services.scenarios import scenario_load
from auction.services.sim import auctioneer_run
from auction.services.store import DbStore
from auction.sim.changes import ChangeSet
from auction.sim.check_mode import CHECK_SETTING, DerivedMismatch

pytestmark = pytest.mark.django_db


def test_a_kept_primary_key_of_a_row_made_again_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row removed and made again behind the store's back has another primary key: the
    check names the kept one at the write; without it the write is skipped as if it raced."""
    scenario_load("boulders-pebbles")
    clock_reset(0.0, paused=True)
    auctioneer_run()
    store = DbStore()
    snapshot = store.convergence_input(0.0)[0]  # reads every row: their keys are kept
    row = next(r for r in snapshot.actual if r.state == core.CLAIMED and r.presence == core.ORDINARY)
    stored = ActualLRP.objects.get(desired_id=row.process_guid, index=row.index, presence=row.presence)
    stored.delete()
    stored.pk = None
    stored.save()
    change = ChangeSet(0.0, lrp_ops=[RowUpdate(row.key, row, core.evolve(row, crash_count=row.crash_count + 1))])
    monkeypatch.setenv(CHECK_SETTING, "1")
    with pytest.raises(DerivedMismatch, match=r"DbStore\._pk"):
        store.apply(change)
    monkeypatch.setenv(CHECK_SETTING, "0")
    store.apply(change)
    again = ActualLRP.objects.get(desired_id=row.process_guid, index=row.index, presence=row.presence)
    assert again.crash_count == row.crash_count  # the lost write the check catches

"""Auction and convergence records are bounded (bbs.md 8.2)."""

from __future__ import annotations

import time

import pytest

from auction.models import AuctionRun, ConvergenceRun, DesiredLRP
from auction.services.clock import clock_reset
from auction.services.lrps import desired_lrp_update
from auction.services.retention import records_trim
from auction.services.scenarios import scenario_load
from auction.services.sim import sim_advance

pytestmark = pytest.mark.django_db


def test_the_newest_are_kept_by_count_and_old_auctions_by_age(settings) -> None:
    settings.DIEGO_AUCTIONS_KEEP, settings.DIEGO_PASSES_KEEP, settings.DIEGO_RECORDS_MAX_AGE_DAYS = 5, 3, 1.0
    now = time.time()
    AuctionRun.objects.bulk_create(AuctionRun(started_at=i, wall_started=now - (10 - i) * 3600) for i in range(10))
    ConvergenceRun.objects.bulk_create(ConvergenceRun(at=i) for i in range(10))
    assert records_trim(now=now) == 5 + 7
    assert sorted(AuctionRun.objects.values_list("started_at", flat=True)) == [5, 6, 7, 8, 9]
    assert sorted(ConvergenceRun.objects.values_list("at", flat=True)) == [7, 8, 9]
    # A day later every kept auction is older than a day: the age bound takes them all.
    assert records_trim(passes=False, now=now + 86400) == 5 and not AuctionRun.objects.exists()


def test_an_advance_that_records_trims(settings) -> None:
    """bbs.md 8.2: the live loop keeps the bound as it writes."""
    settings.DIEGO_AUCTIONS_KEEP, settings.DIEGO_PASSES_KEEP = 2, 2
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    guid = DesiredLRP.objects.values_list("process_guid", flat=True).first()
    for n, instances in enumerate((4, 2, 5, 3)):
        desired_lrp_update(guid, {"instances": instances})
        sim_advance(now=40.0 * (n + 1))
    assert AuctionRun.objects.count() == 2 and ConvergenceRun.objects.count() == 2

"""Bid acceptance through the production path (otto.md 6 accept bid): the auctioneer's
``otto_bids_record`` judges each bid with the core's ``bids.rejection`` and ``otto_due``
closes with the core's rules. Each test makes one rule load-bearing: drop it from the core
and a bid that must be refused is accepted (and wins), or one that must win is refused."""

from __future__ import annotations

import pytest
from django.db import transaction

from auction.models import Cell, Counter, OttoAuction, OttoBid, OttoOrchestrator, Zone
from auction.otto import messages as msg
from auction.services.clock import clock_reset
from auction.services.otto import (
    IncomingBid,
    otto_auction_open,
    otto_bids_record,
    otto_due,
    otto_task_message,
)
from auction.services.otto_orchestrators import otto_roster_refresh, otto_roster_sync
from auction.services.tasks import task_desire

pytestmark = pytest.mark.django_db

ENDS = 5.0  # opened at 0 with the default 5 s window; closes at ends + 0.5 s grace


def _market() -> str:
    """cell-1 and cell-2 run docker, cell-3 does not; all live in the roster; one open auction."""
    zone = Zone.objects.create(name="z1")
    Cell.objects.create(cell_id="1", zone=zone, index=0)
    Cell.objects.create(cell_id="2", zone=zone, index=1)
    Cell.objects.create(cell_id="3", zone=zone, index=2, rootfs_providers=[])
    clock_reset(0.0, paused=True)
    otto_roster_sync(elastic=False)
    otto_roster_refresh(["cell-1", "cell-2", "cell-3"])
    with transaction.atomic():
        task = task_desire({"task_guid": "t-1", "domain": "d", "rootfs": "docker:///x", "memory_mb": 512,
                            "placement_mode": "otto"})
    opened = otto_auction_open(otto_task_message(task, 0.0), 0.0)
    return opened.outbound[0][2]["auction_id"]


def _record(auction_id: str, *bids: tuple[str, float, float], attempt: int = 1) -> None:
    """(bidder, cost, received_at) in arrival order."""
    otto_bids_record([
        IncomingBid(msg.validate(msg.bid_message(auction_id, attempt, who, "agent", cost, {"run": cost}, 0, at)),
                    at, n)
        for n, (who, cost, at) in enumerate(bids, start=1)])


def _judged(auction_id: str) -> dict[tuple[str, int], tuple[str, str]]:
    return {(b.bidder, b.attempt): (b.status, b.reason)
            for b in OttoBid.objects.filter(auction__auction_id=auction_id)}


def _closed(auction_id: str, now: float = ENDS + 0.5) -> OttoAuction:
    otto_due(now)
    return OttoAuction.objects.get(auction_id=auction_id)


def test_grace_period_accepts_a_bid_just_after_ends_and_refuses_one_beyond() -> None:
    """Arrival by ends + 0.5 s on the auctioneer's clock is in time; the close waits for the grace."""
    auction_id = _market()
    _record(auction_id, ("cell-2", 0.05, 1.0), ("cell-1", 0.02, ENDS + 0.4), ("cell-3", 0.01, ENDS + 0.6))
    assert OttoAuction.objects.get(auction_id=auction_id).state == "open"
    for early in (ENDS, ENDS + 0.4995):  # not closed before ends + grace, not even a hair before
        assert _closed(auction_id, early).state == "open"
    row = _closed(auction_id)
    assert _judged(auction_id) == {("cell-2", 1): ("accepted", ""), ("cell-1", 1): ("accepted", ""),
                                   ("cell-3", 1): ("late", "late: arrived 0.6 s after ends")}
    assert (row.state, row.winner, row.cost) == ("awarded", "cell-1", 0.02)
    assert Counter.objects.get(name="OttoLateBids").value == 1


def test_a_bidder_lacking_a_capability_is_refused_and_cannot_win() -> None:
    """The roster's capabilities must cover the task: cell-3 has no docker rootfs provider."""
    auction_id = _market()
    _record(auction_id, ("cell-3", 0.001, 1.0), ("cell-2", 0.05, 1.5))
    row = _closed(auction_id)
    assert _judged(auction_id)[("cell-3", 1)] == ("invalid", "invalid: lacks docker_run")
    assert row.winner == "cell-2"


def test_a_bid_for_another_attempt_is_refused_and_cannot_win() -> None:
    """Bids for another attempt are ignored (otto.md 5): a re-delivered attempt-1 bid during
    attempt 2 is invalid, not a live bid of attempt 2's close."""
    auction_id = _market()
    _record(auction_id, ("cell-1", 0.02, 1.0))
    assert _closed(auction_id).winner == "cell-1"
    otto_due(ENDS + 0.5 + 10.0)  # cell-1 did not start by start_by: attempt 2, without cell-1
    row = OttoAuction.objects.get(auction_id=auction_id)
    assert (row.state, row.attempt, row.excluded) == ("open", 2, ["cell-1"])
    _record(auction_id, ("cell-2", 0.01, row.starts + 1.0), attempt=1)
    _record(auction_id, ("cell-2", 0.04, row.starts + 1.5), attempt=3)
    judged = _judged(auction_id)
    assert judged[("cell-2", 1)] == ("invalid", "invalid: for attempt 1, current is 2")
    assert judged[("cell-2", 3)] == ("invalid", "invalid: for attempt 3, current is 2")
    assert OttoBid.objects.filter(auction__auction_id=auction_id, attempt=2, status="accepted").count() == 0
    assert _closed(auction_id, row.ends + 0.5).state == "no_bids"


def test_the_loser_left_out_of_the_reauction_is_refused() -> None:
    """otto.md 7: the failed winner is left out of the next attempt's first announcement."""
    auction_id = _market()
    _record(auction_id, ("cell-1", 0.02, 1.0))
    _closed(auction_id)
    otto_due(ENDS + 0.5 + 10.0)
    row = OttoAuction.objects.get(auction_id=auction_id)
    _record(auction_id, ("cell-1", 0.001, row.starts + 1.0), ("cell-2", 0.05, row.starts + 1.0), attempt=2)
    assert _judged(auction_id)[("cell-1", 2)] == ("invalid", "invalid: left out of this announcement")
    assert _closed(auction_id, row.ends + 0.5).winner == "cell-2"


@pytest.mark.parametrize("how", ["unknown", "lapsed", "disabled"])
def test_a_bidder_not_live_in_the_roster_is_refused_and_cannot_win(how: str) -> None:
    """Only a bidder live in the roster (enabled, presence refreshed within 15 s) may bid."""
    auction_id = _market()
    bidder = "cell-9" if how == "unknown" else "cell-1"
    if how == "lapsed":
        OttoOrchestrator.objects.filter(client_id="cell-1").update(alive_until_wall=0.0)
    elif how == "disabled":
        OttoOrchestrator.objects.filter(client_id="cell-1").update(enabled=False)
    _record(auction_id, (bidder, 0.001, 1.0), ("cell-2", 0.05, 1.5))
    row = _closed(auction_id)
    assert _judged(auction_id)[(bidder, 1)] == ("invalid", "invalid: bidder not live in the roster")
    assert row.winner == "cell-2"


def test_a_bid_recorded_after_the_close_is_late() -> None:
    """In time on the clock, but the auction already closed (it closes exactly once)."""
    auction_id = _market()
    _record(auction_id, ("cell-2", 0.05, 1.0))
    _closed(auction_id)
    _record(auction_id, ("cell-1", 0.01, ENDS + 0.5))
    assert _judged(auction_id)[("cell-1", 1)] == ("late", "late: auction already closed")
    assert OttoAuction.objects.get(auction_id=auction_id).winner == "cell-2"

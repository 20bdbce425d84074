"""The Otto board page and its JSON (dashboard.md O1-O5; issue 7 API), without a browser."""

from __future__ import annotations

import re
import time

import pytest
from django.db import transaction

from auction.models import Cell, OttoAuction, OttoOrchestrator, Task, Zone
from auction.otto import messages as msg
from auction.services.clock import clock_reset, clock_step
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


def _market() -> str:
    zone = Zone.objects.create(name="z1")
    Cell.objects.create(cell_id="1", zone=zone, index=0)
    Cell.objects.create(cell_id="2", zone=zone, index=1)
    clock_reset(0.0, paused=True)
    otto_roster_sync(elastic=False)
    otto_roster_refresh(["cell-1", "cell-2"])
    with transaction.atomic():
        task = task_desire({"task_guid": "t-1", "domain": "d", "rootfs": "docker:///x", "memory_mb": 512,
                            "placement_mode": "otto"})
    opened = otto_auction_open(otto_task_message(task, 0.0), 0.0)
    auction_id = opened.outbound[0][2]["auction_id"]
    bids = [IncomingBid(msg.validate(msg.bid_message(auction_id, 1, who, "agent", cost, {"run": cost}, 0, 1.0)),
                        1.0 + i, i) for i, (who, cost) in enumerate([("cell-1", 0.02), ("cell-2", 0.01)])]
    otto_bids_record(bids)
    return auction_id


def test_open_auctions_api_and_board_page(client) -> None:  # type: ignore[no-untyped-def]
    """O1-O3: open lane with a countdown, bids with the leader; every element carries data-auction;
    GET /api/v1/open_auctions returns the same data; otto-mode tasks never reach Diego's queue."""
    auction_id = _market()
    body = client.get("/api/v1/open_auctions").json()
    [auction] = body["open_auctions"]
    assert auction["auction_id"] == auction_id and auction["lane"] == "open"
    assert auction["auction"] == {"starts": "2025-01-01T00:00:00.000Z", "ends": "2025-01-01T00:00:05.000Z"}
    assert auction["leader"] == "cell-2"
    assert [b["bidder"] for b in auction["bids"]] == ["cell-1", "cell-2"]
    page = client.get("/otto/").content.decode()
    card = re.search(rf'<article[^>]*id="otto-{auction_id}".*?</article>', page, re.S).group(0)
    assert 'class="otto-countdown"' in card and 'data-ends="5.000"' in card
    # Every element inside the card names its auction.
    for tag in re.findall(r"<(?:header|ul|li|p|div|table|tr|span class=\"(?:otto-countdown-text|attempt)[^\"]*\")[^>]*>", card):
        assert f'data-auction="{auction_id}"' in tag, tag
    assert 'class="bid bid-accepted leader"' in card and 'data-bidder="cell-2"' in card
    assert "Open auctions" in page  # nav link
    from auction.models import PendingWork

    assert not PendingWork.objects.filter(task_guid="t-1").exists()


def test_auction_detail_after_award_and_404(client) -> None:  # type: ignore[no-untyped-def]
    """O3: at close the winner, cost and start-by; unknown ids answer the API's 404 error."""
    auction_id = _market()
    clock_step(5.5)
    otto_due(5.5, wall=time.time())
    detail = client.get(f"/api/v1/auctions/{auction_id}").json()["auction"]
    assert (detail["state"], detail["winner"], detail["cost"]) == ("awarded", "cell-2", 0.01)
    assert detail["start_by"] == "2025-01-01T00:00:15.500Z" and detail["lane"] == "awarded"
    page = client.get("/otto/").content.decode()
    assert 'class="otto-countdown-text start-by"' in page and "winner <strong class=\"winner\">cell-2" in page
    missing = client.get("/api/v1/auctions/a-nope")
    assert missing.status_code == 404
    assert missing.json() == {"error": {"type": "ResourceNotFound",
                                        "message": "the requested resource could not be found"}}


def test_placement_mode_switch_rules() -> None:
    """otto.md 9: the mode changes only while PENDING and not in an open auction."""
    from auction.services.errors import InvalidRequest
    from auction.services.otto import task_placement_mode_set

    _market()
    with pytest.raises(InvalidRequest, match="open auction"):
        task_placement_mode_set("t-1", "diego")
    task_desire({"task_guid": "t-2", "domain": "d", "memory_mb": 64})
    assert task_placement_mode_set("t-2", "otto").placement_mode == "otto"
    assert Task.objects.get(task_guid="t-2").placement_mode == "otto"
    with pytest.raises(InvalidRequest):
        task_placement_mode_set("t-2", "bogus")
    assert OttoOrchestrator.objects.count() == 2 and OttoAuction.objects.count() == 1


def test_board_draws_the_soonest_cards_and_counts_the_rest(client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md O1 (soonest close first) at scale (issue 7: the board stays responsive with
    1,000 open auctions): the lane draws LANE_CARDS cards, says how many more, counts all."""
    from auction.selectors import otto as board_selectors

    monkeypatch.setattr(board_selectors, "LANE_CARDS", 3)
    zone = Zone.objects.create(name="z1")
    Cell.objects.create(cell_id="1", zone=zone, index=0)
    clock_reset(0.0, paused=True)
    with transaction.atomic():
        tasks = [task_desire({"task_guid": f"t-{n}", "domain": "d", "rootfs": "docker:///x", "memory_mb": 64,
                              "placement_mode": "otto"}) for n in range(5)]
    for n, task in enumerate(reversed(tasks)):  # opened at 4, 3, 2, 1, 0 s: t-0 closes last
        otto_auction_open(otto_task_message(task, float(n)), float(n))
    page = client.get("/otto/").content.decode()
    lane = page[page.index('id="otto-lane-open"'):page.index('id="otto-lane-awarded"')]
    shown = re.findall(r'data-auction="([^"]+)"', lane)
    expected = [a.auction_id for a in OttoAuction.objects.order_by("ends")[:3]]
    assert list(dict.fromkeys(shown)) == expected
    assert '<span class="count">5</span>' in lane
    assert 'data-more="2"' in lane and "and 2 more, closing later" in lane
    api = client.get("/api/v1/open_auctions").json()["open_auctions"]
    assert len(api) == 5

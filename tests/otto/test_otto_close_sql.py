"""The close ranks bids in SQL (otto.md 5, 6: lowest cost to 6 places, then earlier receipt,
then lower bidder id; one live bid per bidder per attempt): the winner it reads must be
the one ``bids.choose_winner`` picks from every stored bid."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from auction.models import OttoAuction, OttoBid
from auction.otto import bids as core
from auction.services.otto import _best_bids

pytestmark = pytest.mark.django_db

# Few costs and instants, so ties on cost and on receipt are common.
bid_rows = st.lists(st.tuples(
    st.integers(0, 3),  # auction
    st.integers(1, 2),  # attempt
    st.sampled_from(["cell-1", "cell-2", "cell-3", "elastic"]),
    st.sampled_from([0.02, 0.020000000001, 0.03, 0.1]),
    st.sampled_from([1.0, 2.0]),
    st.integers(0, 9),  # arrival sequence: independent of the sim instant (a paused clock)
    st.sampled_from([OttoBid.Status.ACCEPTED, OttoBid.Status.ACCEPTED, OttoBid.Status.LATE,
                     OttoBid.Status.INVALID]),
), max_size=30, unique_by=lambda r: (r[0], r[1], r[2]))


@example(rows=[(0, 1, "cell-2", 0.02, 1.0, 5, OttoBid.Status.ACCEPTED),  # earlier receipt wins
                (0, 1, "cell-1", 0.020000000001, 2.0, 1, OttoBid.Status.ACCEPTED),
                (1, 1, "cell-3", 0.02, 1.0, 2, OttoBid.Status.ACCEPTED),  # then arrival order
                (1, 1, "cell-1", 0.02, 1.0, 3, OttoBid.Status.ACCEPTED),
                (2, 2, "cell-1", 0.01, 1.0, 0, OttoBid.Status.ACCEPTED),  # another attempt
                (2, 1, "cell-2", 0.1, 1.0, 1, OttoBid.Status.ACCEPTED),
                (3, 1, "cell-1", 0.01, 1.0, 0, OttoBid.Status.LATE)],
          attempts=[1, 1, 1, 1])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=bid_rows, attempts=st.lists(st.integers(1, 2), min_size=4, max_size=4))
def test_sql_ranking_picks_the_cores_winner(rows, attempts) -> None:  # type: ignore[no-untyped-def]
    OttoBid.objects.all().delete()
    OttoAuction.objects.all().delete()
    auctions = [OttoAuction.objects.create(auction_id=f"a-{n}", task_guid=f"t-{n}", attempt=attempts[n],
                                           submitted_at=0, starts=0, ends=5) for n in range(4)]
    for n, attempt, bidder, cost, received, sequence, status in rows:
        OttoBid.objects.create(auction=auctions[n], attempt=attempt, bidder=bidder,
                               cost=round(cost, core.COST_PLACES), received_at=received,
                               sequence=sequence, status=status)
    best = {b[0]: b for b in _best_bids(auctions)}
    for n, auction in enumerate(auctions):
        stored = [core.Bid(bidder, attempt, round(cost, core.COST_PLACES), received, sequence)
                  for i, attempt, bidder, cost, received, sequence, status in rows
                  if i == n and status == OttoBid.Status.ACCEPTED]
        expected = core.choose_winner(stored, auction.attempt)
        got = best.get(auction.pk)
        assert (got[2] if got else None) == (expected.bidder if expected else None)

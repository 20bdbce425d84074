"""The close ranks bids in SQL (otto.md 5, 6: lowest cost to 6 places, then earlier receipt,
then arrival order, then lower bidder id; one live bid per bidder per attempt): the winner
it reads must be the one ``bids.choose_winner`` picks.

Runs on SQLite and on PostgreSQL (``DATABASE_URL``). On PostgreSQL the bidder column is
given a collation that ignores punctuation, like glibc's en_US.UTF-8 (the default of the
postgres docker image), so the ranking must not lean on the database's collation.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from auction.models import OttoAuction, OttoBid, OttoOrchestrator
from auction.otto import bids as core
from auction.otto import capabilities as caps
from auction.otto import messages as msg
from auction.services.otto import IncomingBid, otto_bids_record, otto_due
from auction.services.otto.awards import _best_bids

pytestmark = pytest.mark.django_db

WALL = 1_000_000.0
ENDS = 5.0
RAW = {"task_guid": "t", "memory_mb": 256, "disk_mb": 0, "rootfs": "docker:///x", "placement_tags": [],
       "volume_drivers": [], "estimated_seconds": 60}
ASK = caps.derive(RAW)
OFFER = {"cores": 4, "memory_mb": 4096, "disk_mb": 4096, "docker_run": True, "docker_build": False}


@pytest.fixture
def punctuation_blind_bidders() -> Iterator[None]:
    """PostgreSQL: collate ``OttoBid.bidder`` like en_US.UTF-8 (hyphens ignored) for this test;
    the DDL is rolled back with the test's transaction. SQLite keeps its BINARY collation."""
    if connection.vendor == "postgresql":
        table = connection.ops.quote_name(OttoBid._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute("CREATE COLLATION IF NOT EXISTS otto_test_shifted "
                           "(provider = icu, locale = 'und-u-ka-shifted')")
            cursor.execute(f"ALTER TABLE {table} ALTER COLUMN bidder TYPE varchar(40) "
                           "COLLATE otto_test_shifted")
            # The collation must really disagree with Python's order, or the test proves nothing.
            cursor.execute("SELECT x FROM (VALUES ('cell-2'), ('cell1')) v(x) ORDER BY x COLLATE otto_test_shifted")
            assert [r[0] for r in cursor.fetchall()] == ["cell1", "cell-2"]
    yield


# clientIds ([a-z0-9-]{1,40}); a pool with ids that differ only by a hyphen is likely.
TRAPS = ["cell-1", "cell1", "cell-10", "cell10", "cell-2", "cell2", "c-ell", "elastic"]
bidder_ids = st.one_of(st.sampled_from(TRAPS), st.from_regex(r"[a-z0-9-]{1,6}", fullmatch=True))
# Costs that tie at 6 decimals without being equal, and instants that tie.
costs = st.sampled_from([0.02, 0.0200004, 0.0199996, 0.0200005, 0.020001, 0.03])
received = st.sampled_from([1.0, 1.0, 2.0, ENDS + 0.5, ENDS + 0.6])

stored_rows = st.lists(st.tuples(
    st.integers(0, 3),  # auction
    st.integers(1, 2),  # attempt
    bidder_ids,
    costs,
    st.sampled_from([1.0, 2.0]),
    st.integers(0, 3),  # arrival sequence: independent of the sim instant (a paused clock)
    st.sampled_from([OttoBid.Status.ACCEPTED, OttoBid.Status.ACCEPTED, OttoBid.Status.LATE,
                     OttoBid.Status.INVALID]),
), max_size=30, unique_by=lambda r: (r[0], r[1], r[2]))


def _auctions(attempts: list[int]) -> list[OttoAuction]:
    OttoBid.objects.all().delete()
    OttoAuction.objects.all().delete()
    return [OttoAuction.objects.create(
        auction_id=f"a-{n}", task_guid=f"t-{n}", raw=RAW, capabilities=ASK.as_dict(), attempt=attempt,
        submitted_at=0, starts=0, ends=ENDS) for n, attempt in enumerate(attempts)]


@example(rows=[(0, 1, "cell-2", 0.02, 1.0, 5, OttoBid.Status.ACCEPTED),  # earlier receipt wins
               (0, 1, "cell-1", 0.0200004, 2.0, 1, OttoBid.Status.ACCEPTED),
               (1, 1, "cell-3", 0.02, 1.0, 2, OttoBid.Status.ACCEPTED),  # then arrival order
               (1, 1, "cell-1", 0.02, 1.0, 3, OttoBid.Status.ACCEPTED),
               (2, 2, "cell-1", 0.01, 1.0, 0, OttoBid.Status.ACCEPTED),  # another attempt
               (2, 1, "cell-2", 0.1, 1.0, 1, OttoBid.Status.ACCEPTED),
               (3, 1, "cell-1", 0.01, 1.0, 0, OttoBid.Status.LATE)],
         attempts=[1, 1, 1, 1])
@example(rows=[(0, 1, "cell1", 0.02, 1.0, 0, OttoBid.Status.ACCEPTED),  # then the lower id, by code point
               (0, 1, "cell-2", 0.0200004, 1.0, 0, OttoBid.Status.ACCEPTED)],
         attempts=[1, 1, 1, 1])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=stored_rows, attempts=st.lists(st.integers(1, 2), min_size=4, max_size=4))
def test_sql_ranking_picks_the_cores_winner(punctuation_blind_bidders, rows, attempts) -> None:  # type: ignore[no-untyped-def]
    auctions = _auctions(attempts)
    for n, attempt, bidder, cost, at, sequence, status in rows:
        OttoBid.objects.create(auction=auctions[n], attempt=attempt, bidder=bidder,
                               cost=round(cost, core.COST_PLACES), received_at=at,
                               sequence=sequence, status=status)
    best = {b[0]: b for b in _best_bids(auctions)}
    for n, auction in enumerate(auctions):
        stored = [core.Bid(bidder, attempt, cost, at, sequence)
                  for i, attempt, bidder, cost, at, sequence, status in rows
                  if i == n and status == OttoBid.Status.ACCEPTED]
        expected = core.choose_winner(stored, auction.attempt)
        got = best.get(auction.pk)
        assert (got[2] if got else None) == (expected.bidder if expected else None)


incoming_bids = st.lists(st.tuples(
    st.integers(0, 2),  # auction
    st.sampled_from([1, 1, 2]),  # attempt
    bidder_ids,
    costs,
    received,
    # Arrival order on one auctioneer; a restarted one (paused clock) counts from 1 again,
    # so equal instants with equal sequences happen.
    st.integers(1, 3),
), max_size=25)


@example(incoming=[(0, 1, "cell-2", 0.02, 1.0, 1), (0, 1, "cell1", 0.0200004, 1.0, 1)],
         roster=["cell-2", "cell1"], attempts=[1, 1, 1])
@example(incoming=[(0, 1, "cell-1", 0.01, 1.0, 1), (0, 1, "cell-1", 0.03, 2.0, 2), (0, 1, "cell-2", 0.02, 2.0, 3),
                   (0, 1, "cell-2", 0.001, ENDS + 0.6, 1)],  # newer replaces; a late one does not
         roster=["cell-1", "cell-2"], attempts=[1, 1, 1])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(incoming=incoming_bids, roster=st.lists(bidder_ids, max_size=6, unique=True),
       attempts=st.lists(st.integers(1, 2), min_size=3, max_size=3))
def test_the_close_awards_the_cores_winner(punctuation_blind_bidders, incoming, roster, attempts) -> None:  # type: ignore[no-untyped-def]
    """Through the production path: bids recorded by ``otto_bids_record`` in arrival order,
    the auctions closed by ``otto_due``; each award is the core's choice among the bids the
    core's ``rejection`` accepts."""
    auctions = _auctions(attempts)
    OttoOrchestrator.objects.all().delete()
    entries = {}
    for client_id in roster:
        OttoOrchestrator.objects.create(client_id=client_id, capabilities=OFFER, alive_until_wall=WALL + 15)
        entries[client_id] = core.RosterEntry(True, WALL + 15, caps.Offer(4, 4096, 4096, True, False))
    incoming = sorted(incoming, key=lambda b: (b[4], b[5]))  # arrival order: the auctioneer's clock
    messages = [IncomingBid(msg.validate(msg.bid_message(f"a-{n}", attempt, bidder, "agent", cost, {}, 0, at)),
                            at, sequence)
                for n, attempt, bidder, cost, at, sequence in incoming]
    otto_bids_record(messages, wall=WALL)
    otto_due(ENDS + 0.5)
    for auction in auctions:
        accepted = []
        for item in messages:
            m = item.message
            if m["auction_id"] != auction.auction_id:
                continue
            bid = core.Bid(m["bidder"], m["attempt"], m["cost"], item.received_at, item.sequence)
            if core.rejection(bid, attempt=auction.attempt, ends=ENDS, state_open=True, ask=ASK,
                              roster=entries.get(bid.bidder), wall=WALL) is None:
                accepted.append(bid)
        expected = core.choose_winner(accepted, auction.attempt)
        row = OttoAuction.objects.get(pk=auction.pk)
        if expected is None:
            assert (row.state, row.winner) == ("no_bids", "")
        else:
            assert (row.state, row.winner, row.cost) == ("awarded", expected.bidder,
                                                         round(expected.cost, core.COST_PLACES))

"""Otto bids (otto.md 5, 6 accept bid): record each bid as it reached the auctioneer,
judged by the core's ``bids.rejection``; one row per (auction, attempt, bidder), a newer
bid replacing the older, a refused duplicate never replacing the live one."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from auction.models import OttoAuction, OttoBid, OttoOrchestrator
from auction.otto import bids as core_bids
from auction.otto import capabilities as caps
from auction.otto import messages as msg
from auction.otto.bids import COST_PLACES, Bid
from auction.services.counters import counters_add
from auction.services.otto.awards import otto_decline
from auction.services.otto.rows import Effects, roster_entry, row_ask, save_fields


@dataclass(frozen=True, slots=True)
class IncomingBid:
    """A bid or decline as it reached the auctioneer: stamped on its sim clock, in arrival order."""

    message: dict[str, Any]
    received_at: float
    sequence: int


def otto_bids_record(incoming: list[IncomingBid], wall: float | None = None) -> Effects:
    """Record a batch of bids and declines as they reached the auctioneer (otto.md 6 accept bid)."""
    effects = Effects()
    if not incoming:
        return effects
    wall = time.time() if wall is None else wall
    with transaction.atomic():
        ids = {b.message["auction_id"] for b in incoming}
        rows = {r.auction_id: r for r in OttoAuction.objects.select_for_update().filter(auction_id__in=ids)}
        roster = {r.client_id: r for r in OttoOrchestrator.objects.filter(
            client_id__in={b.message["bidder"] for b in incoming})}
        existing = _existing_bids(rows, incoming)
        new: dict[tuple[str, int, str], OttoBid] = {}
        counts = {"OttoBidsReceived": 0, "OttoLateBids": 0}
        asks: dict[str, caps.Ask] = {}
        for item in incoming:
            m = item.message
            row = rows.get(m["auction_id"])
            if row is None:
                counters_add({"OttoMalformedMessages": 1})
                continue
            if m["type"] == msg.DECLINE:
                otto_decline(row, m["bidder"], m["attempt"], m.get("reason", ""), item.received_at, effects)
                continue
            counts["OttoBidsReceived"] += 1
            key = (row.auction_id, m["attempt"], m["bidder"])
            if row.auction_id not in asks:
                asks[row.auction_id] = row_ask(row)
            refusal = core_bids.rejection(
                Bid(m["bidder"], m["attempt"], float(m["cost"]), item.received_at, item.sequence, m["kind"],
                    float(m["ready_in_s"])),
                attempt=row.attempt, ends=row.ends, state_open=row.state == OttoAuction.State.OPEN,
                ask=asks[row.auction_id], roster=roster_entry(roster.get(m["bidder"])), wall=wall,
                excluded=row.excluded)
            status = OttoBid.Status.ACCEPTED if refusal is None else OttoBid.Status(refusal.status)
            reason = "" if refusal is None else refusal.reason
            if status == OttoBid.Status.LATE:
                counts["OttoLateBids"] += 1
            held = new.get(key) or existing.get(key)
            if held is not None and held.status == OttoBid.Status.ACCEPTED and status != OttoBid.Status.ACCEPTED:
                continue  # a refused duplicate never replaces the live bid
            bid = held or OttoBid(auction=row, attempt=m["attempt"], bidder=m["bidder"])
            # Stored to the 6 places the ranking compares (bids.COST_PLACES), so SQL can rank.
            bid.kind, bid.cost, bid.breakdown = m["kind"], round(float(m["cost"]), COST_PLACES), m["breakdown"]
            bid.ready_in_s, bid.sent_at = float(m["ready_in_s"]), m["_t"].get("sent_at")
            bid.received_at, bid.sequence, bid.status, bid.reason = item.received_at, item.sequence, status, reason
            new[key] = bid
            effects.touched.add(row.auction_id)
        creates = [b for b in new.values() if b.pk is None]
        updates = [b for b in new.values() if b.pk is not None]
        OttoBid.objects.bulk_create(creates, batch_size=1000)
        save_fields(OttoBid, updates, ["kind", "cost", "breakdown", "ready_in_s", "sent_at", "received_at",
                                       "sequence", "status", "reason"])
        counters_add(counts)
    return effects


def _existing_bids(rows: dict[str, OttoAuction], incoming: list[IncomingBid]) -> dict[tuple[str, int, str], OttoBid]:
    """The stored bids with the same (auction, attempt, bidder) keys as this batch, and no others."""
    keys = {(rows[b.message["auction_id"]].pk, b.message["attempt"], b.message["bidder"])
            for b in incoming if b.message["auction_id"] in rows and b.message["type"] == msg.BID}
    if not keys:
        return {}
    by_pk = {row.pk: row for row in rows.values()}
    # A light read of the candidate keys first; whole rows only for the (rare) replacements.
    candidates = OttoBid.objects.filter(
        auction_id__in={k[0] for k in keys}, bidder__in={k[2] for k in keys},
    ).values_list("pk", "auction_id", "attempt", "bidder")
    wanted = [pk for pk, auction, attempt, bidder in candidates if (auction, attempt, bidder) in keys]
    found: dict[tuple[str, int, str], OttoBid] = {}
    for bid in OttoBid.objects.filter(pk__in=wanted):
        bid.auction = by_pk[bid.auction_id]
        found[(bid.auction.auction_id, bid.attempt, bid.bidder)] = bid
    return found

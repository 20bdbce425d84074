"""Otto awards (otto.md 5-7): the close ranks each auction's bids in SQL and awards the
core's winner; a winner that declines or does not start by ``start_by`` loses the award
to a re-auction; a start for a superseded attempt is revoked."""

from __future__ import annotations

import time
from typing import Any

from django.db import connection
from django.db.models import F, Window
from django.db.models.functions import Collate, RowNumber

from auction.models import BBSEvent, OttoAuction, OttoBid, OttoOrchestrator, SimClock
from auction.otto import lifecycle
from auction.otto import messages as msg
from auction.otto.bids import Bid
from auction.services import otto_bus as bus
from auction.services.counters import counters_add
from auction.services.events import event_record, events_store
from auction.services.otto.rows import (
    Effects,
    announce,
    apply_state,
    fail_task,
    row_ask,
    save_fields,
    to_state,
    unmet,
)


def _close_due_wall(clock: SimClock, closes_at: float) -> float:
    """The wall instant the sim clock reached ``closes_at`` (a step reaches it at the step)."""
    if clock.paused or clock.speed <= 0:
        return clock.anchor_wall
    return max(clock.anchor_wall, clock.anchor_wall + (closes_at - clock.anchor_sim) / clock.speed)


def close(rows: list[OttoAuction], now: float, clock: SimClock, effects: Effects) -> None:
    """Close at ends + grace, exactly once: the rows are locked and re-checked as open."""
    bids_by: dict[int, list[Bid]] = {}
    for b in _best_bids(rows):
        bids_by.setdefault(b[0], []).append(Bid(b[2], b[1], b[3], b[4], b[5], b[6], b[7]))
    wall = time.time()
    awarded: list[OttoAuction] = []
    for row in rows:
        state = lifecycle.closed(to_state(row), bids_by.get(row.pk, []), now, jitter_seed=row.auction_id)
        apply_state(row, state, now)
        row.closed_at = state.closes_at
        if state.state == lifecycle.AWARDED:
            row.awarded_wall = wall
            effects.awards.append((row.auction_id, _close_due_wall(clock, state.closes_at)))
            awarded.append(row)
            effects.send(bus.inbox(row.winner), msg.award_message(
                row.auction_id, row.attempt, {"raw": row.raw, "capabilities": row.capabilities},
                row.cost or 0.0, row.start_by or now))
        else:
            row.unmet = unmet(row_ask(row), wall)
            if row.unmet:
                row.note = f"{row.note} (nobody offers {', '.join(row.unmet)})"
                row.history[-1][1] = row.note
        effects.touched.add(row.auction_id)
    save_fields(OttoAuction, rows, ["state", "attempt", "starts", "ends", "announcements", "winner", "cost",
                                    "start_by", "next_announce_at", "failure_reason", "note", "excluded",
                                    "history", "updated_wall", "closed_at", "awarded_wall", "unmet"])
    no_bids = len(rows) - len(awarded)
    counters_add({"OttoAuctionsAwarded": len(awarded), "OttoAuctionsNoBids": no_bids,
                  "OttoCostTotal": 0})
    wins: dict[str, int] = {}
    for row in awarded:
        wins[row.winner] = wins.get(row.winner, 0) + 1
    for winner, n in wins.items():
        OttoOrchestrator.objects.filter(client_id=winner).update(wins=F("wins") + n)
    events_store(
        [BBSEvent(at=now, type="otto_awarded", key=r.auction_id,
                  data={"winner": r.winner, "cost": r.cost, "attempt": r.attempt}) for r in awarded]
        + [BBSEvent(at=now, type="otto_no_bids", key=r.auction_id,
                    data={"unmet": r.unmet, "next_announce_at": r.next_announce_at})
           for r in rows if r.state == OttoAuction.State.NO_BIDS])


# Bidder ids tie-break by code point, as Python compares them (bids.ranking_key). A
# database's default collation may not: glibc's en_US.UTF-8 (PostgreSQL's docker image)
# ignores the hyphen, putting "cell1" before "cell-2".
_CODEPOINT_COLLATION = {"postgresql": "C", "sqlite": "BINARY"}


def _by_code_point(field: str) -> Any:
    collation = _CODEPOINT_COLLATION.get(connection.vendor)
    return Collate(F(field), collation) if collation else F(field)


def _best_bids(rows: list[OttoAuction]) -> list[tuple[Any, ...]]:
    """Per closing auction, its best accepted bid of the open attempt, ranked in SQL.

    The same order as ``bids.ranking_key`` (costs are stored to 6 places; one row per
    bidder and attempt is a constraint), so ``lifecycle.closed`` picks the same winner
    from this one bid as from all of them, while a close of 1,000 auctions with 50 bids
    each reads 1,000 rows, not 50,000.
    """
    ranked = OttoBid.objects.filter(
        auction__in=rows, status=OttoBid.Status.ACCEPTED, attempt=F("auction__attempt"),
    ).annotate(rank=Window(RowNumber(), partition_by=[F("auction_id")],
                           order_by=[F("cost").asc(), F("received_at").asc(), F("sequence").asc(),
                                     _by_code_point("bidder").asc()]))
    return list(ranked.filter(rank=1).values_list(
        "auction_id", "attempt", "bidder", "cost", "received_at", "sequence", "kind", "ready_in_s"))


def reauction(row: OttoAuction, now: float, reason: str, effects: Effects) -> None:
    """The award is lost: revoke it, then attempt n+1 without the loser, or fail after 5."""
    loser, lost_attempt = row.winner, row.attempt
    state = lifecycle.reauctioned(to_state(row), now, reason, row.duration_s)
    apply_state(row, state, now)
    row.save()
    effects.send(bus.inbox(loser), msg.revoke_message(row.auction_id, lost_attempt, reason))
    effects.touched.add(row.auction_id)
    if state.state == lifecycle.FAILED:
        fail_task(row, state.failure_reason, now)
        return
    counters_add({"OttoReauctions": 1})
    event_record("otto_reauctioned", now, key=row.auction_id, attempt=row.attempt, reason=reason)
    announce(row, effects)


def start_timeout(row: OttoAuction, now: float, effects: Effects) -> None:
    """The winner did not start by ``start_by``: revoke and re-auction (otto.md 7)."""
    counters_add({"OttoStartTimeouts": 1})
    OttoOrchestrator.objects.filter(client_id=row.winner).update(start_timeouts=F("start_timeouts") + 1)
    reauction(row, now, f"{row.winner} did not start by {msg.to_iso(row.start_by or now)}", effects)


def otto_decline(row: OttoAuction, bidder: str, attempt: int, reason: str, now: float, effects: Effects) -> None:
    """The winner declined (its capacity is gone): re-auction at once (otto.md 7)."""
    if not lifecycle.start_allowed(to_state(row), bidder, attempt):
        return
    counters_add({"OttoDeclines": 1})
    OttoOrchestrator.objects.filter(client_id=bidder).update(declines=F("declines") + 1)
    OttoBid.objects.filter(auction=row, attempt=attempt, bidder=bidder).update(
        status=OttoBid.Status.DECLINED, reason=reason)
    reauction(row, now, f"declined by {bidder}" + (f" ({reason})" if reason else ""), effects)


def otto_started_seen(message: dict[str, Any], now: float) -> Effects:
    """``otto.started`` for an attempt that is no longer the winner's: reply ``otto.revoke``."""
    effects = Effects()
    row = OttoAuction.objects.filter(auction_id=message["auction_id"]).first()
    if row is None:
        return effects
    if lifecycle.started_by(to_state(row), message["bidder"], message["attempt"]):
        effects.touched.add(row.auction_id)
        return effects
    effects.send(bus.inbox(message["bidder"]), msg.revoke_message(
        row.auction_id, message["attempt"], "superseded"))
    return effects


def otto_award_latencies_record(latencies_ms: dict[str, float]) -> None:
    """Award latency = award sent - close due, measured by the auctioneer after sending.

    Kept for an auction's first award (a re-auction's award is a new window, not a delay).
    """
    rows = list(OttoAuction.objects.filter(auction_id__in=list(latencies_ms), award_latency_ms__isnull=True)
                .only("pk", "auction_id"))
    for row in rows:
        row.award_latency_ms = round(latencies_ms[row.auction_id], 3)
    save_fields(OttoAuction, rows, ["award_latency_ms"])

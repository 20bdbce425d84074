"""Accepting bids and choosing the winner (otto.md 5, 6)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

GRACE_S = 0.5
COST_PLACES = 6


@dataclass(frozen=True, slots=True)
class Bid:
    bidder: str
    attempt: int
    cost: float
    received_at: float  # the auctioneer's sim clock at arrival: the only judge of lateness
    sequence: int = 0  # arrival order, for equal sim instants (a paused clock)
    kind: str = "agent"
    ready_in_s: float = 0.0


def lateness(received_at: float, ends: float, grace_s: float = GRACE_S) -> float | None:
    """Seconds past ``ends`` when the bid is late (beyond the grace), else None."""
    if received_at > ends + grace_s:
        return round(received_at - ends, 3)
    return None


def rejection(bid: Bid, *, attempt: int, ends: float, state_open: bool, bidder_live: bool,
              bidder_capable: bool, grace_s: float = GRACE_S) -> str | None:
    """Why a bid is refused (kept as late or invalid with this reason), or None to accept it."""
    late = lateness(bid.received_at, ends, grace_s)
    if late is not None:
        return f"late: arrived {late:g} s after ends"
    if bid.attempt != attempt:
        return f"invalid: for attempt {bid.attempt}, open is {attempt}"
    if not state_open:
        return "late: auction already closed"
    if not bidder_live:
        return "invalid: bidder not live in the roster"
    if not bidder_capable:
        return "invalid: bidder lacks a capability"
    return None


def live_bids(bids: Iterable[Bid], attempt: int) -> list[Bid]:
    """One live bid per bidder for ``attempt``: a newer one replaces the older."""
    latest: dict[str, Bid] = {}
    for bid in bids:
        if bid.attempt != attempt:
            continue
        held = latest.get(bid.bidder)
        if held is None or (bid.received_at, bid.sequence) >= (held.received_at, held.sequence):
            latest[bid.bidder] = bid
    return list(latest.values())


def ranking_key(bid: Bid) -> tuple[float, float, int, str]:
    return (round(bid.cost, COST_PLACES), bid.received_at, bid.sequence, bid.bidder)


def choose_winner(bids: Iterable[Bid], attempt: int) -> Bid | None:
    """Lowest cost to 6 decimals; ties: earlier receipt, then the lower bidder id."""
    candidates = live_bids(bids, attempt)
    if not candidates:
        return None
    return min(candidates, key=ranking_key)


def leader(bids: Iterable[Bid], attempt: int) -> Bid | None:
    return choose_winner(bids, attempt)

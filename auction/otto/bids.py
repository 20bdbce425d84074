"""Accepting bids and choosing the winner (otto.md 5, 6)."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from auction.otto.capabilities import Ask, Offer, missing

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


LATE, INVALID = "late", "invalid"


def roster_live(enabled: bool, alive_until_wall: float, wall: float) -> bool:
    """A roster row is live while enabled and its presence (refreshed every 5 s, 15 s TTL)
    has not lapsed on the wall clock (otto.md 1)."""
    return enabled and wall < alive_until_wall


@dataclass(frozen=True, slots=True)
class RosterEntry:
    """A bidder as the roster shows it to the auctioneer: presence and what it could ever give."""

    enabled: bool
    alive_until_wall: float
    offer: Offer

    def live(self, wall: float) -> bool:
        return roster_live(self.enabled, self.alive_until_wall, wall)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A refused bid is kept with its status (``late`` or ``invalid``) and the reason."""

    status: str
    reason: str


def rejection(bid: Bid, *, attempt: int, ends: float, state_open: bool, ask: Ask,
              roster: RosterEntry | None, wall: float, excluded: Collection[str] = (),
              grace_s: float = GRACE_S) -> Refusal | None:
    """Why the auctioneer refuses ``bid`` (otto.md 6 accept bid), or None to accept it.

    One order; the first failing check names the refusal:

    1. the attempt: a bid for another attempt is invalid (ignored, otto.md 5); its
       lateness against this attempt's ``ends`` would mean nothing;
    2. arrival after ``ends`` + grace on the auctioneer's clock: late;
    3. the auction no longer open (it closed at ``ends`` + grace): late;
    4. left out of this attempt's first announcement (otto.md 7): invalid;
    5. not live in the roster (absent, disabled or presence lapsed): invalid;
    6. roster capabilities that do not cover the task's ``ask``: invalid, naming them.
    """
    if bid.attempt != attempt:
        return Refusal(INVALID, f"invalid: for attempt {bid.attempt}, current is {attempt}")
    late = lateness(bid.received_at, ends, grace_s)
    if late is not None:
        return Refusal(LATE, f"late: arrived {late:g} s after ends")
    if not state_open:
        return Refusal(LATE, "late: auction already closed")
    if bid.bidder in excluded:
        return Refusal(INVALID, "invalid: left out of this announcement")
    if roster is None or not roster.live(wall):
        return Refusal(INVALID, "invalid: bidder not live in the roster")
    lacks = missing(ask, roster.offer)
    if lacks:
        return Refusal(INVALID, f"invalid: lacks {', '.join(lacks)}")
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


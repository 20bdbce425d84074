"""The auction state machine (otto.md 6, 7): pure transitions on plain values.

    open --close, bids--> awarded --started--> started --finished--> finished
    open --close, none--> no_bids --back-off due--> open (same attempt, one more announcement)
    awarded --start_by passed / declined--> open (attempt n+1, the loser left out) | failed (5 attempts)
    any pending state --1800 s since the task was submitted--> failed

The service applies each transition with a conditional update on (state, attempt), so a
transition runs exactly once even with a stale second auctioneer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from auction.otto.backoff import backoff_delay
from auction.otto.bids import GRACE_S, Bid, choose_winner

DEFAULT_DURATION_S = 5.0
MIN_DURATION_S, MAX_DURATION_S = 1.0, 60.0
START_TIMEOUT_S = 10.0
MAX_ATTEMPTS = 5
PENDING_LIMIT_S = 1800.0
NOT_STARTED = "not started after 5 auctions"
PENDING_EXPIRED = "not started within time limit"

OPEN, NO_BIDS, AWARDED, STARTED, FINISHED, FAILED = "open", "no_bids", "awarded", "started", "finished", "failed"
PENDING_STATES = (OPEN, NO_BIDS, AWARDED)
# Sim instants are sums of floats (steps, durations, grace): a transition due at t also
# fires at t minus float noise, or a clock stepped exactly to t could wait forever.
DUE_EPS_S = 1e-6


def _ms_floor(t: float) -> float:
    """Whole milliseconds, never later than ``t``: a rounded-up deadline would not be
    reached by a clock stepped exactly to the unrounded one."""
    return math.floor(t * 1000 + 1e-6) / 1000


class LifecycleError(ValueError):
    pass


def check_duration(duration_s: float) -> float:
    if not (MIN_DURATION_S <= duration_s <= MAX_DURATION_S):
        raise LifecycleError(f"auction duration must be 1-60 sim-s, got {duration_s:g}")
    return float(duration_s)


@dataclass(frozen=True, slots=True)
class AuctionState:
    auction_id: str
    state: str
    attempt: int
    starts: float
    ends: float
    submitted_at: float
    announcements: int = 1
    winner: str = ""
    cost: float | None = None
    start_by: float | None = None
    next_announce_at: float | None = None
    excluded: tuple[str, ...] = ()  # left out of this attempt's first announcement only
    failure_reason: str = ""
    note: str = ""  # what the board says about the last transition

    @property
    def closes_at(self) -> float:
        return self.ends + GRACE_S


def opened(auction_id: str, now: float, duration_s: float = DEFAULT_DURATION_S) -> AuctionState:
    return AuctionState(auction_id, OPEN, 1, now, now + check_duration(duration_s), submitted_at=now)


def due_at(auction: AuctionState) -> float | None:
    """The next sim instant at which this auction needs the auctioneer, if any."""
    if auction.state == OPEN:
        return auction.closes_at
    if auction.state == NO_BIDS:
        return min(auction.next_announce_at or 0.0, auction.submitted_at + PENDING_LIMIT_S)
    if auction.state == AWARDED:
        return auction.start_by
    return None


def closed(auction: AuctionState, bids: list[Bid], now: float, jitter_seed: str | None = None) -> AuctionState:
    """Close at ``ends`` + grace: award the lowest cost, or schedule a re-announcement."""
    if auction.state != OPEN:
        raise LifecycleError(f"cannot close an auction in state {auction.state}")
    if now + DUE_EPS_S < auction.closes_at:
        raise LifecycleError("the auction closes at ends + grace")
    close_at = auction.closes_at
    winner = choose_winner(bids, auction.attempt)
    if winner is None:
        delay = backoff_delay(auction.announcements, jitter_seed)
        return replace(auction, state=NO_BIDS, next_announce_at=_ms_floor(close_at + delay),
                       note=f"no bids, re-announce in {delay:g} s")
    start_by = close_at + START_TIMEOUT_S + winner.ready_in_s
    return replace(auction, state=AWARDED, winner=winner.bidder, cost=round(winner.cost, 6),
                   start_by=_ms_floor(start_by), note=f"awarded to {winner.bidder}")


def reannounced(auction: AuctionState, now: float, duration_s: float = DEFAULT_DURATION_S) -> AuctionState:
    """No bids and the back-off is over: announce again, same attempt."""
    if auction.state != NO_BIDS:
        raise LifecycleError(f"cannot re-announce an auction in state {auction.state}")
    return replace(auction, state=OPEN, starts=now, ends=now + check_duration(duration_s),
                   announcements=auction.announcements + 1, next_announce_at=None, excluded=(),
                   note=f"re-announced ({auction.announcements + 1})")


def reauctioned(auction: AuctionState, now: float, reason: str,
                duration_s: float = DEFAULT_DURATION_S) -> AuctionState:
    """The winner did not start (timeout or decline): attempt n+1 without it, or fail after 5."""
    if auction.state != AWARDED:
        raise LifecycleError(f"cannot re-auction an auction in state {auction.state}")
    if auction.attempt >= MAX_ATTEMPTS:
        return replace(auction, state=FAILED, failure_reason=NOT_STARTED,
                       note=f"failed after {MAX_ATTEMPTS} attempts")
    attempt = auction.attempt + 1
    return replace(auction, state=OPEN, attempt=attempt, starts=now, ends=now + check_duration(duration_s),
                   announcements=1, winner="", cost=None, start_by=None, excluded=(auction.winner,),
                   note=f"{reason}: attempt {attempt}")


def start_timed_out(auction: AuctionState, now: float) -> bool:
    return auction.state == AWARDED and auction.start_by is not None and now + DUE_EPS_S >= auction.start_by


def pending_expired(auction: AuctionState, now: float) -> bool:
    return auction.state in PENDING_STATES and now + DUE_EPS_S >= auction.submitted_at + PENDING_LIMIT_S


def start_allowed(auction: AuctionState, bidder: str, attempt: int) -> bool:
    """Start is at-most-once: only the current winner of the current attempt may start."""
    return auction.state == AWARDED and auction.winner == bidder and auction.attempt == attempt


def expired(auction: AuctionState) -> AuctionState:
    return replace(auction, state=FAILED, failure_reason=PENDING_EXPIRED, note=PENDING_EXPIRED)

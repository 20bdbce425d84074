"""The auction state machine (otto.md 6, 7): pure transitions on plain values.

    open --close, bids--> awarded --started--> started --finished--> finished
    open --close, none--> no_bids --back-off due--> open (same attempt, one more announcement)
    awarded --start_by passed / declined--> open (attempt n+1, the loser left out) | failed (5 attempts)
    open | no_bids --1800 s since the task was submitted--> failed
    (an awarded auction is not expired: its winner holds it until start_by, and the
    timeout's re-auction re-opens it, which then expires)

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
EXPIRABLE_STATES = (OPEN, NO_BIDS)
# Sim instants are sums of floats (steps, durations, grace): a transition due at t also
# fires at t minus float noise, or a clock stepped exactly to t could wait forever.
DUE_EPS_S = 1e-6
# A database selects candidate rows with ``due_bounds``: looser than the predicates by this
# much, so float rounding in the SQL comparison never leaves a due auction out.
PREFILTER_SLACK_S = 1e-3


def reached(deadline: float, now: float) -> bool:
    """Has the sim clock reached ``deadline``? (The one comparison every transition uses.)"""
    return now + DUE_EPS_S >= deadline


def wake_in(next_due: float | None, now: float, speed: float, paused: bool, recheck_s: float) -> float:
    """Wall seconds the auctioneer may sleep before a deadline is due (otto.md 11).

    The soonest deadline ``next_due`` is reached after ``(next_due - now) / speed`` wall
    seconds on a running clock; a paused clock reaches nothing, and with nothing pending
    there is nothing to reach: then only ``recheck_s`` (a clock change or an arrival wakes
    the auctioneer sooner). Never negative, never longer than ``recheck_s``.
    """
    if paused or next_due is None or speed <= 0:
        return recheck_s
    return max(0.0, min(recheck_s, (next_due - now) / speed))


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

    @property
    def expires_at(self) -> float:
        return self.submitted_at + PENDING_LIMIT_S


def opened(auction_id: str, now: float, duration_s: float = DEFAULT_DURATION_S) -> AuctionState:
    return AuctionState(auction_id, OPEN, 1, now, now + check_duration(duration_s), submitted_at=now)


def due_at(auction: AuctionState) -> float | None:
    """The next sim instant at which this auction needs the auctioneer, if any."""
    if auction.state == OPEN:
        return min(auction.closes_at, auction.expires_at)
    if auction.state == NO_BIDS:
        if auction.next_announce_at is None:
            return auction.expires_at
        return min(auction.next_announce_at, auction.expires_at)
    if auction.state == AWARDED:
        return auction.start_by
    return None


def close_due(auction: AuctionState, now: float) -> bool:
    """An open auction closes at ``ends`` + grace on the auctioneer's clock."""
    return auction.state == OPEN and reached(auction.closes_at, now)


def reannounce_due(auction: AuctionState, now: float) -> bool:
    """No bids, and the back-off is over."""
    return (auction.state == NO_BIDS and auction.next_announce_at is not None
            and reached(auction.next_announce_at, now))


def start_timed_out(auction: AuctionState, now: float) -> bool:
    """The winner has not started by ``start_by``."""
    return auction.state == AWARDED and auction.start_by is not None and reached(auction.start_by, now)


def pending_expired(auction: AuctionState, now: float) -> bool:
    """Open or backing off 1800 s after the task was submitted: Diego's time limit."""
    return auction.state in EXPIRABLE_STATES and reached(auction.expires_at, now)


@dataclass(frozen=True, slots=True)
class DueBounds:
    """Upper bounds on the deadline columns of every auction due at some instant, for a
    database to select candidate rows with (a superset); the predicates above decide."""

    ends: float  # open: close_due
    start_by: float  # awarded: start_timed_out
    next_announce_at: float  # no_bids: reannounce_due
    submitted_at: float  # open, no_bids: pending_expired


def due_bounds(now: float) -> DueBounds:
    horizon = now + DUE_EPS_S + PREFILTER_SLACK_S
    return DueBounds(ends=horizon - GRACE_S, start_by=horizon, next_announce_at=horizon,
                     submitted_at=horizon - PENDING_LIMIT_S)


def closed(auction: AuctionState, bids: list[Bid], now: float, jitter_seed: str | None = None) -> AuctionState:
    """Close at ``ends`` + grace: award the lowest cost, or schedule a re-announcement."""
    if auction.state != OPEN:
        raise LifecycleError(f"cannot close an auction in state {auction.state}")
    if not close_due(auction, now):
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


def arrival(stamp: float, now: float) -> float:
    """A task's arrival instant: stamped with the clock the auctioneer had cached, never
    later than the clock it reads at open time (a scenario load or clock reset between
    the two moved the clock back; an auction announced on the old clock would close an
    old epoch's minutes later and judge every bid invalid)."""
    return min(stamp, now)


def restamped(auction: AuctionState, now: float) -> AuctionState:
    """The clock went back past this pending auction's submission: its whole schedule
    (submission, window, start deadline, re-announcement) moves by the same amount, so
    it keeps the time it had left; others are returned unchanged."""
    if auction.state not in PENDING_STATES or auction.submitted_at <= now + DUE_EPS_S:
        return auction
    shift = now - auction.submitted_at

    def moved(at: float | None) -> float | None:
        return None if at is None else at + shift

    return replace(auction, submitted_at=now, starts=auction.starts + shift, ends=auction.ends + shift,
                   start_by=moved(auction.start_by), next_announce_at=moved(auction.next_announce_at),
                   note="re-stamped: the clock went back")


def start_allowed(auction: AuctionState, bidder: str, attempt: int) -> bool:
    """Start is at-most-once: only the current winner of the current attempt may start."""
    return auction.state == AWARDED and auction.winner == bidder and auction.attempt == attempt


def started_by(auction: AuctionState, bidder: str, attempt: int) -> bool:
    """``otto.started`` from the winner that did start this attempt (any other is superseded)."""
    return auction.state == STARTED and auction.winner == bidder and auction.attempt == attempt


def expired(auction: AuctionState) -> AuctionState:
    return replace(auction, state=FAILED, failure_reason=PENDING_EXPIRED, note=PENDING_EXPIRED)

"""Pure unit tests of the Otto core (otto.md 10: capabilities, cost, winner, back-off, ISO, lateness)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auction.otto import backoff, bids, capabilities, cost, lifecycle, messages, times
from auction.otto.bids import Bid
from auction.otto.capabilities import Ask, CapabilityError, Offer


def test_iso_round_trip_and_z_required() -> None:
    """otto.md 3: ISO-8601 UTC with milliseconds and a Z; a missing Z is an error."""
    assert times.to_iso(600) == "2025-01-01T00:10:00.000Z"
    assert times.to_iso(605.25) == "2025-01-01T00:10:05.250Z"
    assert times.from_iso("2025-01-01T00:10:05.000Z") == 605.0
    assert times.from_iso(times.to_iso(1234.567)) == pytest.approx(1234.567)
    for bad in ("2025-01-01T00:10:05.000", "2025-01-01T00:10:05+00:00", "1970-01-01", 5, None,
                "2025-13-01T00:00:00.000Z"):
        with pytest.raises(times.TimeFormatError):
            times.from_iso(bad)


def test_memory_parsing() -> None:
    """otto.md 4: memory matches ^[1-9][0-9]*[MG]$, M = MiB, G = 1024 MiB."""
    assert capabilities.parse_memory("50M") == 50
    assert capabilities.parse_memory("1G") == 1024
    for bad in ("0M", "1g", "1.5G", "1024", "", 1024, "01G"):
        with pytest.raises(CapabilityError):
            capabilities.parse_memory(bad)


def test_capabilities_derived_from_raw() -> None:
    """otto.md 3: omitted capabilities come from raw: memory_mb, docker: rootfs, cores = 1."""
    ask = capabilities.derive({"memory_mb": 512, "rootfs": "docker:///busybox"}, {})
    assert ask == Ask(cores=1, memory_mb=512, docker_run=True, docker_build=False)
    ask = capabilities.derive({"memory_mb": 512, "rootfs": "preloaded:cflinuxfs4"}, {"cores": 2, "memory": "1G"})
    assert (ask.cores, ask.memory_mb, ask.docker_run) == (2, 1024, False)
    with pytest.raises(CapabilityError):
        capabilities.derive({}, {"cores": 0})
    with pytest.raises(CapabilityError):
        capabilities.derive({}, {"docker_run": "yes"})


def test_capability_matching_and_unknown_keys() -> None:
    """otto.md 4: each check, and an unknown key is conservative: nobody can bid."""
    ask = capabilities.derive({"rootfs": "docker:///x"}, {"cores": 2, "memory": "1G", "docker_build": True})
    full = Offer(cores=4, memory_mb=4096, disk_mb=10_000, docker_run=True, docker_build=True)
    assert capabilities.missing(ask, full) == []
    no_build = Offer(4, 4096, 10_000, True, False)
    assert capabilities.missing(ask, no_build) == ["docker_build"]
    small = Offer(1, 512, 10_000, False, True)
    assert capabilities.missing(ask, small) == ["cores", "memory", "docker_run"]
    assert capabilities.missing(ask, full, disk_mb=20_000) == ["disk"]
    strange = capabilities.derive({}, {"gpu": 1})
    assert strange.unknown == ("gpu",)
    assert capabilities.missing(strange, full) == ["gpu"]
    assert capabilities.unmet_by_all(ask, [no_build]) == ["docker_build"]


def test_cost_worked_example() -> None:
    """otto.md 5 worked example: 2 cores, 1G, docker_run, 600 s."""
    cell1 = cost.bid_cost(rate_per_hour=0.10, estimated_s=600, speed=1.0, utilisation=0.25)
    cell2 = cost.bid_cost(rate_per_hour=0.10, estimated_s=600, speed=1.0, utilisation=0.75)
    u_small = cost.utilisation(1024, 4096, 2, 2)
    assert u_small == 0.625
    elastic = cost.bid_cost(rate_per_hour=0.30, estimated_s=600, speed=1.5, utilisation=u_small,
                            provision_s=90, new_cell=True)
    assert cell1.total == 0.018750
    assert cell2.total == 0.022917
    assert elastic.total == 0.066250
    assert elastic.as_dict() == {"run": 0.033333, "load": 0.010417, "provision": 0.0175, "delay": 0.005}
    # Default run time 60 s; an idle agent pays no provisioning or delay.
    idle = cost.bid_cost(rate_per_hour=0.10, estimated_s=None, speed=1.0, utilisation=0.0)
    assert (idle.provision, idle.delay) == (0.0, 0.0)
    assert idle.total == round(0.10 * 60 / 3600, 6)


def test_winner_lowest_cost_and_tie_breaks() -> None:
    """otto.md 5: lowest cost to 6 decimals; ties to the earlier receipt, then the lower id."""
    a = Bid("cell-2", 1, 0.0229171, received_at=1.0)
    b = Bid("cell-1", 1, 0.01875, received_at=2.0)
    assert bids.choose_winner([a, b], 1) == b
    t1 = Bid("cell-b", 1, 0.0100001, received_at=1.0)
    t2 = Bid("cell-a", 1, 0.0100004, received_at=1.5)
    assert bids.choose_winner([t2, t1], 1) == t1  # equal at 6 places: earlier receipt
    t3 = Bid("cell-a", 1, 0.01, received_at=1.0)
    assert bids.choose_winner([t1, t3], 1) == t3  # same instant: lower bidder id
    assert bids.choose_winner([], 1) is None


def test_one_live_bid_per_bidder_per_attempt() -> None:
    """otto.md 5: a newer bid replaces the older; bids for another attempt are ignored."""
    old = Bid("cell-1", 1, 0.01, received_at=1.0)
    new = Bid("cell-1", 1, 0.05, received_at=2.0)
    other = Bid("cell-2", 1, 0.03, received_at=1.0)
    stale = Bid("cell-3", 2, 0.001, received_at=1.0)
    assert bids.choose_winner([old, new, other, stale], 1) == other
    assert bids.choose_winner([old, new, other, stale], 2) == stale


WORKED_ASK = Ask(cores=2, memory_mb=1024, docker_run=True)
LIVE = bids.RosterEntry(True, alive_until_wall=1015.0, offer=Offer(8, 4096, 10000, True, False))


def _judge(bid: Bid, *, attempt: int = 1, state_open: bool = True, ask: Ask = WORKED_ASK,
           roster: bids.RosterEntry | None = LIVE, wall: float = 1000.0,
           excluded: tuple[str, ...] = ()) -> bids.Refusal | None:
    return bids.rejection(bid, attempt=attempt, ends=105.0, state_open=state_open, ask=ask, roster=roster,
                          wall=wall, excluded=excluded)


def test_lateness_rule() -> None:
    """otto.md 6-7: judged only by arrival on the auctioneer's clock, with 0.5 s grace."""
    assert bids.lateness(105.5, 105.0) is None
    assert bids.lateness(107.8, 105.0) == 2.8
    late = Bid("cell-9", 1, 0.01, received_at=107.8)
    assert _judge(late, state_open=False) == bids.Refusal("late", "late: arrived 2.8 s after ends")
    assert _judge(Bid("cell-9", 1, 0.01, received_at=105.5)) is None  # within the grace
    assert _judge(Bid("cell-9", 1, 0.01, received_at=104.0)) is None


def test_acceptance_checks_in_one_order_with_one_wording() -> None:
    """otto.md 6 accept bid: attempt, arrival by ends + grace, still open, not left out, live in
    the roster, capabilities that cover the task; the first failing check names the refusal."""
    ok = Bid("cell-9", 1, 0.01, received_at=104.0)
    assert _judge(Bid("cell-9", 2, 0.01, received_at=110.0), state_open=False) == bids.Refusal(
        "invalid", "invalid: for attempt 2, current is 1")  # another attempt: never "late"
    assert _judge(ok, state_open=False) == bids.Refusal("late", "late: auction already closed")
    assert _judge(ok, excluded=("cell-9",), roster=None) == bids.Refusal(
        "invalid", "invalid: left out of this announcement")
    not_live = bids.Refusal("invalid", "invalid: bidder not live in the roster")
    assert _judge(ok, roster=None) == not_live
    assert _judge(ok, wall=1015.0) == not_live  # presence lapsed
    disabled = bids.RosterEntry(False, 1015.0, LIVE.offer)
    assert _judge(ok, roster=disabled) == not_live
    weak = bids.RosterEntry(True, 1015.0, Offer(1, 512, 10000, False, False))
    assert _judge(ok, roster=weak) == bids.Refusal("invalid", "invalid: lacks cores, memory, docker_run")
    assert _judge(ok, ask=Ask(unknown=("gpu",))) == bids.Refusal("invalid", "invalid: lacks gpu")


def test_backoff_schedule() -> None:
    """otto.md 7: 2, 4, 8, 16, 32, 60, 60 ... with +-10 % seeded jitter."""
    assert [backoff.backoff_delay(n) for n in range(1, 9)] == [2, 4, 8, 16, 32, 60, 60, 60]
    for n in range(1, 9):
        jittered = backoff.backoff_delay(n, "a-1")
        base = backoff.backoff_delay(n)
        assert base * 0.9 <= jittered <= base * 1.1
        assert jittered == backoff.backoff_delay(n, "a-1")  # seeded: replays the same


def test_lifecycle_award_timeout_and_failure() -> None:
    """otto.md 6-7: close -> award with start_by; timeout -> attempt n+1 without the winner; 5 -> failed."""
    auction = lifecycle.opened("a-1", 100.0)
    assert auction.ends == 105.0 and lifecycle.due_at(auction) == 105.5
    with pytest.raises(lifecycle.LifecycleError):
        lifecycle.closed(auction, [], 105.2)
    won = lifecycle.closed(auction, [Bid("cell-1", 1, 0.02, 101), Bid("elastic", 1, 0.06, 101, ready_in_s=90)], 106)
    assert (won.state, won.winner, won.start_by) == ("awarded", "cell-1", 115.5)
    assert not lifecycle.start_timed_out(won, 115.4) and lifecycle.start_timed_out(won, 115.5)
    assert lifecycle.start_allowed(won, "cell-1", 1) and not lifecycle.start_allowed(won, "cell-1", 2)
    again = lifecycle.reauctioned(won, 115.5, "cell-1 did not start by 115.5")
    assert (again.state, again.attempt, again.excluded, again.starts) == ("open", 2, ("cell-1",), 115.5)
    state = again
    for _ in range(3):
        state = lifecycle.closed(state, [Bid("cell-1", state.attempt, 0.02, state.starts)], state.closes_at)
        state = lifecycle.reauctioned(state, state.start_by, "timeout")
    assert state.attempt == 5
    state = lifecycle.closed(state, [Bid("cell-1", 5, 0.02, state.starts)], state.closes_at)
    failed = lifecycle.reauctioned(state, state.start_by, "timeout")
    assert (failed.state, failed.failure_reason) == ("failed", "not started after 5 auctions")


def test_deadlines_are_reached_by_a_clock_stepped_to_them() -> None:
    """otto.md 6-7 (deadlines on the sim clock): a clock paused and stepped by exactly the
    window, then the start timeout, must reach start_by; so must one stepped by the back-off.
    A deadline rounded up to whole milliseconds was a hair later than the stepped clock,
    and the auction stayed awarded forever (seen as a flaky re-auction test)."""
    for starts in (12.3456789, 31.2345, 0.1 + 0.2, 1e6 / 3):
        auction = lifecycle.opened("a-9", starts)
        now = starts + 5.5  # the test clock's step, not ends + grace
        won = lifecycle.closed(auction, [Bid("cell-1", 1, 0.02, starts)], now)
        assert won.start_by <= won.closes_at + lifecycle.START_TIMEOUT_S
        assert lifecycle.start_timed_out(won, now + lifecycle.START_TIMEOUT_S)
        none = lifecycle.closed(auction, [], now)
        stepped = now + (none.next_announce_at - now)
        assert lifecycle.reannounced(none, stepped).state == "open"
        assert stepped + lifecycle.DUE_EPS_S >= none.next_announce_at


def test_lifecycle_no_bids_backoff_keeps_attempt() -> None:
    """otto.md 7: no bids at close -> re-announce after 2, 4, 8 s, keeping the attempt number."""
    auction = lifecycle.opened("a-2", 0.0)
    delays = []
    for _ in range(3):
        auction = lifecycle.closed(auction, [], auction.closes_at)
        delays.append(auction.next_announce_at - auction.closes_at)
        auction = lifecycle.reannounced(auction, auction.next_announce_at)
    assert delays == [2, 4, 8]
    assert (auction.attempt, auction.announcements) == (1, 4)
    assert lifecycle.pending_expired(auction, 1800.0)
    with pytest.raises(lifecycle.LifecycleError):
        lifecycle.opened("a-3", 0.0, duration_s=61)


def test_messages_validate_and_reject() -> None:
    """otto.md 2-3: typed messages; naive time, unknown type or a bad field is malformed."""
    raw = {"task_guid": "t-7", "memory_mb": 1024, "rootfs": "docker:///busybox", "estimated_seconds": 600}
    ann = messages.announcement("a-42", 1, raw, {"cores": 2, "memory": "1G"}, 600, 605)
    assert ann["auction"] == {"starts": "2025-01-01T00:10:00.000Z", "ends": "2025-01-01T00:10:05.000Z"}
    assert messages.validate(ann)["_t"] == {"starts": 600.0, "ends": 605.0}
    bid = messages.bid_message("a-42", 1, "cell-1", "agent", 0.01875, {"run": 0.01}, 0, 601)
    assert messages.validate(bid)["_t"]["sent_at"] == 601.0
    naive = {**bid, "sent_at": "2025-01-01T00:10:01.000"}
    for bad in (naive, {**bid, "type": "otto.bogus"}, {**bid, "cost": "cheap"}, {**bid, "bidder": "Cell_1"},
                {**bid, "attempt": 0}, "x", {**ann, "task": {"raw": {}, "capabilities": {"memory": "2X"}}}):
        with pytest.raises(messages.MalformedMessage):
            messages.validate(bad)
    assert messages.inbox("main", "cell-1") == "otto.main.inbox.cell-1"
    with pytest.raises(ValueError):
        messages.inbox("main", "Cell 1")


def test_due_predicates_and_expiry_states() -> None:
    """otto.md 6-7: close at ends + grace, start timeout at start_by, re-announce after the back-off,
    expiry 1800 s after submission for open and backing-off auctions (an award runs to start_by)."""
    auction = lifecycle.opened("a-1", 0.0)
    assert not lifecycle.close_due(auction, 5.4) and lifecycle.close_due(auction, 5.5)
    none = lifecycle.closed(auction, [], 5.5)
    assert not lifecycle.reannounce_due(none, none.next_announce_at - 0.01)
    assert lifecycle.reannounce_due(none, none.next_announce_at)
    assert lifecycle.due_at(none) == none.next_announce_at
    won = lifecycle.closed(auction, [Bid("cell-1", 1, 0.02, 1.0)], 5.5)
    assert lifecycle.start_timed_out(won, won.start_by) and not lifecycle.pending_expired(won, 1e6)
    assert lifecycle.pending_expired(auction, 1800.0) and not lifecycle.pending_expired(auction, 1799.9)
    assert lifecycle.pending_expired(none, 1800.0)
    assert lifecycle.due_at(replace(auction, ends=1799.8)) == 1800.0  # expiry before the close
    assert lifecycle.started_by(replace(won, state="started"), "cell-1", 1)
    assert not lifecycle.started_by(won, "cell-1", 1)


instants = st.floats(0, 1e6, allow_nan=False)


@settings(max_examples=300)
@given(state=st.sampled_from(["open", "no_bids", "awarded", "started"]), submitted=instants,
       ends=instants, start_by=instants, next_announce=instants, now=instants,
       near=st.floats(-2e-3, 2e-3))
def test_due_bounds_select_every_due_auction(state, submitted, ends, start_by, next_announce,  # type: ignore[no-untyped-def]
                                             now, near) -> None:
    """The database selects candidates with ``due_bounds``; it must never leave out an auction
    a predicate calls due, whatever the float rounding (instants near the deadline too)."""
    for base in (now, ends + bids.GRACE_S + near, start_by + near, next_announce + near,
                 submitted + lifecycle.PENDING_LIMIT_S + near):
        auction = lifecycle.AuctionState("a", state, 1, 0.0, ends, submitted, start_by=start_by,
                                         next_announce_at=next_announce)
        bounds = lifecycle.due_bounds(base)
        if lifecycle.close_due(auction, base):
            assert ends <= bounds.ends
        if lifecycle.start_timed_out(auction, base):
            assert start_by <= bounds.start_by
        if lifecycle.reannounce_due(auction, base):
            assert next_announce <= bounds.next_announce_at
        if lifecycle.pending_expired(auction, base):
            assert submitted <= bounds.submitted_at

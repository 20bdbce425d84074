"""The crash restart policy and the Crash operation, bbs.md 3 (and 2.3, 6.3, 8, 0)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from auction.bbs.crash import CrashOutcome, crash
from auction.bbs.errors import BBSError
from auction.bbs.events import INSTANCE_CHANGED, INSTANCE_CREATED, INSTANCE_REMOVED, LRP_CRASHED
from auction.bbs.restart import backoff_s, crash_count_after, restarts_immediately, should_restart
from auction.bbs.types import ActualLRP


@pytest.mark.parametrize(
    ("n", "seconds"),
    [
        (1, 0),
        (2, 0),
        (3, 30),
        (4, 60),
        (5, 120),
        (6, 240),
        (7, 480),
        (8, 960),
        (9, 960),
        (100, 960),
        (199, 960),
        (200, math.inf),
        (500, math.inf),
    ],
)
def test_backoff_table(n: int, seconds: float) -> None:
    """bbs.md 3 table: B(n) = 30 x 2^min(n-3, 5), 0 for n < 3, infinity from 200."""
    assert backoff_s(n) == seconds


def test_giving_up_takes_185250_seconds_of_back_off() -> None:
    """bbs.md 3: "giving up takes about 51.5 h of back-off (185,250 s)"."""
    assert sum(backoff_s(n) for n in range(3, 200)) == 185_250


@pytest.mark.parametrize("n", [3, 5, 8, 199])
def test_restart_is_non_strict_at_since_plus_backoff(n: int) -> None:
    """bbs.md 3 and 10: restarted by the first pass with since + B(n) <= now."""
    since = 5000.0
    assert should_restart(n, since, since + backoff_s(n))
    assert not should_restart(n, since, since + backoff_s(n) - 0.001)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_counts_below_three_restart_at_the_next_pass(n: int) -> None:
    """bbs.md 3: any CRASHED row with n < 3 is restarted at the next pass."""
    assert should_restart(n, since=1000.0, now=1000.0)


def test_count_200_is_never_restarted() -> None:
    """bbs.md 3: n >= 200 stays CRASHED forever."""
    assert not should_restart(200, since=0.0, now=1e12)


def test_only_the_first_two_crashes_restart_immediately() -> None:
    """bbs.md 3 and 10."""
    assert [restarts_immediately(n) for n in (1, 2, 3, 4)] == [True, True, False, False]


def test_running_more_than_300_seconds_resets_the_count_to_one() -> None:
    """bbs.md 3: n = 1 if RUNNING for more than 300 s (strict)."""
    assert crash_count_after("RUNNING", since=0, crash_count=7, now=300.001) == 1
    assert crash_count_after("RUNNING", since=0, crash_count=7, now=300) == 8


def test_claimed_never_resets() -> None:
    """bbs.md 3: a CLAIMED instance never resets, however long it was claimed."""
    assert crash_count_after("CLAIMED", since=0, crash_count=7, now=1e9) == 8


def _row(state: str = "RUNNING", count: int = 0, since: float = 900.0, **kw: Any) -> ActualLRP:
    return ActualLRP(
        "web",
        0,
        state,
        cell_id="cell-1",
        instance_guid="ig",
        address="10.0.0.1",
        ports=((8080, 61000),),
        since=since,
        crash_count=count,
        modification_tag_index=4,
        **kw,
    )


def _outcome(value: CrashOutcome | BBSError) -> CrashOutcome:
    assert isinstance(value, CrashOutcome), value
    return value


@pytest.mark.parametrize("count", [0, 1])
def test_first_and_second_crash_go_unclaimed_with_a_start(count: int) -> None:
    """bbs.md 3: n = 1, 2 -> UNCLAIMED at once, start request in the same call;
    key and net info cleared, reason stored, since = now, tag + 1."""
    out = _outcome(crash(_row(count=count), 1000.0, "exit 1"))
    after = out.after
    assert after is not None and out.start
    assert (after.state, after.crash_count, after.crash_reason) == (
        "UNCLAIMED",
        count + 1,
        "exit 1",
    )
    assert (after.cell_id, after.instance_guid, after.address, after.ports) == ("", "", "", ())
    assert after.since == 1000.0 and after.modification_tag_index == 5
    assert [e.type for e in out.events][:3] == [LRP_CRASHED, INSTANCE_REMOVED, INSTANCE_CREATED]


def test_third_crash_is_crashed_without_a_start() -> None:
    """bbs.md 3: n = 3 -> CRASHED, back-off 30 s; bbs.md 8: crash event first."""
    out = _outcome(crash(_row(count=2), 1000.0, "oom"))
    assert out.after is not None and out.after.state == "CRASHED" and not out.start
    assert [e.type for e in out.events][:2] == [LRP_CRASHED, INSTANCE_CHANGED]


def test_a_long_running_instance_crash_restarts_immediately_again() -> None:
    """bbs.md 3: RUNNING > 300 s resets n to 1, so the crash restarts at once."""
    out = _outcome(crash(_row(count=150, since=0.0), 1000.0, "oops"))
    assert out.after is not None and out.after.crash_count == 1 and out.start


def test_evacuation_crash_goes_unclaimed_but_sends_no_start() -> None:
    """bbs.md 6.3 and 10: evacuation crashes do not restart immediately."""
    out = _outcome(crash(_row(count=0), 1000.0, "x", immediate_start=False))
    assert out.after is not None and out.after.state == "UNCLAIMED" and not out.start


def test_a_crash_of_a_suspect_just_deletes_it() -> None:
    """bbs.md 2.3 Crash: a crash reported for a SUSPECT just deletes the suspect."""
    out = _outcome(crash(_row(presence="SUSPECT", count=3), 1000.0, "x"))
    assert out.after is None and not out.start


def test_a_crash_with_another_instance_key_is_refused() -> None:
    """bbs.md 2.2: CLAIMED/RUNNING -> CRASHED needs the same key."""
    error = crash(_row(), 1000.0, "x", instance_guid="other")
    assert error == BBSError("ActualLRPCannotBeCrashed", "cannot crash actual LRP")


def test_an_unclaimed_row_cannot_crash() -> None:
    """bbs.md 2.2: UNCLAIMED -> CRASHED is not allowed."""
    assert isinstance(crash(_row(state="UNCLAIMED"), 1000.0, "x"), BBSError)


def test_crash_reason_is_truncated_from_1024_characters() -> None:
    """bbs.md 0: first 1,013 characters + "(truncated)" when 1,024 or longer."""
    long = _outcome(crash(_row(), 1000.0, "r" * 1024)).after
    short = _outcome(crash(_row(), 1000.0, "r" * 1023)).after
    assert long is not None and long.crash_reason == "r" * 1013 + "(truncated)"
    assert short is not None and short.crash_reason == "r" * 1023

"""The one simulated clock: pause, step, speed; stored so every process agrees."""

from __future__ import annotations

import pytest

from auction.sim.clock import ClockError, ClockState, format_sim_time


def test_running_clock_scales_wall_time() -> None:
    clock = ClockState(anchor_sim=10.0, anchor_wall=1000.0, speed=4.0)
    assert clock.now(1000.0) == 10.0
    assert clock.now(1002.5) == 20.0


def test_speed_change_reanchors_without_a_jump() -> None:
    clock = ClockState(0.0, 1000.0).with_speed(10.0, wall=1005.0)
    assert clock.now(1005.0) == 5.0
    assert clock.now(1006.0) == 15.0


def test_pause_freezes_and_step_advances_exactly() -> None:
    clock = ClockState(0.0, 1000.0).paused_at(1003.0)
    assert clock.now(5000.0) == 3.0
    stepped = clock.stepped(30.0, wall=5000.0)
    assert stepped.now(9999.0) == 33.0
    assert stepped.resumed_at(6000.0).now(6001.0) == 34.0


def test_bad_controls_are_clear_errors() -> None:
    with pytest.raises(ClockError, match="between 0.25x and 100x"):
        ClockState(0.0, 0.0).with_speed(101, wall=0.0)
    with pytest.raises(ClockError, match="pause the clock"):
        ClockState(0.0, 0.0).stepped(1.0, wall=0.0)
    with pytest.raises(ClockError, match="positive"):
        ClockState(0.0, 0.0, paused=True).stepped(0.0, wall=0.0)


def test_format() -> None:
    assert format_sim_time(0) == "0:00:00.0"
    assert format_sim_time(3723.46) == "1:02:03.5"


@pytest.mark.django_db
def test_stored_clock_survives_a_reload() -> None:
    """The clock is a row: a restarted process reads the same sim time (BBS issue)."""
    from auction.models import SimClock
    from auction.services.clock import clock_pause, clock_set_speed, clock_step

    clock_set_speed(8)
    view = clock_pause()
    stepped = clock_step(12.5)
    assert stepped.now == pytest.approx(view.now + 12.5)
    row = SimClock.objects.get(pk=1)
    assert (row.speed, row.paused) == (8, True)
    assert row.now() == pytest.approx(stepped.now)

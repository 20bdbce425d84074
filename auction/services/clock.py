"""Clock controls: pause, resume, speed, step, and the beat tick that publishes time."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.db import transaction

from auction.live.publish import mark_dirty, mark_dirty_after_commit
from auction.models import SimClock
from auction.selectors.clock import ClockView, clock_row, clock_view
from auction.sim.clock import ClockState


def _publish(view: ClockView) -> None:
    mark_dirty_after_commit("clock")


def _change(update: Callable[[ClockState, float], ClockState]) -> ClockView:
    with transaction.atomic():
        clock_row()  # make sure the row exists before locking it
        clock = SimClock.objects.select_for_update().get(pk=1)
        wall = time.time()
        clock.apply(update(clock.state, wall))
        clock.save()
        view = clock_view(wall)
        _publish(view)
    return view


def clock_pause() -> ClockView:
    return _change(lambda state, wall: state.paused_at(wall))


def clock_resume() -> ClockView:
    return _change(lambda state, wall: state.resumed_at(wall))


def clock_set_speed(speed: float) -> ClockView:
    return _change(lambda state, wall: state.with_speed(speed, wall))


def clock_step(seconds: float) -> ClockView:
    return _change(lambda state, wall: state.stepped(seconds, wall))


def clock_configure(*, speed: float, paused: bool, convergence_interval_s: float) -> ClockView:
    """The admin's edit of the clock row, applied as controls so time never jumps."""

    def update(state: ClockState, wall: float) -> ClockState:
        state = state.with_speed(speed, wall)
        return state.paused_at(wall) if paused else state.resumed_at(wall)

    view = _change(update)
    SimClock.objects.filter(pk=1).update(convergence_interval_s=convergence_interval_s)
    return view


def clock_reset(at: float = 0.0, *, paused: bool = False) -> ClockView:
    """Back to ``at`` sim seconds at 1x (a scenario load starts a new epoch)."""
    return _change(lambda state, wall: ClockState(at, wall, 1.0, paused))


def clock_tick() -> ClockView:
    """Beat's heartbeat: publish the current sim time to every page showing the clock."""
    view = clock_view()
    mark_dirty("clock")
    return view

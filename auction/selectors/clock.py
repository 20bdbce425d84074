"""The clock as pages and frames show it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from auction.models import SimClock
from auction.sim.clock import format_sim_time


@dataclass(frozen=True, slots=True)
class ClockView:
    now: float
    speed: float
    paused: bool
    convergence_interval_s: float
    wall: float

    @property
    def display(self) -> str:
        return format_sim_time(self.now)


_kept = threading.local()


@contextmanager
def clock_row_kept() -> Iterator[None]:
    """One read of the clock row for every render inside (a coalescer tick read it about
    ten times, a good share of the tick). The renders of one tick show one instant anyway."""
    _kept.on, _kept.row = True, None
    try:
        yield
    finally:
        _kept.on, _kept.row = False, None


def clock_row() -> SimClock:
    """The single clock row; before anything ever wrote one, an unsaved one at sim time 0
    (a read never writes: ``services.clock`` creates the row when it first changes it)."""
    if getattr(_kept, "on", False):
        if _kept.row is None:
            _kept.row = _clock_row()
        return _kept.row
    return _clock_row()


def _clock_row() -> SimClock:
    return SimClock.objects.filter(pk=1).first() or SimClock(pk=1, anchor_wall=time.time(),
                                                              paused=True)


def world_epoch() -> int:
    """The world's structural version (``services.world``)."""
    return SimClock.objects.filter(pk=1).values_list("world_epoch", flat=True).first() or 0


def clock_view(wall: float | None = None) -> ClockView:
    clock = clock_row()
    wall = time.time() if wall is None else wall
    return ClockView(
        now=clock.now(wall),
        speed=clock.speed,
        paused=clock.paused,
        convergence_interval_s=clock.convergence_interval_s,
        wall=wall,
    )


def sim_now() -> float:
    return clock_view().now

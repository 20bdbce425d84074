"""The clock as pages and frames show it."""

from __future__ import annotations

import time
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


def clock_row() -> SimClock:
    """The single clock row, created at sim time 0 on first use."""
    clock = SimClock.objects.filter(pk=1).first()
    if clock is None:
        clock, _ = SimClock.objects.get_or_create(pk=1, defaults={"anchor_wall": time.time()})
    return clock


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

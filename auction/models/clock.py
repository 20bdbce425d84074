"""The stored simulated clock (one row), so every process shares one "now"."""

from __future__ import annotations

import time

from django.db import models

from auction.sim.clock import ClockState


class SimClock(models.Model):
    """Anchor + speed + paused: see ``auction.sim.clock.ClockState``.

    Survives restarts of every process because it is a row, not a timer.
    """

    anchor_sim = models.FloatField(default=0.0, help_text="Sim seconds at the anchor.")
    anchor_wall = models.FloatField(default=time.time, help_text="Unix seconds of the anchor.")
    speed = models.FloatField(default=1.0)
    paused = models.BooleanField(default=False)
    convergence_interval_s = models.FloatField("convergence interval (sim s)", default=30.0)
    # Timer-only convergence (bbs.md 4.1): the first pass 30 s after start, then one
    # interval after the previous pass.
    next_convergence_at = models.FloatField(default=30.0, editable=False)
    # How far the simulation has been advanced (reps, presences, convergence).
    advanced_to = models.FloatField(default=0.0, editable=False)
    # Seeds the simulated reps' random draws, so a scenario replays the same way.
    seed = models.IntegerField(default=0)
    # Moves with every structural change (cells or zones added, removed or edited, a
    # scenario loaded, a foundation imported): every open page then loads itself again.
    world_epoch = models.IntegerField(default=0, editable=False)
    # The UNIX nanosecond of sim second 0: an imported foundation keeps its capture's
    # times (plans.md 3.1); a scenario starts at 0.
    origin_ns = models.BigIntegerField(default=0, editable=False)

    class Meta:
        verbose_name = "simulated clock"
        # Leading the followers' screens (dashboard.md C5).
        permissions = [("present", "Can present: lead followers' screens")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(speed__gte=0.25) & models.Q(speed__lte=100),
                name="clock_speed_range",
                violation_error_message="Invalid field: speed (0.25x to 100x)",
            ),
            models.CheckConstraint(
                condition=models.Q(convergence_interval_s__gt=0),
                name="clock_interval_positive",
                violation_error_message="Invalid field: convergence_interval_s",
            ),
        ]

    def __str__(self) -> str:
        state = "paused" if self.paused else f"{self.speed:g}x"
        return f"sim clock ({state})"

    @property
    def state(self) -> ClockState:
        return ClockState(self.anchor_sim, self.anchor_wall, self.speed, self.paused)

    def apply(self, state: ClockState) -> None:
        self.anchor_sim = state.anchor_sim
        self.anchor_wall = state.anchor_wall
        self.speed = state.speed
        self.paused = state.paused

    def now(self, wall: float | None = None) -> float:
        return self.state.now(time.time() if wall is None else wall)

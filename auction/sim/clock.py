"""The one simulated clock: sim time that can pause, step and run faster than real time.

The clock is an anchor (sim time ``anchor_sim`` at wall time ``anchor_wall``) plus a
speed, so every process computes the same "now" from the same stored row without
ticking anything. Changing speed or pausing re-anchors at the current instant, so the
sim time never jumps. Times are seconds (float), as bbs.md 0 specifies.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

MIN_SPEED = 0.25
MAX_SPEED = 100.0


class ClockError(ValueError):
    """A clock control was given a value it cannot take."""


@dataclass(frozen=True, slots=True)
class ClockState:
    anchor_sim: float
    anchor_wall: float
    speed: float = 1.0
    paused: bool = False

    def now(self, wall: float) -> float:
        if self.paused:
            return self.anchor_sim
        return self.anchor_sim + max(0.0, wall - self.anchor_wall) * self.speed

    def reanchored(self, wall: float) -> ClockState:
        return replace(self, anchor_sim=self.now(wall), anchor_wall=wall)

    def with_speed(self, speed: float, wall: float) -> ClockState:
        if not (MIN_SPEED <= speed <= MAX_SPEED):
            raise ClockError(f"speed must be between {MIN_SPEED:g}x and {MAX_SPEED:g}x, got {speed:g}")
        return replace(self.reanchored(wall), speed=float(speed))

    def paused_at(self, wall: float) -> ClockState:
        return replace(self.reanchored(wall), paused=True)

    def resumed_at(self, wall: float) -> ClockState:
        return replace(self.reanchored(wall), paused=False)

    def stepped(self, seconds: float, wall: float) -> ClockState:
        """Advance sim time by ``seconds`` at once; only while paused, so a step is exact."""
        if not self.paused:
            raise ClockError("pause the clock before stepping it")
        if seconds <= 0:
            raise ClockError(f"a step must be positive, got {seconds:g}")
        return replace(self, anchor_sim=self.anchor_sim + seconds, anchor_wall=wall)


def format_sim_time(seconds: float) -> str:
    """``1234.5`` → ``"0:20:34.5"``: hours:minutes:seconds of sim time, tenths shown."""
    tenths = int(round(seconds * 10))
    whole, tenth = divmod(tenths, 10)
    minutes, secs = divmod(whole, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}.{tenth}"

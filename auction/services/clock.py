"""The simulated clock's one writer: pause, resume, speed, step, the pass interval.

``clock_change`` is every door's change of the clock (the dashboard's controls, the API,
the admin, the CLI): checked, applied all or nothing, audited, published after commit.
The other functions are its parts, for the services that move the clock themselves (a
scenario load, the step to the next event).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.db.models import F

from auction.live.publish import clock_changed, mark_dirty, mark_dirty_after_commit
from auction.models import SimClock
from auction.selectors.clock import ClockView, clock_view
from auction.services.audit import audit_record
from auction.services.errors import InvalidRequest
from auction.services.otto.auctions import otto_restamp
from auction.services.retry import retry_locked
from auction.sim.clock import MAX_SPEED, MIN_SPEED, ClockError, ClockState

#: Bounds a request may ask for [project rule]: a step of a day, a pass a day apart.
MAX_STEP_S = 86_400.0
MAX_INTERVAL_S = 86_400.0


def _publish(view: ClockView, state: ClockState) -> None:
    mark_dirty_after_commit("clock")
    # The Otto processes wait on this instead of polling the clock row (otto.md 11).
    payload = {"anchor_sim": state.anchor_sim, "anchor_wall": state.anchor_wall,
               "speed": state.speed, "paused": state.paused}
    transaction.on_commit(lambda: clock_changed(payload))


@retry_locked
def _change(update: Callable[[ClockState, float], ClockState]) -> ClockView:
    with transaction.atomic():
        clock, _ = SimClock.objects.select_for_update().get_or_create(
            pk=1, defaults={"anchor_wall": time.time()})
        wall = time.time()
        before = clock.state.now(wall)
        clock.apply(update(clock.state, wall))
        clock.save()
        after = clock.state.now(wall)
        if after < before:
            # Otto's pending auctions were stamped on the clock that is gone (otto.md 6).
            otto_restamp(after)
        view = clock_view(wall)
        _publish(view, clock.state)
    return view


def clock_pause() -> ClockView:
    return _change(lambda state, wall: state.paused_at(wall))


def clock_resume() -> ClockView:
    return _change(lambda state, wall: state.resumed_at(wall))


def clock_set_speed(speed: float) -> ClockView:
    return _change(lambda state, wall: state.with_speed(speed, wall))


def clock_step(seconds: float) -> ClockView:
    return _change(lambda state, wall: state.stepped(seconds, wall))


@retry_locked
def clock_change(*, paused: bool | None = None, speed: float | None = None,
                 step: float | None = None, convergence_interval_s: float | None = None,
                 source: str, user: Any = None, note: dict[str, Any] | None = None) -> ClockView:
    """Change the clock as one request asks: pause, then speed, then step (a paused clock
    only), then resume, then the pass interval; all or nothing, audited under the name of
    what changed (``clock_pause``, ``clock_speed``...; ``clock_change`` for several)."""
    errors = []
    if speed is not None and not (_finite(speed) and MIN_SPEED <= speed <= MAX_SPEED):
        errors.append("Invalid field: speed")
    if step is not None and not (_finite(step) and 0 < step <= MAX_STEP_S):
        errors.append("Invalid field: step")
    if convergence_interval_s is not None and not (
            _finite(convergence_interval_s) and 0 < convergence_interval_s <= MAX_INTERVAL_S):
        errors.append("Invalid field: convergence_interval_s")
    if errors:
        raise InvalidRequest(", ".join(errors))
    asked = [name for name, value in (("pause" if paused else "resume", paused), ("speed", speed),
                                      ("step", step), ("configure", convergence_interval_s))
             if value is not None]
    try:
        with transaction.atomic():
            before = clock_view()

            def update(state: ClockState, wall: float) -> ClockState:
                if paused:
                    state = state.paused_at(wall)
                if speed is not None:
                    state = state.with_speed(speed, wall)
                if step is not None:
                    state = state.stepped(step, wall)
                if paused is False:
                    state = state.resumed_at(wall)
                return state

            view = _change(update)
            if convergence_interval_s is not None:
                SimClock.objects.filter(pk=1).update(convergence_interval_s=convergence_interval_s)
            action = f"clock_{asked[0]}" if len(asked) == 1 else "clock_change"
            diff: dict[str, Any] = {"paused": [before.paused, view.paused],
                                    "speed": [before.speed, view.speed],
                                    "sim": [round(before.now, 3), round(view.now, 3)], **(note or {})}
            if convergence_interval_s is not None:
                diff["convergence_interval_s"] = [before.convergence_interval_s, convergence_interval_s]
            audit_record(action, "clock", view.now, source=source, user=user, diff=diff)
    except ClockError as exc:  # stepping a running clock: the clock's own words
        raise InvalidRequest(str(exc)) from None
    return clock_view()


def _finite(value: float) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@retry_locked
def clock_reset(at: float = 0.0, *, paused: bool = False) -> ClockView:
    """A new world's clock (a scenario load, an import, a benchmark's wipe): ``at`` sim
    seconds at 1x, the world advanced to ``at`` and no further, its first convergence
    pass one interval later (bbs.md 4.1). A live clock that ran before in this database
    must not leave the new world advanced past its own first instants."""
    with transaction.atomic():
        clock_place(at, paused=paused)
        SimClock.objects.filter(pk=1).update(advanced_to=at, next_convergence_at=F("convergence_interval_s") + at)
    return clock_view()


def clock_place(at: float, *, paused: bool = False) -> ClockView:
    """The clock put at ``at`` sim seconds at 1x over the world as it is (a synchronous
    run's end, where the world has just been advanced to ``at``)."""
    return _change(lambda state, wall: ClockState(at, wall, 1.0, paused))


@retry_locked
def clock_tick() -> ClockView:
    """Beat's heartbeat: publish the current sim time to every page showing the clock."""
    view = clock_view()
    mark_dirty("clock", changed=False)
    return view

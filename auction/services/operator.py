"""The operator's controls on the dashboard (dashboard.md C1, C2, C4, D3): each calls the
existing service and leaves an audit entry (AD4) that also shows in the feed.

Chaos, scaling and domains are audited by their services; the clock's controls and
scenario loads are audited here.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from auction.scenarios import ScenarioError
from auction.selectors.clock import clock_view
from auction.selectors.controls import SPEEDS
from auction.selectors.timeline import NextEvent, next_scheduled_event
from auction.services.audit import audit_record
from auction.services.clock import clock_pause, clock_resume, clock_set_speed, clock_step
from auction.services.domains import domain_expire, domain_upsert
from auction.services.errors import InvalidRequest
from auction.services.scenarios import scenario_load
from auction.services.sim import sim_advance
from auction.sim.clock import MAX_SPEED, ClockError

SOURCE = "dashboard"


def _clock(action: str, change: Any, user: Any, **diff: Any) -> None:
    try:
        with transaction.atomic():
            before = clock_view()
            view = change()
            audit_record(action, "clock", view.now, source=SOURCE, user=user,
                         diff={"paused": [before.paused, view.paused], "speed": [before.speed, view.speed],
                               "sim": [round(before.now, 3), round(view.now, 3)], **diff})
    except ClockError as exc:
        raise InvalidRequest(str(exc)) from None


def operator_clock_pause(user: Any) -> None:
    _clock("clock_pause", clock_pause, user)


def operator_clock_resume(user: Any) -> None:
    _clock("clock_resume", clock_resume, user)


def operator_clock_speed(speed: str, user: Any) -> None:
    value = MAX_SPEED if speed == "max" else _number(speed, "speed")
    if value not in SPEEDS:
        raise InvalidRequest("Invalid field: speed (0.25x to 16x, or max)")
    _clock("clock_speed", lambda: clock_set_speed(value), user)


def operator_clock_step_next(user: Any) -> NextEvent | None:
    """Pause if needed, jump to the next scheduled event, and let the simulation catch up."""
    now = clock_view().now
    upcoming = next_scheduled_event(now)
    if upcoming is None:
        raise InvalidRequest("nothing is scheduled")
    if not clock_view().paused:
        clock_pause()
    now = clock_view().now
    # A hair past the instant: every due comparison there is "<=" or "<" now.
    _clock("clock_step", lambda: clock_step(max(upcoming.at - now, 0.0) + 1e-6), user, next=upcoming.what)
    sim_advance()
    return upcoming


def operator_scenario_load(name: str, user: Any) -> None:
    try:
        with transaction.atomic():
            scenario_load(name)
            audit_record("scenario_load", name, clock_view().now, source=SOURCE, user=user, diff={})
    except ScenarioError as exc:
        raise InvalidRequest(str(exc)) from None


def operator_domain_bump(name: str, ttl: str, user: Any) -> None:
    """D3: bump as Cloud Controller does (120 s), or forever (ttl 0); the service audits it."""
    seconds = 0.0 if ttl == "never" else _number(ttl, "ttl")
    domain_upsert(name, seconds, source=SOURCE, user=user)


def operator_domain_expire(name: str, user: Any) -> None:
    domain_expire(name, source=SOURCE, user=user)


def _number(text: str, field: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise InvalidRequest(f"Invalid field: {field}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise InvalidRequest(f"Invalid field: {field}")
    return value


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
from auction.selectors.timeline import NextEvent, next_scheduled_event
from auction.services.audit import audit_record
from auction.services.clock import clock_change
from auction.services.domains import domain_expire, domain_upsert
from auction.services.errors import InvalidRequest
from auction.services.scenarios import scenario_load
from auction.services.sim import sim_advance
from auction.sim.clock import MAX_SPEED

SOURCE = "dashboard"


def operator_clock_pause(user: Any) -> None:
    clock_change(paused=True, source=SOURCE, user=user)


def operator_clock_resume(user: Any) -> None:
    clock_change(paused=False, source=SOURCE, user=user)


def operator_clock_speed(speed: str, user: Any) -> None:
    clock_change(speed=MAX_SPEED if speed == "max" else _number(speed, "speed"), source=SOURCE,
                 user=user)


def operator_clock_step_next(user: Any) -> NextEvent | None:
    """Pause if needed, jump to the next scheduled event, and let the simulation catch up."""
    now = clock_view().now
    upcoming = next_scheduled_event(now)
    if upcoming is None:
        raise InvalidRequest("nothing is scheduled")
    if not clock_view().paused:
        clock_change(paused=True, source=SOURCE, user=user)
    now = clock_view().now
    # A hair past the instant: every due comparison there is "<=" or "<" now.
    clock_change(step=max(upcoming.at - now, 0.0) + 1e-6, source=SOURCE, user=user,
                 note={"next": upcoming.what})
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


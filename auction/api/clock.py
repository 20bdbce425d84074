"""``/api/v1/clock``: read and steer the one simulated clock (dashboard.md C1)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from auction.api import schemas
from auction.api.auth import operator, reader
from auction.api.http import endpoint, json_body, nanoseconds, ok
from auction.bbs.validation import bbs_message, invalid
from auction.selectors.clock import ClockView, clock_row, clock_view
from auction.services import clock
from auction.services.errors import InvalidRequest
from auction.sim.clock import MAX_SPEED, MIN_SPEED

CLOCK_CHANGE = (
    schemas.Member("paused", "boolean", "Pause (true) or resume (false)."),
    schemas.Member("speed", "number", f"Sim seconds per wall second, {MIN_SPEED:g}-{MAX_SPEED:g}.",
                   maximum=MAX_SPEED),
    schemas.Member("step", "number", "Advance a paused clock (or one paused by the same "
                   "request) by this many sim seconds, more than 0.", maximum=86_400),
)


def _json(view: ClockView) -> dict:
    return {"now": view.now, "now_ns": nanoseconds(view.now), "display": view.display,
            "speed": view.speed, "paused": view.paused,
            "convergence_interval_s": view.convergence_interval_s,
            "next_convergence_at": clock_row().next_convergence_at}


def _get(request: HttpRequest) -> JsonResponse:
    reader(request)
    return ok({"clock": _json(clock_view())})


def _change(request: HttpRequest) -> JsonResponse:
    user = operator(request)
    body = json_body(request)
    errors = schemas.type_errors(body, CLOCK_CHANGE)
    errors += [invalid(n) for n in body if n not in {m.name for m in CLOCK_CHANGE}]
    if errors:
        raise InvalidRequest(bbs_message(errors))
    view = clock.clock_change(paused=body.get("paused"), speed=body.get("speed"),
                              step=body.get("step"), source="api", user=user)
    return ok({"clock": _json(view)})


clock_endpoint = endpoint(get=_get, post=_change)

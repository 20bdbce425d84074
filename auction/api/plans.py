"""``/api/v1/plans`` and ``/api/v1/capacity``: what-if plans and capacity (plans.md 1, 2).

A plan is an operator's request (it runs a simulation; it never changes the live
cluster); reading plans and asking capacity are reads.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from auction.api.auth import operator, reader
from auction.api.http import endpoint, json_body, ok
from auction.services import plans
from auction.services.errors import InvalidRequest, ServiceUnavailable


def _create(request: HttpRequest) -> JsonResponse:
    user = operator(request)
    plan = plans.plan_create(json_body(request), user=user, source="api")
    return ok({"plan": plans.plan_json(plan)}, status=201)


def _get(request: HttpRequest, plan_id: str) -> JsonResponse:
    reader(request)
    return ok({"plan": plans.plan_json(plans.plan_get(plan_id))})


def _discard(request: HttpRequest, plan_id: str) -> JsonResponse:
    user = operator(request)
    plans.plan_discard(plan_id, user=user, source="api")
    return ok({})


def _capacity(request: HttpRequest) -> JsonResponse:
    reader(request)
    raw = {name: request.GET[name] for name in request.GET}
    return ok({"capacity": plans.capacity_answer(raw)})


def _zone_loss(request: HttpRequest) -> JsonResponse:
    """The answer (200), or 202 while the worker works a big base's out (plans.md 2.2)."""
    reader(request)
    unknown = sorted(set(request.GET) - {"base"})
    if unknown:
        raise InvalidRequest(f"Invalid field: {unknown[0]}")
    state = plans.zone_loss_poll(request.GET.get("base"))
    if state.answer is not None:
        return ok(state.answer)
    if state.since is None:
        raise ServiceUnavailable("no Celery broker answers: the zone-loss answer of a big base is worked out "
                                 "by the worker; start it (make run) and ask again")
    response = ok({"computing": True, "since": state.since.isoformat(), "last": state.last,
                   "retry_after_s": plans.ZONE_LOSS_RETRY_S}, status=202)
    response["Retry-After"] = str(plans.ZONE_LOSS_RETRY_S)
    return response


collection = endpoint(post=_create)
member = endpoint(get=_get, delete=_discard)
capacity = endpoint(get=_capacity)
zone_loss = endpoint(get=_zone_loss)

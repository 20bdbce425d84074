"""``/api/v1/plans`` and ``/api/v1/capacity``: what-if plans and capacity (plans.md 1, 2).

A plan is an operator's request (it runs a simulation; it never changes the live
cluster); reading plans and asking capacity are reads.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from auction.api.auth import operator, reader
from auction.api.http import endpoint, json_body, ok
from auction.services import plans

CAPACITY_QUERY = ("memory_mb", "disk_mb", "rootfs", "placement_tags", "volume_drivers", "kind", "base")


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
    reader(request)
    unknown = sorted(set(request.GET) - {"base"})
    if unknown:
        from auction.services.errors import InvalidRequest

        raise InvalidRequest(f"Invalid field: {unknown[0]}")
    return ok(plans.zone_loss_answer(request.GET.get("base")))


collection = endpoint(post=_create)
member = endpoint(get=_get, delete=_discard)
capacity = endpoint(get=_capacity)
zone_loss = endpoint(get=_zone_loss)

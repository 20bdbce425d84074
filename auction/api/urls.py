from django.http import HttpRequest, JsonResponse
from django.urls import path, re_path

from auction.api import (
    actual_lrps,
    cells,
    clock,
    desired_lrps,
    domains,
    events,
    foundations,
    metrics,
    openapi,
    otto,
    plans,
    tasks,
)
from auction.api.http import endpoint, error_response, ok
from auction.services.errors import ResourceNotFound

app_name = "api"


def _index(request: HttpRequest) -> JsonResponse:
    return ok({"openapi": "/api/v1/openapi.json", "resources": [
        "desired_lrps", "actual_lrps", "domains", "tasks", "cells", "clock", "metrics", "events",
        "open_auctions", "foundations", "plans", "capacity"]})


index = endpoint(get=_index)


def not_found(request: HttpRequest, rest: str = "") -> JsonResponse:
    """Unknown API paths answer in the API's language, not with an HTML page."""
    return error_response(ResourceNotFound())


urlpatterns = [
    path("", index, name="index"),
    path("openapi.json", openapi.openapi, name="openapi"),
    path("desired_lrps", desired_lrps.collection, name="desired-lrps"),
    path("desired_lrps/<str:process_guid>", desired_lrps.member, name="desired-lrp"),
    path("actual_lrps", actual_lrps.collection, name="actual-lrps"),
    path("actual_lrps/<str:process_guid>/<str:index>", actual_lrps.member, name="actual-lrp"),
    path("domains", domains.collection, name="domains"),
    path("domains/", domains.member, name="domain-empty"),
    path("domains/<str:domain>", domains.member, name="domain"),
    path("tasks", tasks.collection, name="tasks"),
    path("tasks/<str:task_guid>", tasks.member, name="task"),
    path("tasks/<str:task_guid>/cancel", tasks.cancel, name="task-cancel"),
    path("cells", cells.collection, name="cells"),
    path("cells/<str:cell_id>/fail", cells.fail, name="cell-fail"),
    path("cells/<str:cell_id>/restore", cells.restore, name="cell-restore"),
    path("cells/<str:cell_id>/drain", cells.drain, name="cell-drain"),
    path("clock", clock.clock_endpoint, name="clock"),
    path("metrics", metrics.metrics, name="metrics"),
    path("events", events.events, name="events"),
    path("foundations", foundations.collection, name="foundations"),
    path("foundations/<str:name>", foundations.member, name="foundation"),
    path("open_auctions", otto.open_collection, name="open-auctions"),
    path("auctions/<str:auction_id>", otto.member, name="otto-auction"),
    path("plans", plans.collection, name="plans"),
    path("plans/<str:plan_id>", plans.member, name="plan"),
    path("capacity", plans.capacity, name="capacity"),
    path("capacity/zone_loss", plans.zone_loss, name="capacity-zone-loss"),
    # Keep last: anything else under /api/v1/ is a JSON 404.
    re_path(r"^(?P<rest>.*)$", not_found),
]

"""``/api/v1/cells``: cell presences and what they have free; chaos on one cell."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from auction.api.auth import operator, reader
from auction.api.http import endpoint, ok
from auction.api.representations import cell_json
from auction.models import Cell
from auction.selectors.cells import CellLoad, cell_loads, free_resources
from auction.selectors.clock import sim_now
from auction.services import cells


def _list(request: HttpRequest) -> JsonResponse:
    reader(request)
    now = sim_now()
    rows = list(Cell.objects.select_related("zone").order_by("zone__name", "index", "cell_id"))
    loads = cell_loads([c.cell_id for c in rows], {c.cell_id: c.proxy_memory_mb for c in rows})
    answer = []
    for cell in rows:
        free = free_resources(cell, loads.get(cell.cell_id, CellLoad()))
        answer.append(cell_json(cell, now, {"memory_mb": free.memory_mb, "disk_mb": free.disk_mb,
                                            "containers": free.containers}))
    return ok({"cells": answer})


def _act(action: str):  # one endpoint per chaos verb of the registry (dashboard.md C2)
    def handler(request: HttpRequest, cell_id: str) -> JsonResponse:
        user = operator(request)
        cells.chaos_run(action, {"cell": cell_id}, source="api", user=user)
        cell = Cell.objects.select_related("zone").get(cell_id=cell_id)
        return ok({"cell": cell_json(cell, sim_now(), None)})

    return endpoint(post=handler)


collection = endpoint(get=_list)
fail, restore, drain = _act("cell_fail"), _act("cell_restore"), _act("cell_drain")

"""``/api/v1/actual_lrps``: list with the seed's filters; kill one instance."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from auction.api.auth import operator, reader
from auction.api.http import endpoint, ok, page, query_int, query_text
from auction.api.representations import actual_lrp_json
from auction.models import ActualLRP, Cell
from auction.services import lrps
from auction.services.errors import InvalidRequest

PRESENCES = {p.value for p in ActualLRP.Presence}
STATES = {s.value for s in ActualLRP.State}


def _list(request: HttpRequest) -> JsonResponse:
    """All, or by domain, process_guid, index, cell_id (the seed's filters), paged: a
    cluster of 250,000 instances is never serialised whole by accident."""
    reader(request)
    rows = ActualLRP.objects.all()
    for name, column in (("domain", "domain"), ("process_guid", "desired_id"), ("cell_id", "cell_id")):
        value = query_text(request, name)
        if value is not None:
            rows = rows.filter(**{column: value})
    index = query_int(request, "index")
    if index is not None:
        rows = rows.filter(index=index)
    for name, allowed in (("presence", PRESENCES), ("state", STATES)):
        value = request.GET.get(name)
        if value is not None:
            if value not in allowed:
                raise InvalidRequest(f"Invalid field: {name}")
            rows = rows.filter(**{name: value})
    found, next_token = page(request, rows, [("desired_id", str), ("index", int), ("presence", str)])
    zone_of = dict(Cell.objects.filter(cell_id__in={a.cell_id for a in found if a.cell_id})
                   .values_list("cell_id", "zone__name"))
    return ok({"actual_lrps": [actual_lrp_json(a, zone_of) for a in found],
               "next_page_token": next_token})


def _index(raw: str) -> int:
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 9:  # "²".isdigit() too
        raise InvalidRequest("Invalid field: index")
    return int(raw)


def _kill(request: HttpRequest, process_guid: str, index: str) -> JsonResponse:
    """Retire the ORDINARY instance; the desired count is unchanged, so convergence's
    next pass finds the index missing and starts it again (bbs.md 2.3, 4.2)."""
    user = operator(request)
    lrps.actual_lrp_retire(process_guid, _index(index), source="api", user=user)
    return ok({})


collection = endpoint(get=_list)
member = endpoint(delete=_kill)

"""``/api/v1/desired_lrps``: desire, list, read, update (``DesiredLRPUpdateRequest``), remove."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from auction.api import schemas
from auction.api.auth import operator, reader
from auction.api.http import endpoint, json_body, ok, page, query_text
from auction.api.representations import desired_lrp_json
from auction.bbs.validation import bbs_message, invalid
from auction.models import DesiredLRP
from auction.services import lrps
from auction.services.errors import InvalidRequest, ResourceNotFound

_MEMBERS = {m.name for m in schemas.DESIRED_LRP}
_UPDATE_MEMBERS = {m.name for m in schemas.DESIRED_LRP_UPDATE}


def _list(request: HttpRequest) -> JsonResponse:
    reader(request)
    rows = DesiredLRP.objects.all()
    domain = query_text(request, "domain")
    if domain is not None:
        rows = rows.filter(domain=domain)
    guids = request.GET.getlist("process_guid")
    if guids:
        rows = rows.filter(process_guid__in=[g for g in guids if "\x00" not in g])
    found, next_token = page(request, rows, [("process_guid", str)])
    return ok({"desired_lrps": [desired_lrp_json(d) for d in found], "next_page_token": next_token})


def _desire(request: HttpRequest) -> JsonResponse:
    user = operator(request)
    body = json_body(request)
    errors = schemas.type_errors(body, schemas.DESIRED_LRP)
    errors += [invalid(name) for name in body if name not in _MEMBERS]
    if errors:
        raise InvalidRequest(bbs_message(errors))
    # Required members the body leaves out are empty, so the BBS's own checks name them.
    spec = {"domain": "", "rootfs": "", "process_guid": "", **body}
    desired = lrps.desired_lrp_desire(spec, source="api", user=user)
    return ok({"desired_lrp": desired_lrp_json(desired)}, status=201)


def _get(request: HttpRequest, process_guid: str) -> JsonResponse:
    reader(request)
    desired = DesiredLRP.objects.filter(process_guid=process_guid).first()
    if desired is None:
        raise ResourceNotFound()
    return ok({"desired_lrp": desired_lrp_json(desired)})


def _update(request: HttpRequest, process_guid: str) -> JsonResponse:
    """bbs.md 1.3: instances, routes, annotation; any other member is named."""
    user = operator(request)
    body = json_body(request)
    errors = schemas.type_errors(body, schemas.DESIRED_LRP_UPDATE)
    if errors:
        errors += [invalid(name) for name in body if name not in _UPDATE_MEMBERS]
        raise InvalidRequest(bbs_message(errors))
    desired = lrps.desired_lrp_update(process_guid, body, source="api", user=user)
    return ok({"desired_lrp": desired_lrp_json(desired)})


def _remove(request: HttpRequest, process_guid: str) -> JsonResponse:
    user = operator(request)
    lrps.desired_lrp_remove(process_guid, source="api", user=user)
    return ok({})


collection = endpoint(get=_list, post=_desire)
member = endpoint(get=_get, patch=_update, delete=_remove)

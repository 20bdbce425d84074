"""``/api/v1/open_auctions`` and ``/api/v1/auctions/<id>``: the Otto board as JSON (dashboard.md O1-O5)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from auction.api.auth import reader
from auction.api.http import endpoint, ok
from auction.selectors.otto import auction_detail, open_auctions
from auction.services.errors import ResourceNotFound


def _open(request: HttpRequest) -> JsonResponse:
    reader(request)
    return ok({"open_auctions": [a.as_dict() for a in open_auctions()]})


def _detail(request: HttpRequest, auction_id: str) -> JsonResponse:
    reader(request)
    view = auction_detail(auction_id)
    if view is None:
        raise ResourceNotFound()
    return ok({"auction": view.as_dict()})


open_collection = endpoint(get=_open)
member = endpoint(get=_detail)

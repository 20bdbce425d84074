"""``/api/v1/domains``: the fresh domains; upsert one with a TTL (bbs.md 5)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from auction.api import schemas
from auction.api.auth import operator, reader
from auction.api.http import endpoint, json_body, ok
from auction.api.representations import domain_json
from auction.bbs.validation import bbs_message, invalid
from auction.models import Domain
from auction.selectors.clock import sim_now
from auction.services.domains import domain_upsert
from auction.services.errors import InvalidRequest


def _list(request: HttpRequest) -> JsonResponse:
    """``domains`` lists the fresh ones by name, as Diego's ``Domains`` does; ``all``
    shows every domain with its TTL, expiry (ns) and freshness, for people."""
    reader(request)
    now = sim_now()
    every = list(Domain.objects.order_by("name"))
    return ok({"domains": [d.name for d in every if d.is_fresh(now)],
               "all": [domain_json(d, now) for d in every]})


def _upsert(request: HttpRequest, domain: str = "") -> JsonResponse:
    user = operator(request)
    body = json_body(request)
    errors = []
    if domain and (len(domain) > 255 or not schemas.member_ok(schemas.Member("d", "string"), domain)):
        errors.append(invalid("domain"))
    errors += schemas.type_errors(body, schemas.DOMAIN_UPSERT)
    errors += [invalid(name) for name in body if name != "ttl"]
    if "ttl" not in body:
        errors.append(invalid("ttl"))
    if errors:
        raise InvalidRequest(bbs_message(errors))
    saved = domain_upsert(domain, body["ttl"], source="api", user=user)
    return ok({"domain": domain_json(saved, sim_now())})


collection = endpoint(get=_list)
member = endpoint(put=_upsert)

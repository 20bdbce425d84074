"""Domain upserts (bbs.md 5): expiry = now + ttl; ttl 0 never expires."""

from __future__ import annotations

from django.db import transaction

from auction.bbs.validation import bbs_message, domain_errors
from auction.models import Domain
from auction.selectors.clock import sim_now
from auction.services.errors import InvalidRequest


def domain_upsert(name: str, ttl: float) -> Domain:
    errors = domain_errors(domain=name, ttl=ttl)
    if errors:
        raise InvalidRequest(bbs_message(errors))
    now = sim_now()
    with transaction.atomic():
        domain, _ = Domain.objects.update_or_create(
            name=name,
            # Re-upserting replaces the expiry, and may shorten it.
            defaults={"ttl_s": ttl, "expires_at": None if ttl == 0 else now + ttl},
        )
    return domain

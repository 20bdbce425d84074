"""Domain upserts (bbs.md 5): expiry = now + ttl; ttl 0 never expires."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from auction.bbs.validation import bbs_message, domain_errors
from auction.models import Domain
from auction.selectors.clock import sim_now
from auction.services.audit import audit_record
from auction.services.errors import InvalidRequest, ResourceNotFound
from auction.services.retry import retry_locked


@retry_locked
def domain_upsert(name: str, ttl: float, *, source: str = "system", user: Any = None) -> Domain:
    errors = domain_errors(domain=name, ttl=ttl)
    if errors:
        raise InvalidRequest(bbs_message(errors))
    now = sim_now()
    with transaction.atomic():
        before = Domain.objects.filter(name=name).values("ttl_s", "expires_at").first() or {}
        domain, _ = Domain.objects.update_or_create(
            name=name,
            # Re-upserting replaces the expiry, and may shorten it.
            defaults={"ttl_s": ttl, "expires_at": None if ttl == 0 else now + ttl},
        )
        audit_record("domain_upsert", name, now, source=source, user=user,
                     diff={"ttl_s": [before.get("ttl_s"), domain.ttl_s],
                           "expires_at": [before.get("expires_at"), domain.expires_at]})
    return domain


@retry_locked
def domain_expire(name: str, *, source: str = "system", user: Any = None) -> Domain:
    """Make a domain stale now (its expiry = now; fresh needs expiry > now, bbs.md 5).

    The operator's way to show what happens when Cloud Controller stops bumping.
    """
    now = sim_now()
    with transaction.atomic():
        domain = Domain.objects.select_for_update().filter(name=name).first()
        if domain is None:
            raise ResourceNotFound()
        before = domain.expires_at
        domain.expires_at = now
        domain.save(update_fields=["expires_at"])
        audit_record("domain_expire", name, now, source=source, user=user,
                     diff={"expires_at": [before, now]})
    return domain

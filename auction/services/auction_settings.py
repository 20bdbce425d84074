"""The live simulator's auctioneer settings: changed here only.

The auctioneer reads them with ``selectors.auction_settings``. ``auction_settings_update``
is the one writer (admin, dashboard controls, CLI): it checks the values, saves the row
and leaves an audit entry that also reaches the feed. ``auction_settings_from_scenario``
is called by a scenario load inside its transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from auction.models import AuctionSettings
from auction.selectors.clock import sim_now
from auction.services.audit import audit_record, field_diff
from auction.services.errors import InvalidRequest, reject_unknown_members
from auction.sim.auction_settings import (
    FIELDS,
    MAX_LOCALITY_OFFSET,
    MAX_WEIGHT,
    auction_settings_errors,
)

__all__ = ["FIELDS", "MAX_LOCALITY_OFFSET", "MAX_WEIGHT", "auction_settings_errors",
           "auction_settings_from_scenario", "auction_settings_update"]


def auction_settings_update(changes: Mapping[str, Any], *, source: str, user: Any = None
                            ) -> AuctionSettings:
    """Change some settings; all or nothing; audited (``auction_settings``)."""
    reject_unknown_members(changes, FIELDS)
    errors = auction_settings_errors(changes)
    if errors:
        raise InvalidRequest(", ".join(errors))
    with transaction.atomic():
        row, _ = AuctionSettings.objects.select_for_update().get_or_create(pk=1)
        before = {name: getattr(row, name) for name in FIELDS}
        for name, value in changes.items():
            setattr(row, name, value)
        row.save()
        diff = field_diff(before, {name: getattr(row, name) for name in FIELDS})
        if diff:
            audit_record("auction_settings", "auctioneer", sim_now(), source=source, user=user,
                         diff=diff)
    return row


def auction_settings_from_scenario(block: Mapping[str, Any]) -> AuctionSettings:
    """A scenario's ``auction`` block over the defaults (inside the load's transaction)."""
    defaults = AuctionSettings()
    values = {name: block.get(name, getattr(defaults, name)) for name in FIELDS}
    errors = auction_settings_errors(values)
    if errors:
        raise InvalidRequest(", ".join(errors))
    row, _ = AuctionSettings.objects.update_or_create(pk=1, defaults=values)
    return row

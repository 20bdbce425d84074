"""The audit trail (dashboard.md AD4; issue 5): who changed what, when, from where.

Every write service records one entry inside its own transaction, so an entry exists
exactly when the change does, whether the admin, the API, the dashboard or the CLI
made it. The entry also goes to the event feed.
"""

from __future__ import annotations

from typing import Any

from auction.models import AuditEntry
from auction.services.events import event_record


def audit_record(action: str, target: str, now: float, *, source: str, user: Any,
                 diff: dict[str, Any], cell_id: str = "", feed: bool = True) -> AuditEntry:
    """The entry; and its feed event unless the change already carries one (``feed``)."""
    entry = AuditEntry.objects.create(
        sim=now, user=user if getattr(user, "pk", None) else None,
        source=source, action=action, target=target, diff=diff,
    )
    if feed:
        # The diff travels with the event, so the feed can say what changed (AD4, M2).
        event_record(action, now, key=target, cell_id=cell_id, source=source,
                     user=getattr(user, "username", "") or "", diff=diff)
    return entry


def field_diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, list[Any]]:
    """field → [before, after] for the fields that differ."""
    return {name: [before.get(name), after.get(name)] for name in sorted(set(before) | set(after))
            if before.get(name) != after.get(name)}

"""The scenario the live cluster was loaded from (its checkpoint, dashboard.md C4)."""

from __future__ import annotations

from auction import scenarios
from auction.models import AuditEntry


def last_load() -> AuditEntry | None:
    return AuditEntry.objects.filter(action="scenario_checkpoint").order_by("-id").first()


def loaded_scenario(load: AuditEntry | None = None) -> scenarios.Scenario | None:
    """The scenario of the last checkpoint (or of ``load``), as it was loaded."""
    load = load or last_load()
    if load is None:
        return None
    document = (load.diff or {}).get("scenario")
    if isinstance(document, dict) and isinstance(document.get("data"), dict):
        return scenarios.Scenario(document["name"], document.get("title", document["name"]),
                                  document.get("description", ""), int(document.get("seed", 0)),
                                  document["data"])
    return scenarios.load(load.target) if load.target in scenarios.available() else None

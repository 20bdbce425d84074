"""A digest of everything a write could change: equal digests mean a refused request
changed nothing (the fuzz test and the operator-rule tests compare them)."""

from __future__ import annotations

import hashlib
import json

from auction.models import (
    ActualLRP,
    AuctionSettings,
    AuditEntry,
    Cell,
    DesiredLRP,
    Domain,
    PendingWork,
    SimClock,
    Task,
)

_TABLES = (
    (DesiredLRP, ("process_guid", "instances", "routes", "annotation", "modification_tag_index")),
    (ActualLRP, ("desired_id", "index", "presence", "state", "cell_id", "crash_count")),
    (Task, ("task_guid", "state", "failed", "failure_reason")),
    (Domain, ("name", "ttl_s", "expires_at")),
    (Cell, ("cell_id", "state")),
    (SimClock, ("paused", "speed")),
    (AuctionSettings, ("go_compat", "placement_strategy")),
    (PendingWork, ("ident",)),
    (AuditEntry, ("id",)),
)


def fingerprint() -> str:
    digest = hashlib.sha256()
    for model, fields in _TABLES:
        rows = sorted(map(repr, model.objects.values_list(*fields)))
        digest.update(json.dumps(rows).encode())
    return digest.hexdigest()

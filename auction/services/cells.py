"""Chaos and repair (dashboard.md C2, C3): fail, restore, drain cells and zones; crash an instance."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from auction.live.groups import group
from auction.live.publish import publish_after_commit
from auction.models import ActualLRP, Cell
from auction.selectors.clock import sim_now
from auction.services.audit import audit_record
from auction.services.errors import InvalidRequest, ResourceNotFound
from auction.services.reps import actual_lrp_crash_now, evacuation_sync
from auction.sim.reps import presence_lapses_at


def _cell(cell_id: str) -> Cell:
    cell = Cell.objects.select_for_update().filter(cell_id=cell_id).first()
    if cell is None:
        raise ResourceNotFound()
    return cell


def _audit(action: str, target: str, now: float, source: str, user: Any, diff: dict[str, Any]) -> None:
    audit_record(action, target, now, source=source, user=user, diff=diff,
                 cell_id=target if action.startswith("cell_") else "")


def _changed(cell: Cell) -> None:
    publish_after_commit(group("zones"), {"type": "live.cells", "cells": [cell.cell_id]})


def cell_fail(cell_id: str, *, source: str = "system", user: Any = None) -> Cell:
    with transaction.atomic():
        now = sim_now()
        cell = _cell(cell_id)
        before = cell.state
        cell.state = Cell.State.FAILED
        if cell.presence_lost_at is None:
            cell.presence_lost_at = presence_lapses_at(now)
        cell.save(update_fields=["state", "presence_lost_at"])
        _audit("cell_fail", cell_id, now, source, user, {"state": [before, cell.state]})
        _changed(cell)
    return cell


def cell_restore(cell_id: str, *, source: str = "system", user: Any = None) -> Cell:
    with transaction.atomic():
        now = sim_now()
        cell = _cell(cell_id)
        before = cell.state
        cell.state = Cell.State.HEALTHY
        cell.presence_lost_at = None
        cell.evacuating_since = cell.evacuation_synced_at = None
        cell.save(update_fields=["state", "presence_lost_at", "evacuating_since", "evacuation_synced_at"])
        _audit("cell_restore", cell_id, now, source, user, {"state": [before, cell.state]})
        _changed(cell)
    return cell


def cell_drain(cell_id: str, *, source: str = "system", user: Any = None) -> Cell:
    """Start evacuation (bbs.md 6.3); the first sync happens at once."""
    with transaction.atomic():
        now = sim_now()
        cell = _cell(cell_id)
        if cell.state != Cell.State.HEALTHY:
            raise InvalidRequest(f"cell {cell_id} is {cell.state}; only a healthy cell can drain")
        cell.state = Cell.State.DRAINING
        cell.evacuating_since = now
        cell.save(update_fields=["state", "evacuating_since"])
        _audit("cell_drain", cell_id, now, source, user, {"state": ["healthy", "draining"]})
        evacuation_sync(cell, now)
        _changed(cell)
    return cell


def zone_fail(zone: str, *, source: str = "system", user: Any = None) -> list[Cell]:
    ids = list(Cell.objects.filter(zone__name=zone).values_list("cell_id", flat=True))
    if not ids:
        raise ResourceNotFound()
    return [cell_fail(cell_id, source=source, user=user) for cell_id in ids]


def zone_restore(zone: str, *, source: str = "system", user: Any = None) -> list[Cell]:
    ids = list(Cell.objects.filter(zone__name=zone).values_list("cell_id", flat=True))
    if not ids:
        raise ResourceNotFound()
    return [cell_restore(cell_id, source=source, user=user) for cell_id in ids]


def actual_lrp_crash(process_guid: str, index: int, *, source: str = "system", user: Any = None) -> None:
    """Inject a crash of the ORDINARY instance now, as its cell would report it (bbs.md 3)."""
    with transaction.atomic():
        now = sim_now()
        row = ActualLRP.objects.select_for_update().filter(
            desired_id=process_guid, index=index, presence=ActualLRP.Presence.ORDINARY).first()
        if row is None:
            raise ResourceNotFound()
        if row.state not in (ActualLRP.State.CLAIMED, ActualLRP.State.RUNNING):
            raise InvalidRequest(f"{process_guid}.{index} is {row.state}: only a CLAIMED or RUNNING instance can crash")
        cell_id = row.cell_id
        actual_lrp_crash_now(row, now)
        _audit("actual_lrp_crash", f"{process_guid}.{index}", now, source, user, {})
        publish_after_commit(group("zones"), {"type": "live.cells", "cells": [cell_id]})

"""Chaos and operator actions on the live cluster (dashboard.md C2, C3), one door for all.

``chaos_run`` takes any action of the registry (``auction.sim.chaos``): it checks the
arguments, lets the action's rule decide over the database store at the clock's now,
applies the change in one transaction with its audit entry, and answers the line the
controls show. The API, the dashboard, the panel, the CLI and scenario loads all call
it; the named helpers below are the same call for the actions callers use by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from django.db import transaction

from auction.models import Cell, Zone
from auction.selectors.clock import sim_now
from auction.services.audit import audit_record
from auction.services.errors import BBSError, InvalidRequest, ResourceNotFound
from auction.services.intents import intents_after_commit
from auction.services.lrps import apply_stops_apart
from auction.services.retry import retry_locked
from auction.services.store import DbStore
from auction.services.world import world_changed
from auction.sim.changes import CellsChanged, ChangeSet
from auction.sim.chaos import ACTIONS, ChaosError, chaos_args, chaos_change


@retry_locked
def chaos_run(name: str, raw: Mapping[str, Any], *, source: str = "system", user: Any = None) -> str:
    """Run registry action ``name`` now; returns what happened, in the feed's words."""
    try:
        args = chaos_args(name, raw)
    except ChaosError as exc:
        raise _bbs_error(exc) from None
    action = ACTIONS[name]
    with transaction.atomic():
        now = sim_now()
        store = DbStore()
        try:
            change = chaos_change(store, name, args, now)
        except ChaosError as exc:
            raise _bbs_error(exc) from None
        diff = _diff(store, change, args)
        # The rule's own feed entries say who did it; the audit entry adds no second one.
        who = {"source": source, "user": getattr(user, "username", "") or ""}
        change.notes = [replace(n, data={**n.data, **who}) for n in change.notes]
        apply_stops_apart(store, change)  # a big scale-down's stops follow the commit
        target = action.target(args)
        audit_record(action.audit, target, now, source=source, user=user, diff=diff,
                     cell_id=target if "cell" in args else "", feed=not change.notes)
    return action.describe(args, cells=len(change.cells_put))


def _diff(store: DbStore, change: ChangeSet, args: Mapping[str, Any]) -> dict[str, Any]:
    """What the audit entry says changed: an app's instances, a cell's state, else the
    arguments."""
    if len(change.apps_put) == 1:
        app = change.apps_put[0]
        before = store.app(app.process_guid)
        return {"instances": [before.instances if before else None, app.instances]}
    if len(change.cells_put) == 1:
        cell = change.cells_put[0]
        before_cell = store.cell(cell.cell_id)
        return {"state": [before_cell.state if before_cell else None, cell.state]}
    return {k: [None, v] for k, v in args.items() if k != "apps"}


def _bbs_error(exc: ChaosError) -> BBSError:
    return ResourceNotFound() if exc.status == 404 else InvalidRequest(exc.message)


def cell_fail(cell_id: str, *, source: str = "system", user: Any = None) -> str:
    return chaos_run("cell_fail", {"cell": cell_id}, source=source, user=user)


def cell_restore(cell_id: str, *, source: str = "system", user: Any = None) -> str:
    return chaos_run("cell_restore", {"cell": cell_id}, source=source, user=user)


def cell_drain(cell_id: str, *, source: str = "system", user: Any = None) -> str:
    return chaos_run("cell_drain", {"cell": cell_id}, source=source, user=user)


def actual_lrp_crash(process_guid: str, index: int, *, source: str = "system", user: Any = None) -> str:
    """Inject a crash of the ORDINARY instance now, as its cell would report it (bbs.md 3)."""
    return chaos_run("crash", {"process_guid": process_guid, "index": index}, source=source, user=user)


# -- cells and zones edited (the admin) ----------------------------------------------------

#: The state a form may ask for, and the registry action that gets a cell there.
STATE_ACTIONS = {"failed": "cell_fail", "healthy": "cell_restore", "draining": "cell_drain"}


@retry_locked
def cell_save(cell: Cell, changed: list[str], *, source: str = "system", user: Any = None) -> Cell:
    """Add ``cell`` (unsaved) or store the ``changed`` fields of an existing one.

    A change of ``state`` is the registry's action (a failed cell's presence lapses 10-15 s
    later, a drained one evacuates), never a bare write; everything is audited and the
    cell is pushed to open pages.
    """
    with transaction.atomic():
        now = sim_now()
        creating = cell.pk is None
        wanted = cell.state
        stored = None if creating else Cell.objects.select_for_update().get(pk=cell.pk)
        before = {} if stored is None else {f: _plain(getattr(stored, f)) for f in changed}
        if creating:
            cell.state = Cell.State.HEALTHY
        elif stored is not None:
            cell.state = stored.state  # the state moves below, through its rule
        cell.save()
        if wanted != cell.state:
            store = DbStore()
            try:
                change = chaos_change(store, STATE_ACTIONS[wanted], {"cell": cell.cell_id}, now)
            except ChaosError as exc:
                raise _bbs_error(exc) from None
            store.apply(change)
            cell.refresh_from_db()
        after = {f: _plain(getattr(cell, f)) for f in (changed if not creating else _CELL_FIELDS)}
        audit_record("cell_add" if creating else "cell_update", cell.cell_id, now, source=source,
                     user=user, diff={f: [before.get(f), v] for f, v in after.items()
                                      if before.get(f) != v}, cell_id=cell.cell_id)
        if creating or set(changed) - {"state"}:
            world_changed()  # a cell added, moved or resized: open pages draw it anew
        intents_after_commit([CellsChanged((cell.cell_id,))])
    return cell


@retry_locked
def cell_remove(cell_id: str, *, source: str = "system", user: Any = None) -> None:
    """Take a cell out of the cluster: its rep is gone (its instances are missing for
    convergence, as when its presence lapses)."""
    with transaction.atomic():
        now = sim_now()
        deleted, _ = Cell.objects.filter(cell_id=cell_id).delete()
        if not deleted:
            raise ResourceNotFound()
        audit_record("cell_remove", cell_id, now, source=source, user=user,
                     diff={"cell_id": [cell_id, None]}, cell_id=cell_id)
        world_changed()
        intents_after_commit([CellsChanged((cell_id,))])


@retry_locked
def zone_save(zone: Zone, *, source: str = "system", user: Any = None) -> Zone:
    with transaction.atomic():
        now = sim_now()
        before = None if zone.pk is None else Zone.objects.filter(pk=zone.pk).values_list(
            "name", flat=True).first()
        zone.save()
        audit_record("zone_save", zone.name, now, source=source, user=user,
                     diff={"name": [before, zone.name]})
        world_changed()
        intents_after_commit([CellsChanged(())])
    return zone


@retry_locked
def zone_remove(zone: Zone, *, source: str = "system", user: Any = None) -> None:
    with transaction.atomic():
        if zone.cells.exists():
            raise InvalidRequest(f"zone {zone.name} still has cells; move or remove them first")
        name = zone.name
        zone.delete()
        audit_record("zone_remove", name, sim_now(), source=source, user=user,
                     diff={"name": [name, None]})
        world_changed()
        intents_after_commit([CellsChanged(())])


_CELL_FIELDS = ("zone", "index", "memory_mb", "disk_mb", "containers", "proxy_memory_mb",
                "preloaded_rootfses", "rootfs_providers", "volume_drivers", "placement_tags",
                "optional_placement_tags", "state")


def _plain(value: Any) -> Any:
    if isinstance(value, Zone):
        return value.name
    return list(value) if isinstance(value, tuple) else value

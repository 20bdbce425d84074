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

from auction.selectors.clock import sim_now
from auction.services.audit import audit_record
from auction.services.errors import BBSError, InvalidRequest, ResourceNotFound
from auction.services.store import DbStore
from auction.sim.changes import ChangeSet
from auction.sim.chaos import ACTIONS, ChaosError, chaos_args, chaos_change


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
        store.apply(change)
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


def zone_fail(zone: str, *, source: str = "system", user: Any = None) -> str:
    return chaos_run("zone_fail", {"zone": zone}, source=source, user=user)


def zone_restore(zone: str, *, source: str = "system", user: Any = None) -> str:
    return chaos_run("zone_restore", {"zone": zone}, source=source, user=user)


def actual_lrp_crash(process_guid: str, index: int, *, source: str = "system", user: Any = None) -> str:
    """Inject a crash of the ORDINARY instance now, as its cell would report it (bbs.md 3)."""
    return chaos_run("crash", {"process_guid": process_guid, "index": index}, source=source, user=user)

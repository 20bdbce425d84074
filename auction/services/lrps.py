"""Desiring, updating and removing LRPs (bbs.md 1.4): never gated by domain freshness.

A removal or a scale-down that stops more than ``STOP_CHUNK`` instances answers as soon
as the desired LRP's own change is kept (the rule's answer for the desired LRP and its
queued starts: ``lrp_remove`` or ``lrp_update`` given no rows); the stops themselves
(``lrp_stops`` of the rows it had, bbs.md 1.4) follow off the request, as Diego's reps
answer their stops after the BBS's transaction: worked out apart from any transaction,
then written with their events (summaries, bbs.md 8.1) in chunks of ``STOP_CHUNK`` rows,
each a short transaction of its own, so the clock, convergence and Otto keep their pace
and open pages see the app go as it goes. Each chunk re-checks its rows (bbs.md 4.3: a
row that changed meanwhile is left alone); a row a lost process never stopped is an
orphan, which convergence retires, as it does a stop that never reached a rep in Diego.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, connection, transaction

from auction.bbs.changes import RowDelete
from auction.bbs.validation import (
    bbs_message,
    desired_lrp_update_errors,
    simulation_errors,
)
from auction.models import ActualLRP, DesiredLRP
from auction.selectors.clock import sim_now
from auction.services.audit import audit_record, field_diff
from auction.services.errors import (
    InvalidRequest,
    ResourceExists,
    ResourceNotFound,
    reject_unknown_members,
)
from auction.services.retry import retry_locked
from auction.services.store import DbStore, sim_app
from auction.sim.changes import ChangeSet
from auction.sim.lrps import lrp_desire, lrp_remove, lrp_retire, lrp_stops, lrp_update

log = logging.getLogger(__name__)

#: Rows a removal or scale-down stops per transaction (the module docstring).
STOP_CHUNK = 5000
#: Between two chunks: the writers that waited on the lock go first.
STOP_PAUSE_S = 0.02
_stoppers: list[threading.Thread] = []

DESIRED_FIELDS = (
    "process_guid", "domain", "rootfs", "instances", "memory_mb", "disk_mb", "max_pids",
    "placement_tags", "volume_drivers", "routes", "annotation", "ports", "start_timeout_ms",
    # the simulator's knobs, beside the definition
    "start_delay_s", "crash_probability", "crash_after_s",
)


def _summary(desired: DesiredLRP) -> dict[str, Any]:
    return {"instances": desired.instances, "routes": desired.routes,
            "annotation": desired.annotation, "modification_tag": desired.modification_tag}


@retry_locked
def desired_lrp_desire(spec: Mapping[str, Any], *, source: str = "system", user: Any = None) -> DesiredLRP:
    """Desire (bbs.md 1.4): the rule is ``auction.sim.lrps.lrp_desire``; the BBS-only
    fields (routes, annotation, ports...) are stored beside it."""
    reject_unknown_members(spec, DESIRED_FIELDS)
    desired = DesiredLRP(**spec)
    errors = desired.bbs_errors()
    if errors:
        raise InvalidRequest(bbs_message(errors))
    now = sim_now()
    try:
        with transaction.atomic():
            if DesiredLRP.objects.filter(process_guid=desired.process_guid).exists():
                raise ResourceExists()
            store = DbStore()
            existing = [r.index for r in store.app_rows(desired.process_guid)
                        if r.presence == ActualLRP.Presence.ORDINARY]
            change = lrp_desire(sim_app(desired), existing, now)
            app = change.apps_put.pop()  # stored here, with every BBS field
            desired.modification_tag_epoch, desired.modification_tag_index = app.epoch, app.tag
            desired.save()
            store.apply(change)
            audit_record("desired_lrp_desire", desired.process_guid, now, source=source, user=user,
                         diff={name: [None, _plain(getattr(desired, name))] for name in spec})
    except IntegrityError:
        raise ResourceExists() from None
    return desired


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


@retry_locked
def desired_lrp_update(process_guid: str, update: Mapping[str, Any], *, source: str = "system",
                       user: Any = None) -> DesiredLRP:
    """Apply a DesiredLRPUpdateRequest: instances, routes, annotation (bbs.md 1.3, 1.4);
    the scale is ``auction.sim.lrps.lrp_update``."""
    errors = desired_lrp_update_errors(update)
    if errors:
        raise InvalidRequest(bbs_message(errors))
    now = sim_now()
    with transaction.atomic():
        desired = DesiredLRP.objects.select_for_update().filter(process_guid=process_guid).first()
        if desired is None:
            raise ResourceNotFound()
        summary_before = _summary(desired)
        store = DbStore()
        keep = update.get("instances", desired.instances)
        stopping = _stopping(process_guid, keep) if keep < desired.instances else []
        apart = len(stopping) > STOP_CHUNK  # the stops follow (the module docstring)
        _, change = lrp_update(sim_app(desired), update, [] if apart else store.app_rows(process_guid),
                               lambda cell_id: store.reachable(cell_id, now), now)
        store.apply(change)  # the tag moves on every update, even one that changes nothing
        if apart:
            _stops_after_commit(stopping, keep, now)
        DesiredLRP.objects.filter(pk=desired.pk).update(
            **{name: update[name] for name in ("routes", "annotation") if name in update})
        desired.refresh_from_db()
        summary_after = _summary(desired)
        audit_record("desired_lrp_update", process_guid, now, source=source, user=user,
                     diff=field_diff(summary_before, summary_after))
    return desired


@retry_locked
def desired_lrp_remove(process_guid: str, *, source: str = "system", user: Any = None) -> None:
    """Remove (bbs.md 1.4): ``auction.sim.lrps.lrp_remove``."""
    with transaction.atomic():
        now = sim_now()
        desired = DesiredLRP.objects.select_for_update().filter(process_guid=process_guid).first()
        if desired is None:
            raise ResourceNotFound()
        summary = _summary(desired)
        store = DbStore()
        stopping = _stopping(process_guid, 0)
        apart = len(stopping) > STOP_CHUNK  # the stops follow (the module docstring)
        store.apply(lrp_remove(sim_app(desired), [] if apart else store.app_rows(process_guid),
                               lambda cell_id: store.reachable(cell_id, now), now))
        if apart:
            _stops_after_commit(stopping, 0, now)
        audit_record("desired_lrp_remove", process_guid, now, source=source, user=user,
                     diff={"instances": [summary["instances"], None]})


def _stopping(process_guid: str, keep: int) -> list[int]:
    """The ids of the rows a scale-down to ``keep`` (a removal: 0) may stop."""
    return list(ActualLRP.objects.filter(desired_id=process_guid, index__gte=keep)
                .exclude(presence=ActualLRP.Presence.EVACUATING).values_list("id", flat=True))


def _stops_after_commit(pks: list[int], keep: int, at: float) -> None:
    transaction.on_commit(lambda: _stops_start(_stops_run, pks, keep, at))


def apply_stops_apart(store: DbStore, change: ChangeSet) -> None:
    """Apply a rule's ``change`` (a scale from the dashboard's controls, ``chaos_run``);
    when it stops more than ``STOP_CHUNK`` instances, those stops and their events follow
    after the commit in chunks (the module docstring), the rule's answer unchanged."""
    stops = [op for op in change.lrp_ops if type(op) is RowDelete]
    if len(stops) <= STOP_CHUNK or len(stops) != len(change.lrp_ops):
        store.apply(change)
        return
    rows = {id(op.before) for op in stops}
    theirs = [e for e in change.events if e.after is None and id(e.before) in rows]
    mine = {id(e) for e in theirs}
    change.lrp_ops = []
    change.events = [e for e in change.events if id(e) not in mine]
    store.apply(change)
    transaction.on_commit(lambda: _stops_start(_stops_write, store, stops, theirs, change.at))


def _stops_start(target: Any, *args: Any) -> None:
    # Not a daemon: a command that removed an app finishes its stops before it exits.
    thread = threading.Thread(target=_stops_guarded, args=(target, *args), name="lrp-stops")
    _stoppers[:] = [t for t in _stoppers if t.is_alive()] + [thread]
    thread.start()


def _stops_guarded(target: Any, *args: Any) -> None:
    try:
        target(*args)
    except Exception as error:  # noqa: BLE001 - the rows left are orphans for convergence
        log.warning("stopping instances: %s: %s; convergence retires the rest",
                    type(error).__name__, (str(error).splitlines() or [""])[0])
    finally:
        connection.close()


def _stops_run(pks: list[int], keep: int, at: float) -> None:
    """The stops of the rows ``pks`` (module docstring), at the operation's instant."""
    store = DbStore()
    change = lrp_stops(store.rows_by_id(pks), keep, lambda cell_id: store.reachable(cell_id, at), at)
    _stops_write(store, change.lrp_ops, change.events, at)


def _stops_write(store: DbStore, ops: list[Any], events: list[Any], at: float) -> None:
    """``ops`` in chunks of ``STOP_CHUNK``, each its own transaction; ``events`` with the
    first (``store`` read the rows: it knows their keys)."""
    for start in range(0, max(len(ops), 1), STOP_CHUNK):
        chunk = ops[start:start + STOP_CHUNK]
        part = ChangeSet(at, lrp_ops=chunk, events=events if start == 0 else [],
                         touched={op.before.cell_id for op in chunk if op.before.cell_id})
        store.prepare(part)  # the events' rows made before the write lock is taken
        _stops_apply(store, part)
        time.sleep(STOP_PAUSE_S)


@retry_locked
def _stops_apply(store: DbStore, part: ChangeSet) -> None:
    store.apply(part)


def stops_wait(timeout: float | None = None) -> bool:
    """Wait for the stops still being applied in this process (tests, benchmarks);
    True when none is left."""
    for thread in list(_stoppers):
        thread.join(timeout)
    return not any(t.is_alive() for t in _stoppers)


SIMULATION_FIELDS = ("start_delay_s", "crash_probability", "crash_after_s")


@retry_locked
def desired_lrp_simulation_update(process_guid: str, knobs: Mapping[str, Any], *,
                                  source: str = "system", user: Any = None) -> DesiredLRP:
    """Change the simulator's knobs of an app (not part of Diego's record: no tag bump)."""
    unknown = sorted(set(knobs) - set(SIMULATION_FIELDS))
    errors = [f"Invalid field: {name}" for name in unknown]
    errors += [e.message for e in simulation_errors(**{k: v for k, v in knobs.items() if k in SIMULATION_FIELDS})]
    if errors:
        raise InvalidRequest(", ".join(errors))
    with transaction.atomic():
        desired = DesiredLRP.objects.select_for_update().filter(process_guid=process_guid).first()
        if desired is None:
            raise ResourceNotFound()
        before = {name: getattr(desired, name) for name in knobs}
        for name, value in knobs.items():
            setattr(desired, name, value)
        desired.save(update_fields=list(knobs))
        audit_record("desired_lrp_simulate", process_guid, sim_now(), source=source, user=user,
                     diff=field_diff(before, dict(knobs)))
    return desired


@retry_locked
def actual_lrp_retire(process_guid: str, index: int, *, source: str = "system", user: Any = None) -> None:
    """Kill one instance (``cfdot retire-actual-lrp``; ``auction.sim.lrps.lrp_retire``).

    The desired state is unchanged, so the next convergence pass finds the index
    missing and starts it again.
    """
    with transaction.atomic():
        now = sim_now()
        store = DbStore()
        row = next((r for r in store.app_rows(process_guid)
                    if r.index == index and r.presence == ActualLRP.Presence.ORDINARY), None)
        if row is None:
            raise ResourceNotFound()
        store.apply(lrp_retire(row, now))
        audit_record("actual_lrp_retire", f"{process_guid}.{index}", now, source=source, user=user,
                     diff={"state": [row.state, None]}, cell_id=row.cell_id)

"""Desiring, updating and removing LRPs (bbs.md 1.4): never gated by domain freshness."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, transaction

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
from auction.sim.lrps import lrp_desire, lrp_remove, lrp_retire, lrp_update

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
        _, change = lrp_update(sim_app(desired), update, store.app_rows(process_guid),
                               lambda cell_id: store.reachable(cell_id, now), now)
        store.apply(change)  # the tag moves on every update, even one that changes nothing
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
        store.apply(lrp_remove(sim_app(desired), store.app_rows(process_guid),
                               lambda cell_id: store.reachable(cell_id, now), now))
        audit_record("desired_lrp_remove", process_guid, now, source=source, user=user,
                     diff={"instances": [summary["instances"], None]})


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

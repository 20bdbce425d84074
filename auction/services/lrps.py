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
from auction.live.groups import group
from auction.live.publish import publish_after_commit
from auction.models import ActualLRP, Cell, DesiredLRP
from auction.selectors.clock import sim_now
from auction.services.audit import audit_record, field_diff
from auction.services.errors import (
    InvalidRequest,
    ResourceExists,
    ResourceNotFound,
    reject_unknown_members,
)
from auction.services.events import event_record
from auction.services.work import work_request_lrps

DESIRED_FIELDS = (
    "process_guid", "domain", "rootfs", "instances", "memory_mb", "disk_mb", "max_pids",
    "placement_tags", "volume_drivers", "routes", "annotation", "ports", "start_timeout_ms",
    # the simulator's knobs, beside the definition
    "start_delay_s", "crash_probability", "crash_after_s",
)


def _summary(desired: DesiredLRP) -> dict[str, Any]:
    return {"instances": desired.instances, "routes": desired.routes,
            "annotation": desired.annotation, "modification_tag": desired.modification_tag}


def desired_lrp_desire(spec: Mapping[str, Any], *, source: str = "system", user: Any = None) -> DesiredLRP:
    """Store a DesiredLRP and an ORDINARY UNCLAIMED ActualLRP for each index."""
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
            desired.save()
            event_record("desired_lrp_created", now, key=desired.process_guid,
                         after=_summary(desired))
            _create_unclaimed(desired, range(desired.instances), now)
            audit_record("desired_lrp_desire", desired.process_guid, now, source=source, user=user,
                         diff={name: [None, _plain(getattr(desired, name))] for name in spec})
    except IntegrityError:
        raise ResourceExists() from None
    return desired


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def desired_lrp_update(process_guid: str, update: Mapping[str, Any], *, source: str = "system",
                       user: Any = None) -> DesiredLRP:
    """Apply a DesiredLRPUpdateRequest: instances, routes, annotation (bbs.md 1.3, 1.4)."""
    errors = desired_lrp_update_errors(update)
    if errors:
        raise InvalidRequest(bbs_message(errors))
    now = sim_now()
    with transaction.atomic():
        desired = DesiredLRP.objects.select_for_update().filter(process_guid=process_guid).first()
        if desired is None:
            raise ResourceNotFound()
        before = desired.instances
        summary_before = _summary(desired)
        for name in ("instances", "routes", "annotation"):
            if name in update:
                setattr(desired, name, update[name])
        # The tag moves on every successful update, even one that changes nothing.
        desired.modification_tag_index += 1
        desired.save()
        if desired.instances > before:
            _create_unclaimed(desired, range(before, desired.instances), now)
        elif desired.instances < before:
            _scale_down(process_guid, desired.instances)
        summary_after = _summary(desired)
        event_record("desired_lrp_changed", now, key=process_guid, before=summary_before,
                     after=summary_after)
        audit_record("desired_lrp_update", process_guid, now, source=source, user=user,
                     diff=field_diff(summary_before, summary_after))
    return desired


def desired_lrp_remove(process_guid: str, *, source: str = "system", user: Any = None) -> None:
    with transaction.atomic():
        now = sim_now()
        desired = DesiredLRP.objects.select_for_update().filter(process_guid=process_guid).first()
        if desired is None:
            raise ResourceNotFound()
        summary = _summary(desired)
        desired.delete()
        event_record("desired_lrp_removed", now, key=process_guid, before=summary)
        _scale_down(process_guid, 0)
        audit_record("desired_lrp_remove", process_guid, now, source=source, user=user,
                     diff={"instances": [summary["instances"], None]})


def _create_unclaimed(desired: DesiredLRP, indices: range, now: float) -> None:
    """New UNCLAIMED rows, then **one** start request listing their indices (bbs.md 1.4)."""
    existing = set(
        ActualLRP.objects.filter(
            desired_id=desired.process_guid, presence=ActualLRP.Presence.ORDINARY,
            index__in=list(indices),
        ).values_list("index", flat=True)
    )
    ActualLRP.objects.bulk_create(
        ActualLRP(
            desired_id=desired.process_guid, index=i, domain=desired.domain,
            state=ActualLRP.State.UNCLAIMED, since=now,
        )
        for i in indices
        if i not in existing
    )
    work_request_lrps(((desired.process_guid, i) for i in indices if i not in existing), now, "desire")


def _scale_down(process_guid: str, keep: int) -> None:
    """Rows at index ≥ keep (bbs.md 1.4, ``stopInstancesFrom``), EVACUATING ones aside.

    UNCLAIMED or CRASHED rows are deleted at once. CLAIMED or RUNNING rows get a stop
    sent to their cell when it has a presence: the simulated rep removes the container
    and reports it at once, so the row goes too. On a cell without presence nothing
    happens: the row stays for convergence (an extra, retired only in a fresh domain).
    """
    now = sim_now()
    rows = ActualLRP.objects.filter(desired_id=process_guid, index__gte=keep).exclude(
        presence=ActualLRP.Presence.EVACUATING)
    rows.filter(state__in=[ActualLRP.State.UNCLAIMED, ActualLRP.State.CRASHED]).delete()
    reachable = [c.cell_id for c in Cell.objects.exclude(state=Cell.State.FAILED) if c.has_presence(now)]
    stopped = rows.filter(state__in=[ActualLRP.State.CLAIMED, ActualLRP.State.RUNNING],
                          cell_id__in=reachable)
    touched = sorted(set(stopped.values_list("cell_id", flat=True)))
    stopped.delete()
    # The tray re-renders with every cells frame, so an empty list still refreshes it.
    publish_after_commit(group("zones"), {"type": "live.cells", "cells": touched})


SIMULATION_FIELDS = ("start_delay_s", "crash_probability", "crash_after_s")


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


def actual_lrp_retire(process_guid: str, index: int, *, source: str = "system", user: Any = None) -> None:
    """Kill one instance (``cfdot retire-actual-lrp``; bbs.md 2.3 Retire).

    The desired state is unchanged, so the next convergence pass finds the index
    missing and starts it again. A CLAIMED or RUNNING instance is stopped on its cell
    (the simulated rep removes the container at once); an UNCLAIMED or CRASHED one is
    deleted. Either way the ORDINARY row goes now.
    """
    with transaction.atomic():
        now = sim_now()
        row = ActualLRP.objects.select_for_update().filter(
            desired_id=process_guid, index=index, presence=ActualLRP.Presence.ORDINARY).first()
        if row is None:
            raise ResourceNotFound()
        before = {"state": row.state, "cell_id": row.cell_id}
        row.delete()
        key = f"{process_guid}.{index}"
        event_record("actual_lrp_instance_removed", now, key=key, cell_id=before["cell_id"],
                     before=before)
        audit_record("actual_lrp_retire", key, now, source=source, user=user,
                     diff={"state": [before["state"], None]}, cell_id=before["cell_id"])
        publish_after_commit(group("zones"), {"type": "live.cells",
                                              "cells": [before["cell_id"]] if before["cell_id"] else []})

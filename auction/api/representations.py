"""What the API answers with: the seed's field names (``diego-lrps.txt``, bbs.md 2.1, 7)."""

from __future__ import annotations

from typing import Any

from auction.api.http import nanoseconds
from auction.models import ActualLRP, Cell, DesiredLRP, Domain, Task


def desired_lrp_json(d: DesiredLRP) -> dict[str, Any]:
    return {
        "process_guid": d.process_guid, "domain": d.domain, "rootfs": d.rootfs,
        "instances": d.instances, "memory_mb": d.memory_mb, "disk_mb": d.disk_mb,
        "max_pids": d.max_pids, "placement_tags": list(d.placement_tags),
        "volume_drivers": list(d.volume_drivers), "routes": d.routes, "annotation": d.annotation,
        "ports": list(d.ports), "start_timeout_ms": d.start_timeout_ms,
        "modification_tag": d.modification_tag,
        "start_delay_s": d.start_delay_s, "crash_probability": d.crash_probability,
        "crash_after_s": d.crash_after_s,
    }


def actual_lrp_json(a: ActualLRP, zone_of: dict[str, str]) -> dict[str, Any]:
    """bbs.md 2.1: the instance key only when placed, net info only when RUNNING,
    the placement error only when UNCLAIMED."""
    placed = a.state in (ActualLRP.State.CLAIMED, ActualLRP.State.RUNNING)
    running = a.state == ActualLRP.State.RUNNING
    return {
        "process_guid": a.desired_id,
        "instance_guid": a.instance_guid if placed else "",
        "cell_id": a.cell_id if placed else "",
        "domain": a.domain,
        "index": a.index,
        "state": a.state,
        "address": a.address if running else "",
        "ports": list(a.ports) if running else [],
        "placement_error": a.placement_error if a.state == ActualLRP.State.UNCLAIMED else "",
        "since": nanoseconds(a.since),
        "presence": a.presence,
        "crash_count": a.crash_count,
        "crash_reason": a.crash_reason,
        "modification_tag": {"epoch": a.modification_tag_epoch, "index": a.modification_tag_index},
        "availability_zone": zone_of.get(a.cell_id, "") if placed else "",
    }


def task_json(t: Task) -> dict[str, Any]:
    return {
        "task_guid": t.task_guid, "domain": t.domain, "state": t.state, "cell_id": t.cell_id,
        "created_at": nanoseconds(t.created_at), "updated_at": nanoseconds(t.updated_at),
        "first_completed_at": nanoseconds(t.first_completed_at),
        "failed": t.failed, "failure_reason": t.failure_reason, "result": t.result,
        "rejection_count": t.rejection_count, "rejection_reason": t.rejection_reason,
        "completion_callback_url": t.completion_callback_url,
        "rootfs": t.rootfs, "memory_mb": t.memory_mb, "disk_mb": t.disk_mb,
        "max_pids": t.max_pids, "placement_tags": list(t.placement_tags),
        "volume_drivers": list(t.volume_drivers), "annotation": t.annotation,
        "duration_s": t.duration_s, "placement_mode": t.placement_mode,
    }


def domain_json(d: Domain, now: float) -> dict[str, Any]:
    return {"domain": d.name, "ttl": d.ttl_s, "expires_at": nanoseconds(d.expires_at),
            "fresh": d.is_fresh(now)}


def cell_json(cell: Cell, now: float, available: dict[str, int] | None) -> dict[str, Any]:
    """A cell presence (``CellPresence``) plus what the simulator shows of it."""
    return {
        "cell_id": cell.cell_id, "zone": cell.zone.name, "index": cell.index,
        "state": cell.state, "presence": cell.has_presence(now),
        "capacity": {"memory_mb": cell.memory_mb, "disk_mb": cell.disk_mb,
                     "containers": cell.containers},
        "available": available,
        "rootfs_providers": list(cell.rootfs_providers),
        "preloaded_rootfses": list(cell.preloaded_rootfses),
        "placement_tags": list(cell.placement_tags),
        "optional_placement_tags": list(cell.optional_placement_tags),
        "volume_drivers": list(cell.volume_drivers),
        "evacuating": cell.state == Cell.State.DRAINING,
    }

"""A simulated cluster as Diego's ``cfdot`` prints a real one (JSON Lines, cfdot.md).

One compact JSON value per line, with cfdot's key names and shapes: ``cells`` (the
presences of the cells whose presence is alive), ``cell-states`` (what each answering
rep reports), ``desired-lrp-scheduling-infos``, ``actual-lrps``, ``tasks`` and
``domains`` (fresh ones, bare strings); a line's keys tell its kind, as a ``jq`` user
expects. ``manage.py simulate`` and ``manage.py diego dump`` then add one line per BBS
event, ``{"event": type, "at": sim seconds, "key": ...}``. Times are integer
nanoseconds of the simulated clock (sim seconds x 1e9), as the BBS prints UNIX ns.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from auction.bbs import events as ev
from auction.bbs import types as core
from auction.sim.lrps import DESIRED_CHANGED, DESIRED_CREATED, DESIRED_REMOVED
from auction.sim.model import DRAINING, Load, QueuedWork, SimApp, SimCell, SimTask

NS = 1_000_000_000
#: The event types of the BBS's streams (bbs.md 8); the simulator's own notes are not.
BBS_EVENTS = frozenset({
    DESIRED_CREATED, DESIRED_CHANGED, DESIRED_REMOVED, ev.INSTANCE_CREATED, ev.INSTANCE_CHANGED,
    ev.INSTANCE_REMOVED, ev.LRP_CRASHED, ev.GROUP_CREATED, ev.GROUP_CHANGED, ev.GROUP_REMOVED,
    ev.TASK_CREATED, ev.TASK_CHANGED, ev.TASK_REMOVED,
})
TASK_STATES = {core.PENDING: "Pending", core.TASK_RUNNING: "Running", core.COMPLETED: "Completed",
               core.RESOLVING: "Resolving"}


def ns(seconds: float | None) -> int:
    return 0 if seconds is None else int(round(seconds * NS))


@dataclass(slots=True)
class ClusterView:
    """Everything a dump shows, read from one store at one instant."""

    now: float
    cells: Sequence[SimCell]
    loads: Mapping[str, Load]
    apps: Sequence[SimApp]
    rows: Sequence[core.ActualLRP]
    tasks: Sequence[SimTask]
    domains: Mapping[str, float | None]
    events: Sequence[tuple[float, str, str]]  # (at, type, key), in the order they happened
    # What an import assumed where its capture lacked something (plans.md 3.2).
    assumptions: tuple[str, ...] = ()
    # The lines an import skipped as not JSON (a prompt, a notice), each "file:line: ..."
    # (plans.md 3.1); never kept with a foundation.
    warnings: tuple[str, ...] = ()
    # Which kept version of a named foundation this is ("v2 sha256:1a2b3c4d"); "" otherwise.
    version: str = ""
    # The UNIX nanosecond of sim second 0: an imported foundation keeps its own times
    # (``auction.sim.cfdot_read``); a simulated one starts at 0.
    origin_ns: int = 0
    # What a dump does not print but a clone of the cluster needs (plans.md 1): the
    # auctioneer's queue, the convergence timer and the loaded scenario's steps not yet
    # done, (at, marker, action, args). A capture has none of them (empty defaults).
    queue: Sequence[QueuedWork] = ()
    next_convergence_at: float | None = None
    convergence_interval_s: float = 30.0
    timeline: Sequence[tuple[float, str, str, Mapping[str, Any]]] = ()


def cell_presence(cell: SimCell) -> dict[str, Any]:
    """``cfdot cells`` (``models.CellPresence``)."""
    providers: list[dict[str, Any]] = [
        {"name": "preloaded", "properties": list(cell.preloaded_rootfses)},
        {"name": "preloaded+layer", "properties": list(cell.preloaded_rootfses)},
    ] + [{"name": p} for p in cell.rootfs_providers]
    line: dict[str, Any] = {
        "cell_id": cell.cell_id, "rep_address": f"http://{_cell_ip(cell.cell_id)}:1800",
        "zone": cell.zone,
        "capacity": {"memory_mb": cell.memory_mb, "disk_mb": cell.disk_mb,
                     "containers": cell.containers},
        "rootfs_provider_list": providers,
    }
    if cell.placement_tags:
        line["placement_tags"] = list(cell.placement_tags)
    if cell.optional_placement_tags:
        line["optional_placement_tags"] = list(cell.optional_placement_tags)
    line["rep_url"] = f"https://{cell.cell_id}.cell.service.cf.internal:1801"
    return line


def cell_state(cell: SimCell, load: Load, rows: Iterable[core.ActualLRP],
               tasks: Iterable[SimTask], apps: Mapping[str, SimApp]) -> dict[str, Any]:
    """``cfdot cell-state`` (``rep.CellState``): what the rep reports, Go field names."""
    providers: dict[str, Any] = {p: {"type": "arbitrary"} for p in cell.rootfs_providers}
    for scheme in ("preloaded", "preloaded+layer"):
        providers[scheme] = {"set": {s: {} for s in sorted(cell.preloaded_rootfses)},
                             "type": "fixed_set"}
    lrps = []
    for row in sorted(rows, key=lambda r: (r.process_guid, r.index, r.presence)):
        if row.state not in (core.CLAIMED, core.RUNNING):
            continue
        app = apps.get(row.process_guid)
        lrps.append({
            "instance_guid": row.instance_guid, "process_guid": row.process_guid,
            "index": row.index, "domain": row.domain,
            "PlacementTags": list(app.placement_tags) if app and app.placement_tags else None,
            "VolumeDrivers": list(app.volume_drivers) if app and app.volume_drivers else None,
            "RootFs": app.rootfs if app else "", "MemoryMB": app.memory_mb if app else 0,
            "DiskMB": app.disk_mb if app else 0, "MaxPids": 0, "state": row.state})
    task_lines = [{
        "TaskGuid": t.task_guid, "Domain": t.task.domain,
        "PlacementTags": list(t.placement_tags) or None, "VolumeDrivers": list(t.volume_drivers) or None,
        "RootFs": t.rootfs, "MemoryMB": t.memory_mb, "DiskMB": t.disk_mb, "MaxPids": 0,
        "state": TASK_STATES.get(t.task.state, "Invalid"), "failed": t.task.failed,
    } for t in sorted(tasks, key=lambda t: t.task_guid) if t.task.state == core.TASK_RUNNING]
    return {
        "rep_url": f"https://{cell.cell_id}.cell.service.cf.internal:1801",
        "cell_id": cell.cell_id, "cell_index": cell.index,
        "RootFSProviders": dict(sorted(providers.items())),
        "AvailableResources": {"MemoryMB": cell.memory_mb - load.memory_mb,
                               "DiskMB": cell.disk_mb - load.disk_mb,
                               "Containers": cell.containers - load.containers},
        "TotalResources": {"MemoryMB": cell.memory_mb, "DiskMB": cell.disk_mb,
                           "Containers": cell.containers},
        "LRPs": lrps, "Tasks": task_lines, "StartingContainerCount": load.starting,
        "Zone": cell.zone, "Evacuating": cell.state == DRAINING,
        "VolumeDrivers": list(cell.volume_drivers), "PlacementTags": list(cell.placement_tags),
        "OptionalPlacementTags": list(cell.optional_placement_tags),
        "ProxyMemoryAllocationMB": cell.proxy_memory_mb,
    }


def scheduling_info(app: SimApp) -> dict[str, Any]:
    """``cfdot desired-lrp-scheduling-infos`` (no secrets: the right input for plans)."""
    line: dict[str, Any] = {
        "process_guid": app.process_guid, "domain": app.domain, "log_guid": app.process_guid,
        "annotation": "", "instances": app.instances, "memory_mb": app.memory_mb,
        "disk_mb": app.disk_mb, "rootfs": app.rootfs, "max_pids": 0, "routes": None,
        "epoch": app.epoch, "index": app.tag,
        "volume_placement": {"driver_names": list(app.volume_drivers) or None},
    }
    if app.placement_tags:
        line["placement_tags"] = list(app.placement_tags)
    return line


def actual_lrp(row: core.ActualLRP, zone_of: Mapping[str, str], origin_ns: int = 0) -> dict[str, Any]:
    """``cfdot actual-lrps`` (``models.ActualLRP``, flattened keys)."""
    running = row.state == core.RUNNING
    line: dict[str, Any] = {
        "process_guid": row.process_guid, "index": row.index, "domain": row.domain,
        "instance_guid": row.instance_guid, "cell_id": row.cell_id, "address": row.address,
        "ports": [{"container_port": c, "host_port": h, "container_tls_proxy_port": 0,
                   "host_tls_proxy_port": 0} for c, h in row.ports] or None,
        "preferred_address": "HOST" if running else "UNKNOWN", "crash_count": row.crash_count,
    }
    if row.crash_reason:
        line["crash_reason"] = row.crash_reason
    line["state"] = row.state
    if row.placement_error:
        line["placement_error"] = row.placement_error
    line.update({
        "since": ns(row.since) + origin_ns,
        "modification_tag": {"epoch": row.modification_tag_epoch, "index": row.modification_tag_index},
        "presence": row.presence, "OptionalRoutable": {"routable": running},
        "availability_zone": zone_of.get(row.cell_id, "") if row.cell_id else "",
    })
    return line


def task(sim_task: SimTask, origin_ns: int = 0) -> dict[str, Any]:
    """``cfdot tasks`` (``models.Task``: the definition's keys first, flattened)."""
    t = sim_task.task
    line: dict[str, Any] = {
        "rootfs": sim_task.rootfs, "disk_mb": sim_task.disk_mb, "memory_mb": sim_task.memory_mb,
        "cpu_weight": 0, "privileged": False, "log_source": "", "log_guid": "", "metrics_guid": "",
        "result_file": "",
    }
    if t.callback_url:
        line["completion_callback_url"] = t.callback_url
    if sim_task.placement_tags:
        line["placement_tags"] = list(sim_task.placement_tags)
    line.update({
        "max_pids": 0, "image_username": "", "image_password": "", "task_guid": t.task_guid,
        "domain": t.domain, "created_at": _at(t.created_at, origin_ns),
        "updated_at": _at(t.updated_at, origin_ns),
        "first_completed_at": _at(t.first_completed_at, origin_ns), "state": TASK_STATES.get(t.state, "Invalid"),
        "cell_id": t.cell_id, "result": t.result, "failed": t.failed,
        "failure_reason": t.failure_reason, "rejection_count": t.rejection_count,
        "rejection_reason": t.rejection_reason,
    })
    return line


#: The file ``manage.py diego dump --dir`` writes for each cfdot command (plans.md 3.3).
COMMAND_FILES = {
    "cells": "cells.jsonl", "cell-states": "cell-states.jsonl",
    "desired-lrp-scheduling-infos": "desired-lrp-scheduling-infos.jsonl",
    "actual-lrps": "actual-lrps.jsonl", "tasks": "tasks.jsonl", "domains": "domains.jsonl",
}


def dump_lines(view: ClusterView, *, events: bool = True) -> Iterator[str]:
    """The whole cluster, one compact JSON value per line (see the module docstring)."""
    for _command, line in dump_records(view):
        yield line
    if events:
        for at, type_, key in view.events:
            if type_ in BBS_EVENTS:
                yield _line({"event": type_, "at": at, "key": key})


def dump_records(view: ClusterView) -> Iterator[tuple[str, str]]:
    """(cfdot command, line) of every line of the cluster, command by command."""
    apps = {a.process_guid: a for a in view.apps}
    zone_of = {c.cell_id: c.zone for c in view.cells}
    by_cell: dict[str, list[core.ActualLRP]] = {}
    for row in view.rows:
        if row.cell_id:
            by_cell.setdefault(row.cell_id, []).append(row)
    tasks_on: dict[str, list[SimTask]] = {}
    for t in view.tasks:
        if t.task.cell_id:
            tasks_on.setdefault(t.task.cell_id, []).append(t)
    cells = sorted(view.cells, key=lambda c: c.cell_id)
    for cell in cells:
        if cell.has_presence(view.now):
            yield "cells", _line(cell_presence(cell))
    for cell in cells:
        if not cell.silent and cell.has_presence(view.now):
            yield "cell-states", _line(cell_state(cell, view.loads.get(cell.cell_id, Load()),
                                                  by_cell.get(cell.cell_id, ()),
                                                  tasks_on.get(cell.cell_id, ()), apps))
    for app in sorted(view.apps, key=lambda a: a.process_guid):
        yield "desired-lrp-scheduling-infos", _line(scheduling_info(app))
    for row in sorted(view.rows, key=lambda r: (r.process_guid, r.index, r.presence)):
        yield "actual-lrps", _line(actual_lrp(row, zone_of, view.origin_ns))
    for sim_task in sorted(view.tasks, key=lambda t: t.task_guid):
        yield "tasks", _line(task(sim_task, view.origin_ns))
    for name in sorted(n for n, expiry in view.domains.items() if core.domain_is_fresh(expiry, view.now)):
        yield "domains", json.dumps(name)


def _at(seconds: float | None, origin_ns: int) -> int:
    """A time as the BBS prints it; never set is 0 (cfdot ``first_completed_at``)."""
    return 0 if seconds is None else ns(seconds) + origin_ns


def _line(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _cell_ip(cell_id: str) -> str:
    h = zlib.crc32(cell_id.encode())
    return f"10.{h % 250}.{(h >> 8) % 250}.{(h >> 16) % 250 + 2}"

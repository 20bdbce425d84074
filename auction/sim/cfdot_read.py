"""Reading a real Diego foundation from what ``cfdot`` prints (plans.md 3).

``read_capture`` takes the files of one capture (any subset of ``cells``,
``cell-states``, ``desired-lrps`` or ``desired-lrp-scheduling-infos``, ``actual-lrps``
(or the deprecated ``actual-lrp-groups``), ``tasks``, ``domains``; in every shape a
person has them, split into values by ``auction.sim.cfdot_split``: JSON Lines, jq-pretty,
an array, a transcript, gzip) and returns the cluster as a ``ClusterView``, the same
value ``DbStore().cluster_view()`` builds from the live database. Every value's kind is
told by its keys, never by the file's name (but for a rep's ``/state`` from before 2017,
which names no cell), so one stream of ``manage.py diego dump`` reads as well as seven
files.

It keeps only what the simulator has (plans.md 3.1): env, actions, routes, image
credentials and volume mount configs are never read, so secrets cannot be stored or
shown. Every pitfall the cfdot reference lists is accepted; anything else is refused with one line,
``file:line: field: message`` (``CaptureError``). Where the capture lacks something the
simulator needs, ``ClusterView.assumptions`` says what was assumed instead.

Times: cfdot prints UNIX nanoseconds (about 1.7e18, beyond a double's exact range). The
simulator's clock counts seconds from an origin, so the capture's newest whole second
becomes the origin (``ClusterView.origin_ns``) and every time is kept relative to it;
``auction.sim.cfdot`` adds the origin back when it prints. Nanoseconds survive exactly
for any time within 2**23 s (97 days) of the capture (a double's 53 bits); older ones to
about a nanosecond or two.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO, Any

from auction.bbs import types as core
from auction.sim.cfdot import NS, ClusterView
from auction.sim.cfdot_fields import CaptureError, Line
from auction.sim.cfdot_lines import (
    DEFAULT_ZONE,
    START_DELAY_S,
    TASK_RUN_S,
    TASK_STATE_CORE,
    TASK_STATES,
    UNIX_NS_FLOOR,
    Capture,
    kind_of,
    take,
    unstorable,
    volume_drivers,
)
from auction.sim.cfdot_split import CAPTURE_LIMIT, Budget, values_of
from auction.sim.loads import cell_loads
from auction.sim.model import DRAINING, FAILED, SimApp, SimCell, SimTask

__all__ = ["CaptureError", "kind_of", "read_capture", "summary"]


def read_capture(files: Iterable[tuple[str, bytes | IO[bytes] | IO[str]]], *,
                 limit_bytes: int = CAPTURE_LIMIT) -> ClusterView:
    """The cluster of one capture (see the module docstring); raises ``CaptureError``.

    ``limit_bytes`` bounds what the files may hold in all once decompressed (a door's
    upload limit); the lines skipped as not JSON are the view's ``warnings``."""
    capture = Capture()
    warnings: list[str] = []
    budget = Budget(limit_bytes)
    for name, content in files:
        for value in values_of(name, content, warnings, budget):
            data, number = value.data, value.number
            if value.escaped:  # only an escape can carry a NUL or a lone surrogate
                bad = unstorable(data)
                if bad:
                    raise CaptureError(f"{name}:{number}: {bad}: a NUL or an unpaired surrogate "
                                       "cannot be stored")
            take(capture, Line(name, number, data) if isinstance(data, dict) else
                 Line(name, number, {"": data}), data)
    view = _build(capture)
    view.warnings = tuple(warnings)
    return view


# -- from lines to a cluster -------------------------------------------------------------

def _stack(name: str) -> str:
    """plans.md 3.1: ``cflinuxfs4@1.212.0`` matches ``preloaded:cflinuxfs4``."""
    return name.split("@", 1)[0]


def _dedupe(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for n in names if n))


def _build(capture: Capture) -> ClusterView:
    assumptions: list[str] = []
    newest = max(capture.timestamps, default=0)
    # The newest whole second at or before the newest time: everything near the capture's
    # instant keeps its nanoseconds exactly; an unset time (0) comes back as 0.
    origin = (newest // NS) * NS if newest >= UNIX_NS_FLOOR else 0

    def seconds(value: int) -> float:
        return (value - origin) / NS

    now = seconds(newest)
    cells = _cells(capture, now, assumptions)
    apps = _apps(capture, assumptions)
    sizes = {a.process_guid: (a.memory_mb, a.disk_mb) for a in apps}
    rows = _rows(capture, seconds, now, {c.cell_id for c in cells})
    tasks = _tasks(capture, seconds, now)
    domains = _domains(capture, apps, tasks, assumptions)
    callbacks = sum(1 for line in capture.tasks.values() if line.text("completion_callback_url"))
    if callbacks:
        assumptions.append(f"{callbacks} tasks' completion callbacks dropped: a simulation never "
                           "calls a real foundation")
    loads = cell_loads([c.cell_id for c in cells], {c.cell_id: c.proxy_memory_mb for c in cells},
                       ((r.cell_id, r.process_guid, r.state) for r in rows), sizes,
                       ((t.task.cell_id, t.task_guid, t.memory_mb, t.disk_mb) for t in tasks
                        if t.task.state == core.TASK_RUNNING))
    orphans = sorted({r.process_guid for r in rows} - set(sizes))
    if orphans:
        assumptions.append(f"{len(orphans)} process guids have actual LRPs but no desired LRP "
                           f"(e.g. {orphans[0]}): their instances reserve no memory or disk")
    return ClusterView(now=now, cells=cells, loads=loads, apps=apps, rows=rows, tasks=tasks,
                       domains=domains, events=(), assumptions=tuple(assumptions), origin_ns=origin)


def _cells(capture: Capture, now: float, assumptions: list[str]) -> list[SimCell]:
    if not capture.states and capture.cells:
        assumptions.append("no cell-states: free resources computed from the actual LRPs, "
                           "no cell evacuating, BOSH indices in cell id order")
    ids = list(capture.cells) + [c for c in capture.states if c not in capture.cells]
    silent = [c for c in capture.cells if capture.states and c not in capture.states]
    if silent:
        assumptions.append(f"{len(silent)} cells have a presence but no cell-state (their rep did "
                           f"not answer, plans.md 3.2; e.g. {silent[0]}): taken as failed")
    by_id_order = {c: i for i, c in enumerate(sorted(ids))}
    zoneless = 0
    cells = []
    for cell_id in ids:
        presence = capture.cells.get(cell_id)
        state = capture.states.get(cell_id)
        p = presence.data if presence else {}
        s = state.data if state else {}
        capacity = p.get("capacity") or {}
        total = s.get("TotalResources") or {}
        zone = (p.get("zone") or s.get("Zone") or "")
        if not zone:
            zoneless += 1
            zone = DEFAULT_ZONE
        stacks: tuple[str, ...]
        schemes: tuple[str, ...]
        if presence is not None:
            providers = p.get("rootfs_provider_list") or []
            stacks = _dedupe(_stack(s_) for pr in providers if pr["name"] in ("preloaded", "preloaded+layer")
                             for s_ in pr.get("properties") or ())
            schemes = _dedupe(pr["name"] for pr in providers if pr["name"] not in ("preloaded", "preloaded+layer"))
        else:
            rootfs = s.get("RootFSProviders") or {}
            stacks = _dedupe(_stack(n) for k in ("preloaded", "preloaded+layer")
                             for n in sorted((rootfs.get(k) or {}).get("set") or {}))
            schemes = _dedupe(k for k in rootfs if k not in ("preloaded", "preloaded+layer"))
        draining = bool(s.get("Evacuating"))
        memory = int(capacity.get("memory_mb") or total.get("MemoryMB") or 0)
        disk = int(capacity.get("disk_mb") or total.get("DiskMB") or 0)
        containers = int(capacity.get("containers") or total.get("Containers") or 0)
        for key, value in (("memory_mb", memory), ("disk_mb", disk), ("containers", containers)):
            if value < 1:
                where = presence or state
                assert where is not None
                raise where.fail(f"capacity.{key}", f"must be at least 1, got {value} (a cell needs "
                                 "its total capacity, from cells or cell-states)")
        cells.append(SimCell(
            cell_id=cell_id, zone=zone,
            index=int(s["cell_index"]) if s.get("cell_index") is not None else by_id_order[cell_id],
            memory_mb=memory, disk_mb=disk, containers=containers,
            preloaded_rootfses=stacks, rootfs_providers=schemes,
            volume_drivers=tuple(s.get("VolumeDrivers") or ()),
            placement_tags=tuple(p.get("placement_tags") or s.get("PlacementTags") or ()),
            optional_placement_tags=tuple(p.get("optional_placement_tags")
                                          or s.get("OptionalPlacementTags") or ()),
            proxy_memory_mb=int(s.get("ProxyMemoryAllocationMB") or 0),
            state=FAILED if cell_id in silent else (DRAINING if draining else "healthy"),
            evacuating_since=now if draining else None,
            evacuation_synced_at=now if draining else None))
    if zoneless:
        assumptions.append(f'{zoneless} cells have no zone: zone "{DEFAULT_ZONE}"')
    return cells


def _apps(capture: Capture, assumptions: list[str]) -> list[SimApp]:
    apps = []
    for guid in list(capture.infos) + [g for g in capture.desired if g not in capture.infos]:
        info = capture.infos.get(guid)
        full = capture.desired.get(guid)
        line = info or full
        assert line is not None
        d = line.data
        if info is not None:
            epoch, tag = info.text("epoch"), info.integer("index")
            drivers = tuple(((d.get("volume_placement") or {}).get("driver_names")) or ())
        else:
            mod = d.get("modification_tag") or {}
            epoch, tag = str(mod.get("epoch") or ""), int(mod.get("index") or 0)
            drivers = volume_drivers(line)
        ports = tuple(full.data.get("ports") or ()) if full is not None else ()
        apps.append(SimApp(
            process_guid=guid, domain=line.text("domain"), instances=line.integer("instances"),
            memory_mb=line.integer("memory_mb"), disk_mb=line.integer("disk_mb"),
            rootfs=line.text("rootfs"), placement_tags=line.strings("placement_tags"),
            volume_drivers=drivers, ports=ports, start_delay_s=START_DELAY_S,
            epoch=epoch, tag=tag))
    if apps:
        assumptions.append(f"every app starts {START_DELAY_S:g} s after its claim and never crashes "
                           "by itself (a capture has no start times or crash rates)")
    return apps


def _rows(capture: Capture, seconds: Any, now: float, cell_ids: set[str]) -> list[core.ActualLRP]:
    rows = list(capture.rows.values())
    for row in rows:
        row.since = seconds(int(row.since))
        if row.state == core.CLAIMED:
            # A CLAIMED instance starts as the simulated rep starts one (module constants).
            row.ready_at = now + START_DELAY_S
    return rows


def _tasks(capture: Capture, seconds: Any, now: float) -> list[SimTask]:
    tasks = []
    for guid, line in capture.tasks.items():
        d = line.data
        state = TASK_STATE_CORE[line.enum("state", TASK_STATES)]
        first = int(d.get("first_completed_at") or 0)
        created, updated = int(d.get("created_at") or 0), int(d.get("updated_at") or 0)
        task = core.Task(
            task_guid=guid, state=state, domain=line.text("domain"),
            cell_id=line.text("cell_id") if state == core.TASK_RUNNING else "",
            created_at=seconds(created), updated_at=seconds(updated),
            first_completed_at=seconds(first) if first else None, failed=line.flag("failed"),
            failure_reason=line.text("failure_reason"), result=line.text("result"),
            # Never kept: a simulated completion must not POST to a real foundation's
            # Cloud Controller (plans.md 3.2).
            callback_url="",
            rejection_count=line.integer("rejection_count"),
            rejection_reason=line.text("rejection_reason"),
            finishes_at=now + TASK_RUN_S if state == core.TASK_RUNNING else None)
        tasks.append(SimTask(task, memory_mb=line.integer("memory_mb"), disk_mb=line.integer("disk_mb"),
                             rootfs=line.text("rootfs"), placement_tags=line.strings("placement_tags"),
                             volume_drivers=volume_drivers(line), duration_s=TASK_RUN_S))
    return tasks


def _domains(capture: Capture, apps: list[SimApp], tasks: list[SimTask],
             assumptions: list[str]) -> dict[str, float | None]:
    if capture.domains is None:
        named = _dedupe([a.domain for a in apps] + [t.task.domain for t in tasks])
        if named:
            assumptions.append("no domains: every domain of a desired LRP or task is fresh")
        return dict.fromkeys(named)
    # cfdot prints no TTL (the cfdot reference): a listed domain stays fresh until bumped or expired.
    return dict.fromkeys(capture.domains)


def summary(view: ClusterView) -> dict[str, int]:
    """The counts an operator checks after an import."""
    return {"cells": len(view.cells), "zones": len({c.zone for c in view.cells}),
            "desired_lrps": len(view.apps), "actual_lrps": len(view.rows),
            "instances_desired": sum(a.instances for a in view.apps),
            "tasks": len(view.tasks), "domains": len(view.domains)}

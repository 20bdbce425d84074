"""What each cell's rep would report to the auctioneer (auction.md vocabulary).

The rep's reserved resources are its containers: LRP instances CLAIMED or RUNNING on
it (any presence: an EVACUATING copy or a SUSPECT still holds its container) with their
proxy overhead, and RUNNING tasks. ``available`` is total minus that, never derived
from anything the auction itself wrote earlier.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from auction.engine import CellState, Resources, container_memory
from auction.models import ActualLRP, Cell, DesiredLRP, Task


@dataclass(slots=True)
class CellLoad:
    memory_mb: int = 0
    disk_mb: int = 0
    containers: int = 0
    starting: int = 0
    lrps: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)


def cell_loads(cell_ids: list[str], proxy_by_cell: dict[str, int]) -> dict[str, CellLoad]:
    sizes = {g: (m, d) for g, m, d in DesiredLRP.objects.values_list("process_guid", "memory_mb", "disk_mb")}
    loads: dict[str, CellLoad] = defaultdict(CellLoad)
    rows = ActualLRP.objects.filter(
        cell_id__in=cell_ids, state__in=[ActualLRP.State.CLAIMED, ActualLRP.State.RUNNING]
    ).values_list("cell_id", "desired_id", "state")
    for cell_id, guid, state in rows:
        memory, disk = sizes.get(guid, (0, 0))
        load = loads[cell_id]
        load.memory_mb += container_memory(memory, proxy_by_cell.get(cell_id, 0))
        load.disk_mb += disk
        load.containers += 1
        load.lrps.append(guid)
        if state == ActualLRP.State.CLAIMED:
            load.starting += 1
    tasks = Task.objects.filter(cell_id__in=cell_ids, state=Task.State.RUNNING).values_list(
        "cell_id", "task_guid", "memory_mb", "disk_mb")
    for cell_id, guid, memory, disk in tasks:
        load = loads[cell_id]
        load.memory_mb += memory
        load.disk_mb += disk
        load.containers += 1
        load.tasks.append(guid)
    return loads


def free_resources(cell: Cell, load: CellLoad) -> Resources:
    return Resources(cell.memory_mb - load.memory_mb, cell.disk_mb - load.disk_mb,
                     cell.containers - load.containers)


def answering_cells(now: float) -> list[Cell]:
    """Cells that answer the state fetch: alive, not failed, not evacuating (auction.md 1.3)."""
    return [
        cell for cell in Cell.objects.select_related("zone").order_by("zone__name", "index", "cell_id")
        if cell.state == Cell.State.HEALTHY and cell.has_presence(now)
    ]


def cell_states(cells: list[Cell]) -> list[CellState]:
    loads = cell_loads([c.cell_id for c in cells], {c.cell_id: c.proxy_memory_mb for c in cells})
    states = []
    for cell in cells:
        load = loads.get(cell.cell_id, CellLoad())
        states.append(CellState(
            cell_id=cell.cell_id, zone=cell.zone.name, index=cell.index,
            total=Resources(cell.memory_mb, cell.disk_mb, cell.containers),
            available=free_resources(cell, load),
            starting_containers=load.starting, lrps=tuple(load.lrps), tasks=tuple(load.tasks),
            preloaded_rootfses=tuple(cell.preloaded_rootfses),
            rootfs_providers=tuple(cell.rootfs_providers),
            volume_drivers=tuple(cell.volume_drivers), placement_tags=tuple(cell.placement_tags),
            optional_placement_tags=tuple(cell.optional_placement_tags),
            proxy_memory_mb=cell.proxy_memory_mb,
        ))
    return states

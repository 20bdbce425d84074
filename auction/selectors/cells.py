"""What each cell's rep reports (auction.md vocabulary), read from the database.

The rule is ``auction.sim.loads`` (one for both stores): the rep's reserved resources
are its CLAIMED or RUNNING instances (any presence) with their proxy overhead and its
RUNNING tasks; ``available`` is the total minus that.
"""

from __future__ import annotations

from collections.abc import Mapping

from auction.engine import CellState, Resources
from auction.models import ActualLRP, Cell, DesiredLRP, Task
from auction.sim import loads as rule
from auction.sim.model import Load, SimCell

CellLoad = Load


def cell_loads(cell_ids: list[str], proxy_by_cell: Mapping[str, int]) -> dict[str, Load]:
    """Every listed cell's load, from two queries (``auction.sim.loads.cell_loads``)."""
    sizes = {g: (m, d) for g, m, d in
             DesiredLRP.objects.values_list("process_guid", "memory_mb", "disk_mb")}
    lrps = ActualLRP.objects.filter(
        cell_id__in=cell_ids, state__in=[ActualLRP.State.CLAIMED, ActualLRP.State.RUNNING],
    ).values_list("cell_id", "desired_id", "state")
    tasks = Task.objects.filter(cell_id__in=cell_ids, state=Task.State.RUNNING).values_list(
        "cell_id", "task_guid", "memory_mb", "disk_mb")
    return rule.cell_loads(cell_ids, proxy_by_cell, lrps, sizes, tasks)


def sim_cell(cell: Cell) -> SimCell:
    """A cell model as the rules see it."""
    return SimCell(
        cell_id=cell.cell_id, zone=cell.zone.name, index=cell.index, memory_mb=cell.memory_mb,
        disk_mb=cell.disk_mb, containers=cell.containers,
        preloaded_rootfses=tuple(cell.preloaded_rootfses),
        rootfs_providers=tuple(cell.rootfs_providers), volume_drivers=tuple(cell.volume_drivers),
        placement_tags=tuple(cell.placement_tags),
        optional_placement_tags=tuple(cell.optional_placement_tags),
        proxy_memory_mb=cell.proxy_memory_mb, state=cell.state,
        presence_lost_at=cell.presence_lost_at, evacuating_since=cell.evacuating_since,
        evacuation_synced_at=cell.evacuation_synced_at)


def free_resources(cell: Cell, load: Load) -> Resources:
    return Resources(cell.memory_mb - load.memory_mb, cell.disk_mb - load.disk_mb,
                     cell.containers - load.containers)


def answering_cells(now: float) -> list[Cell]:
    """Cells that answer the state fetch, in the auction's input order (auction.md 1.3)."""
    cells = {c.cell_id: c for c in Cell.objects.select_related("zone")}
    return [cells[c.cell_id] for c in rule.answering((sim_cell(c) for c in cells.values()), now)]


def cell_states(cells: list[Cell]) -> list[CellState]:
    loads = cell_loads([c.cell_id for c in cells], {c.cell_id: c.proxy_memory_mb for c in cells})
    return [rule.cell_state(sim_cell(cell), loads.get(cell.cell_id, Load())) for cell in cells]

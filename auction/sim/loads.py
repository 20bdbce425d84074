"""Cell bookkeeping: what each rep has reserved, and the state it reports to an auction.

One rule for both stores: a rep reserves a container for every CLAIMED or RUNNING
instance on it, whatever its presence, taking the app's memory plus the proxy overhead
(``container_memory``: a 0 MB LRP takes 0 MB, auction.md 7) and disk; and one for every
RUNNING task. ``available`` is the total minus that (auction.md vocabulary); CLAIMED
instances are the ``starting_containers``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import chain, repeat
from operator import attrgetter

from auction.bbs import types as core
from auction.engine import CellState, Resources, container_memory
from auction.sim.model import Load, SimCell

HOLDING_STATES = frozenset({core.CLAIMED, core.RUNNING})


def holds_container(state: str, cell_id: str) -> bool:
    """An instance occupies its cell's container while CLAIMED or RUNNING."""
    return bool(cell_id) and state in HOLDING_STATES


def add_lrp(load: Load, process_guid: str, state: str, memory_mb: int, disk_mb: int,
            proxy_memory_mb: int, sign: int = 1) -> None:
    """Account one CLAIMED/RUNNING instance on its cell (``sign`` -1 takes it back)."""
    load.memory_mb += sign * container_memory(memory_mb, proxy_memory_mb)
    load.disk_mb += sign * disk_mb
    load.containers += sign
    if state == core.CLAIMED:
        load.starting += sign
    left = load.lrps.get(process_guid, 0) + sign
    if left > 0:
        load.lrps[process_guid] = left
    else:
        load.lrps.pop(process_guid, None)


def restate_lrp(load: Load, process_guid: str, before: str, after: str) -> None:
    """An instance that keeps its container on its cell changes state (CLAIMED and
    RUNNING): ``add_lrp`` of the one taken back then of the other, netted (an app's
    last instance on the cell leaves the count and comes back last, as there)."""
    load.starting += (after == core.CLAIMED) - (before == core.CLAIMED)
    if load.lrps.get(process_guid, 0) <= 1:
        load.lrps.pop(process_guid, None)
        load.lrps[process_guid] = 1


def add_task(load: Load, task_guid: str, memory_mb: int, disk_mb: int) -> None:
    """Account one RUNNING task on its cell."""
    load.memory_mb += memory_mb
    load.disk_mb += disk_mb
    load.containers += 1
    load.tasks.append(task_guid)


def cell_loads(cells: Iterable[str], proxy: Mapping[str, int],
               lrps: Iterable[tuple[str, str, str]], sizes: Mapping[str, tuple[int, int]],
               tasks: Iterable[tuple[str, str, int, int]]) -> dict[str, Load]:
    """Every cell's load from (cell_id, process_guid, state) of its CLAIMED/RUNNING
    instances and (cell_id, task_guid, memory, disk) of its RUNNING tasks."""
    loads = {cell_id: Load() for cell_id in cells}
    for cell_id, guid, state in lrps:
        load = loads.get(cell_id)
        if load is None or not holds_container(state, cell_id):
            continue
        memory, disk = sizes.get(guid, (0, 0))
        add_lrp(load, guid, state, memory, disk, proxy.get(cell_id, 0))
    for cell_id, guid, memory, disk in tasks:
        load = loads.get(cell_id)
        if load is not None:
            add_task(load, guid, memory, disk)
    return loads


def free_resources(cell: SimCell, load: Load) -> Resources:
    return Resources(cell.memory_mb - load.memory_mb, cell.disk_mb - load.disk_mb,
                     cell.containers - load.containers)


def cell_state(cell: SimCell, load: Load, cached_blob_ids: Iterable[str] = ()) -> CellState:
    """What the rep answers to the auctioneer's state fetch (auction.md 1.3); it shares
    ``load.lrps`` as its counted instances, so the load must not change afterwards."""
    return CellState(
        cell_id=cell.cell_id, zone=cell.zone, index=cell.index,
        total=Resources(cell.memory_mb, cell.disk_mb, cell.containers),
        available=free_resources(cell, load),
        starting_containers=load.starting,
        lrps=tuple(chain.from_iterable(map(repeat, load.lrps, load.lrps.values()))),
        lrp_counts=load.lrps, tasks=tuple(load.tasks),
        preloaded_rootfses=tuple(cell.preloaded_rootfses),
        rootfs_providers=tuple(cell.rootfs_providers),
        volume_drivers=tuple(cell.volume_drivers), placement_tags=tuple(cell.placement_tags),
        optional_placement_tags=tuple(cell.optional_placement_tags),
        proxy_memory_mb=cell.proxy_memory_mb,
        cached_blob_ids=tuple(sorted(cached_blob_ids)),
    )


def answering(cells: Iterable[SimCell], now: float) -> list[SimCell]:
    """The cells that answer the state fetch, in the auction's input order: by zone,
    index and id (auction.md 1.3; the order decides exact ties, 4.6)."""
    return sorted((c for c in cells if c.answers(now)), key=FETCH_ORDER)


FETCH_ORDER = attrgetter("zone", "index", "cell_id")

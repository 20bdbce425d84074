"""Plain data of the auction: cell states, work items, configuration, results.

Everything here is immutable input or plain output; the mutable in-auction copy of the
cells lives in ``state.py``. Field names follow ``auction.md`` (vocabulary) and the case
format of ``conformance.md`` section 1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

#: Default process-level constants (auction.md 4.4, conformance.md 1).
DEFAULT_STARTING_CONTAINER_WEIGHT = 0.25
DEFAULT_LOCALITY_OFFSET = 1000
DEFAULT_ROOTFS = "preloaded:cflinuxfs4"
DEFAULT_OBJECTIVE = (
    "(ai.instance_number + ai.app_id + r.avail_zone_number) mod azs + 1"
    " + alpha * count(ai.app_source_blob_id, r.cached_blob_ids)"
    " + beta * (r.available_memory_mb / r.total_memory_mb)"
    " + gamma * (r.available_disk_mb / r.total_disk_mb)"
    " + delta * (1 - count(ai.app_id, r.running_app_ids) / ai.total_instances)"
)

def slot_writers(cls: type) -> tuple[Callable[[Any, Any], None], ...]:
    """Each field's slot writer of a frozen slotted dataclass, in field order.

    The ``__init__`` a frozen dataclass is given writes each field through
    ``object.__setattr__``; one written with these takes about half the time. A run at
    the target size makes a million events and log entries, so the hottest records
    (``LRPWork``, the BBS's ``Event`` and ``RowUpdate``, the world's ``LogEntry``) spell
    their ``__init__`` out with them: same fields, same defaults, still frozen.
    """
    return tuple(getattr(cls, f.name).__set__ for f in fields(cls))


Strategy = Literal["diego", "dea", "objective", "random"]
STRATEGIES: tuple[str, ...] = ("diego", "dea", "objective", "random")


@dataclass(frozen=True, slots=True)
class Resources:
    """Memory, disk and container slots (``cloudfoundry/rep: resources.go``)."""

    memory_mb: int
    disk_mb: int
    containers: int


@dataclass(frozen=True, slots=True)
class CellState:
    """What one cell reports when the auctioneer fetches its state (auction.md, vocabulary).

    ``lrps`` holds one process guid per LRP instance on the cell, whatever its state;
    ``tasks`` the task guids. ``cached_blob_ids`` only feeds the ``objective`` strategy
    (auction.md 8.2): process guids that ever ran here, besides the current ``lrps``.
    """

    cell_id: str
    zone: str
    index: int
    total: Resources
    available: Resources
    starting_containers: int = 0
    lrps: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    preloaded_rootfses: tuple[str, ...] = ("cflinuxfs4",)
    rootfs_providers: tuple[str, ...] = ("docker",)
    volume_drivers: tuple[str, ...] = ()
    placement_tags: tuple[str, ...] = ()
    optional_placement_tags: tuple[str, ...] = ()
    proxy_memory_mb: int = 0
    cached_blob_ids: tuple[str, ...] = ()
    #: ``lrps`` counted (process guid -> instances), when the caller keeps that count
    #: anyway: the auction then reads it instead of walking every instance of every cell
    #: per auction (a 100,000-instance world runs thousands of auctions). It must equal
    #: ``Counter(lrps)``; the auction only reads it. ``None``: counted from ``lrps``.
    lrp_counts: Mapping[str, int] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class LRPWork:
    """One LRP instance to place; identifier ``<process_guid>.<index>``.

    ``total_instances`` is the DesiredLRP's instance count when the batch forms (only the
    ``objective`` strategy reads it, auction.md 8.2). ``ref`` is opaque to the engine: the
    caller may hang anything on it (a database id) to map results back.
    """

    process_guid: str
    index: int
    memory_mb: int
    disk_mb: int
    rootfs: str = DEFAULT_ROOTFS
    volume_drivers: tuple[str, ...] = ()
    placement_tags: tuple[str, ...] = ()
    total_instances: int = 0
    ref: Any = field(default=None, compare=False)

    def __init__(self, process_guid: str, index: int, memory_mb: int, disk_mb: int,
                 rootfs: str = DEFAULT_ROOTFS, volume_drivers: tuple[str, ...] = (),
                 placement_tags: tuple[str, ...] = (), total_instances: int = 0,
                 ref: Any = None) -> None:
        # The slots written directly (``slot_writers``): one per instance auctioned.
        _set_process_guid(self, process_guid)
        _set_index(self, index)
        _set_memory_mb(self, memory_mb)
        _set_disk_mb(self, disk_mb)
        _set_rootfs(self, rootfs)
        _set_volume_drivers(self, volume_drivers)
        _set_placement_tags(self, placement_tags)
        _set_total_instances(self, total_instances)
        _set_ref(self, ref)

    @property
    def identifier(self) -> str:
        return f"{self.process_guid}.{self.index}"


(_set_process_guid, _set_index, _set_memory_mb, _set_disk_mb, _set_rootfs, _set_volume_drivers,
 _set_placement_tags, _set_total_instances, _set_ref) = slot_writers(LRPWork)


@dataclass(frozen=True, slots=True)
class TaskWork:
    """One task to place; its identifier is its ``task_guid``."""

    task_guid: str
    memory_mb: int
    disk_mb: int
    rootfs: str = DEFAULT_ROOTFS
    volume_drivers: tuple[str, ...] = ()
    placement_tags: tuple[str, ...] = ()
    ref: Any = field(default=None, compare=False)

    @property
    def identifier(self) -> str:
        return self.task_guid


WorkItem = LRPWork | TaskWork


@dataclass(frozen=True, slots=True)
class ObjectiveConfig:
    """The ``objective`` strategy's function and weights (auction.md 8.2)."""

    expression: str = DEFAULT_OBJECTIVE
    alpha: float = 0.0
    beta: float = 1.0 / 3.0
    gamma: float = 1.0 / 3.0
    delta: float = 1.0 / 3.0


@dataclass(frozen=True, slots=True)
class AuctionConfig:
    """Auctioneer settings (auction.md 4.1, 4.4, 8)."""

    starting_container_weight: float = DEFAULT_STARTING_CONTAINER_WEIGHT
    bin_pack_first_fit_weight: float = 0.0
    starting_container_count_maximum: int = 0
    locality_offset: int = DEFAULT_LOCALITY_OFFSET
    placement_strategy: str = "diego"
    seed: int = 0
    objective: ObjectiveConfig = field(default_factory=ObjectiveConfig)
    #: auction.md 2.1: reproduce the real Diego binary's order quirks (tasks first in an
    #: all-index-0 batch, Go's unstable sort of the batch and of each zone's cells).
    go_compat: bool = False


@dataclass(slots=True)
class AuctionResult:
    """The outcome of one auction (scheduling, and after ``commit`` the commit too).

    ``order`` lists every batch item's identifier in the order the auction considered it
    (auction.md 10). ``placements`` and ``failures`` hold each of them exactly once.
    ``scores`` holds the winning score of every placed item (``None`` for ``dea``, which
    computes none). ``won`` maps a cell id to the work it won, in the order won: what the
    commit step sends to that cell. ``explanations`` is filled only on request.
    """

    order: list[str]
    items: list[WorkItem]
    placements: dict[str, str]
    failures: dict[str, str]
    scores: dict[str, float | None]
    won: dict[str, list[WorkItem]]
    strategy: str = "diego"
    seed: int = 0
    go_compat: bool = False
    explanations: list[Any] | None = None
    committed: bool = False

    def to_case_output(self) -> dict[str, Any]:
        """The JSON shape of ``conformance.md`` section 1, in batch order."""
        return {
            "order": list(self.order),
            "placements": {i: self.placements[i] for i in self.order if i in self.placements},
            "failures": {i: self.failures[i] for i in self.order if i in self.failures},
            "scores": {i: self.scores[i] for i in self.order if i in self.scores},
        }

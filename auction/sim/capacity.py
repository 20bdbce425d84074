"""How many more of a work shape fit (plans.md 2.1), decided by the auction's own rules.

The question is the auction's: one new app of the shape with enough instances, placed on
the base as it is now, counted until the first failure. Identical items placed one at a
time stop only when no compatible cell fits one more, whatever order the strategy picks
cells in: so each compatible cell takes as many as the scheduler's fit check allows
(``m + proxy`` must fit, ``m`` is reserved, auction.md 3 and 4.6), and its rep accepts
what ``commit`` accepts (auction.md 7.3). The count per cell is those two rules run on
the cell; the error that stops the app is the real auction (``run_auction``) of one more
item on the cells so filled, or the empty error of a commit refusal when a commit refuses
some of what the scheduler gives a cell (the next one is then placed and refused). tests/plans/test_capacity.py checks the count against the
real auction of every instance on small bases.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from auction.bbs.validation import bbs_message, task_errors
from auction.engine import (
    AuctionConfig,
    CellState,
    LRPWork,
    Resources,
    TaskWork,
    commit,
    run_auction,
)
from auction.engine.filters import failed_filter
from auction.sim.chaos import ChaosError, desired_app
from auction.sim.loads import answering, cell_state
from auction.sim.model import Load, SimCell

PROBE = "capacity-probe"
KINDS = ("lrp", "task")


class CapacityError(ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class Shape:
    memory_mb: int
    disk_mb: int
    rootfs: str = "preloaded:cflinuxfs4"
    placement_tags: tuple[str, ...] = ()
    volume_drivers: tuple[str, ...] = ()
    kind: str = "lrp"

    def item(self, n: int) -> LRPWork | TaskWork:
        if self.kind == "task":
            return TaskWork(f"{PROBE}-{n}", self.memory_mb, self.disk_mb, self.rootfs,
                            self.volume_drivers, self.placement_tags)
        return LRPWork(PROBE, n, self.memory_mb, self.disk_mb, self.rootfs, self.volume_drivers,
                       self.placement_tags)


def work_shape(raw: Mapping[str, Any]) -> Shape:
    """A shape from a query or a form, checked with the BBS's messages for a DesiredLRP
    (or a task's, ``kind=task``)."""
    unknown = sorted(set(raw) - {"memory_mb", "disk_mb", "rootfs", "placement_tags",
                                 "volume_drivers", "kind", "base"})
    if unknown:
        raise CapacityError(f"Invalid field: {unknown[0]}")
    kind = raw.get("kind") or "lrp"
    if kind not in KINDS:
        raise CapacityError("Invalid field: kind")
    values: dict[str, Any] = {}
    for name in ("memory_mb", "disk_mb"):
        value = raw.get(name, 0)
        if isinstance(value, str):
            text = value.strip() or "0"
            if not (text.isascii() and text.isdigit() and len(text) <= 10):
                raise CapacityError(f"Invalid field: {name}")
            value = int(text)
        values[name] = value
    rootfs = raw.get("rootfs") or "preloaded:cflinuxfs4"
    lists = {name: _words(raw.get(name)) for name in ("placement_tags", "volume_drivers")}
    if kind == "task":
        errors = task_errors(task_guid=PROBE, domain="capacity", rootfs=rootfs, **values)
        if errors:
            raise CapacityError(bbs_message(errors))
    else:
        try:
            desired_app({"process_guid": PROBE, "instances": 1, "rootfs": rootfs, **values})
        except ChaosError as exc:
            raise CapacityError(exc.message) from None
    return Shape(values["memory_mb"], values["disk_mb"], str(rootfs), lists["placement_tags"],
                 lists["volume_drivers"], kind)


def _words(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v for v in value.replace(",", " ").split() if v)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise CapacityError("Invalid field: placement_tags")


def _scheduled(state: CellState, item: LRPWork | TaskWork) -> int:
    """How many the scheduler gives one cell before it no longer fits (auction.md 3, 4.6)."""
    proxy = state.proxy_memory_mb if type(item) is LRPWork else 0
    mem, disk, containers = state.available.memory_mb, state.available.disk_mb, state.available.containers
    n = 0
    while containers >= 1 and disk >= item.disk_mb and mem >= item.memory_mb + proxy:
        mem, disk, containers, n = mem - item.memory_mb, disk - item.disk_mb, containers - 1, n + 1
    return n


def capacity(cells: Iterable[SimCell], loads: Mapping[str, Load], now: float, shape: Shape,
             config: AuctionConfig | None = None) -> dict[str, Any]:
    """``{"fits": N, "zones": {zone: n}, "stopped_by": error}`` for the base's cells."""
    states = [cell_state(c, loads.get(c.cell_id, Load())) for c in answering(cells, now)]
    probe = shape.item(0)
    zones: dict[str, int] = {s.zone: 0 for s in states}
    filled = []
    refused = False
    for state in states:
        if failed_filter(state, shape.rootfs, shape.volume_drivers, shape.placement_tags) is not None:
            filled.append(state)
            continue
        won = _scheduled(state, probe)
        accepted = len(commit(state.available, state.proxy_memory_mb, [probe] * won).accepted)
        zones[state.zone] += accepted
        refused = refused or accepted < won
        a = state.available
        filled.append(replace(state, available=Resources(a.memory_mb - won * shape.memory_mb,
                                                         a.disk_mb - won * shape.disk_mb,
                                                         a.containers - won)))
    if refused:
        # A cell's commit refuses some of what the scheduler gives it, so the scheduler
        # places one more tentatively and a commit refuses it, with the empty error
        # (auction.md 6.5 and 7.3).
        return {"fits": sum(zones.values()), "zones": dict(sorted(zones.items())), "stopped_by": ""}
    # One more, through the real auction on the filled cells: the error that stops it.
    settings = replace(config or AuctionConfig(), starting_container_count_maximum=0)
    result = run_auction(filled, [shape.item(sum(zones.values()))], settings)
    stopped_by = next(iter(result.failures.values()), None)
    return {"fits": sum(zones.values()), "zones": dict(sorted(zones.items())),
            "stopped_by": stopped_by if stopped_by is not None else "none: one more would still fit"}

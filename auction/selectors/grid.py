"""The placement grid's read model: zones → cells → blocks, plus the unplaced tray."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from auction.models import ActualLRP, Cell, DesiredLRP, Task
from auction.selectors.palette import app_colour, app_pattern

# The widest cell bar, in CSS pixels; the scale keeps "equal memory, equal width" (G3).
MAX_BAR_PX = 960


@dataclass(slots=True)
class Block:
    """One instance or task drawn on a cell."""

    kind: str  # "lrp" or "task"
    ident: str  # "<process_guid>.<index>" or the task guid
    guid: str
    index: int | None
    state: str
    presence: str
    memory_mb: int
    colour: str
    pattern: int
    width_px: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.guid} index {self.index}" if self.kind == "lrp" else f"task {self.guid}"


@dataclass(slots=True)
class CellView:
    cell_id: str
    zone: str
    index: int
    state: str
    memory_mb: int
    disk_mb: int
    containers: int
    reserved_memory_mb: int = 0
    reserved_disk_mb: int = 0
    reserved_containers: int = 0
    blocks: list[Block] = field(default_factory=list)
    width_px: float = 0.0

    @property
    def free_memory_mb(self) -> int:
        return self.memory_mb - self.reserved_memory_mb

    def pct(self, used: int, total: int) -> float:
        return round(100.0 * used / total, 1) if total else 0.0

    @property
    def memory_pct(self) -> float:
        return self.pct(self.reserved_memory_mb, self.memory_mb)

    @property
    def disk_pct(self) -> float:
        return self.pct(self.reserved_disk_mb, self.disk_mb)

    @property
    def containers_pct(self) -> float:
        return self.pct(self.reserved_containers, self.containers)

    @property
    def empty(self) -> bool:
        return not self.blocks


@dataclass(slots=True)
class ZoneView:
    name: str
    cells: list[CellView] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        out = {"ok": 0, "draining": 0, "missing": 0, "empty": 0}
        for cell in self.cells:
            if cell.state == Cell.State.FAILED:
                out["missing"] += 1
            elif cell.state == Cell.State.DRAINING:
                out["draining"] += 1
            else:
                out["ok"] += 1
            if cell.empty:
                out["empty"] += 1
        return out

    @property
    def reserved_pct(self) -> float:
        total = sum(c.memory_mb for c in self.cells)
        used = sum(c.reserved_memory_mb for c in self.cells)
        return round(100.0 * used / total, 1) if total else 0.0

    @property
    def largest_free(self) -> CellView | None:
        live = [c for c in self.cells if c.state == Cell.State.HEALTHY]
        return max(live, key=lambda c: (c.free_memory_mb, -c.index), default=None)


@dataclass(slots=True)
class TrayGroup:
    reason: str
    items: list[Block]


@dataclass(slots=True)
class GridSnapshot:
    zones: list[ZoneView]
    tray: list[TrayGroup]
    mb_per_px: float
    cell_count: int

    @property
    def unplaced_count(self) -> int:
        return sum(len(g.items) for g in self.tray)


AWAITING = "awaiting auction"
# Instances holding resources on a cell: everything but UNCLAIMED/CRASHED rows.
_ON_CELL = (ActualLRP.State.CLAIMED, ActualLRP.State.RUNNING)


def grid_snapshot() -> GridSnapshot:
    cells = list(Cell.objects.select_related("zone").order_by("zone__name", "index", "cell_id"))
    desired = {
        row["process_guid"]: row
        for row in DesiredLRP.objects.values("process_guid", "memory_mb", "disk_mb")
    }
    by_cell: dict[str, CellView] = {}
    zones: dict[str, ZoneView] = {}
    for cell in cells:
        view = CellView(
            cell_id=cell.cell_id, zone=cell.zone.name, index=cell.index, state=cell.state,
            memory_mb=cell.memory_mb, disk_mb=cell.disk_mb, containers=cell.containers,
        )
        by_cell[cell.cell_id] = view
        zones.setdefault(cell.zone.name, ZoneView(cell.zone.name)).cells.append(view)

    tray: dict[str, list[Block]] = defaultdict(list)
    actuals = ActualLRP.objects.values_list(
        "desired_id", "index", "state", "presence", "cell_id", "placement_error"
    ).order_by("desired_id", "index", "presence")
    for guid, index, state, presence, cell_id, placement_error in actuals:
        spec = desired.get(guid, {"memory_mb": 0, "disk_mb": 0})
        block = Block(
            "lrp", f"{guid}.{index}", guid, index, state, presence, spec["memory_mb"],
            app_colour(guid), app_pattern(guid),
        )
        if state in _ON_CELL and cell_id in by_cell:
            _place(by_cell[cell_id], block, spec["disk_mb"])
        elif state == ActualLRP.State.UNCLAIMED and presence == ActualLRP.Presence.ORDINARY:
            tray[placement_error or AWAITING].append(block)

    tasks = Task.objects.values_list(
        "task_guid", "state", "cell_id", "memory_mb", "disk_mb", "rejection_reason"
    ).filter(state__in=[Task.State.PENDING, Task.State.RUNNING])
    for guid, state, cell_id, memory_mb, disk_mb, rejection_reason in tasks:
        block = Block("task", guid, guid, None, state, "", memory_mb, "#9aa4b2", 0)
        if state == Task.State.RUNNING and cell_id in by_cell:
            _place(by_cell[cell_id], block, disk_mb)
        elif state == Task.State.PENDING:
            tray[rejection_reason or AWAITING].append(block)

    widest = max((c.memory_mb for c in cells), default=1)
    mb_per_px = max(1.0, widest / MAX_BAR_PX)
    for view in by_cell.values():
        view.width_px = round(view.memory_mb / mb_per_px, 2)
        for block in view.blocks:
            block.width_px = round(block.memory_mb / mb_per_px, 2)
    tray_groups = [TrayGroup(reason, items) for reason, items in sorted(tray.items())]
    return GridSnapshot(list(zones.values()), tray_groups, mb_per_px, len(cells))


def _place(cell: CellView, block: Block, disk_mb: int) -> None:
    cell.blocks.append(block)
    cell.reserved_memory_mb += block.memory_mb
    cell.reserved_disk_mb += disk_mb
    cell.reserved_containers += 1

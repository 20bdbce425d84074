"""The placement grid's read model: zones → cells → blocks, the unplaced tray, zone tiles.

Every reader takes a subset (a zone, a list of cells) so the live coalescer renders one
changed cell without loading the cluster, and zones mode (dashboard.md G8) reads counts
aggregated by the database instead of 250,000 instance rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Max, Q

from auction.models import ActualLRP, Cell, DesiredLRP, PendingWork, Task
from auction.selectors.clock import sim_now
from auction.selectors.lrps import restart_of
from auction.selectors.palette import app_colour, app_pattern

# The widest cell bar, in CSS pixels; the scale keeps "equal memory, equal width" (G3).
MAX_BAR_PX = 960
# Drain deadline shown on a draining cell (dashboard.md G5): Diego's evacuation timeout.
DRAIN_TIMEOUT_S = 600.0
TRAY_CHIPS = 20
TILE_TOP_APPS = 8
# Above FULL_MAX cells the grid is dense, above DENSE_MAX it shows zone tiles (G8, Nomad).
FULL_MAX = 50
DENSE_MAX = 500
MODES = ("full", "dense", "zones")


@dataclass(slots=True)
class Block:
    """One instance or task drawn on a cell (or a chip in the tray)."""

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
    domain: str = ""
    since: float = 0.0
    # A crashed instance's restart (bbs.md 3): when its back-off ends, for the tray
    # chip's countdown; None when it restarts at the next pass or never.
    restart_due: float | None = None
    restart_text: str = ""

    @property
    def label(self) -> str:
        return f"{self.guid} index {self.index}" if self.kind == "lrp" else f"task {self.guid}"

    @property
    def glyph(self) -> str:
        """Never colour alone (U4): a glyph per state and presence."""
        if self.kind == "task":
            return "T"
        if self.presence == ActualLRP.Presence.EVACUATING:
            return "↗"
        if self.presence == ActualLRP.Presence.SUSPECT:
            return "?"
        if self.state == ActualLRP.State.CRASHED:
            return "x"
        if self.state == ActualLRP.State.CLAIMED:
            return "…"
        return ""


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
    presence_lost_at: float | None = None
    evacuating_since: float | None = None
    now: float = 0.0  # the sim instant the view was drawn at

    @property
    def presence_lapsed(self) -> bool:
        """A failed cell is *missing* once its presence lapsed (bbs.md 6.1); before that
        it is failed, and its presence lapses at ``presence_lost_at``."""
        return self.presence_lost_at is not None and self.presence_lost_at <= self.now

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
        return self.reserved_containers == 0

    @property
    def drain_deadline(self) -> float | None:
        if self.state != Cell.State.DRAINING or self.evacuating_since is None:
            return None
        return self.evacuating_since + DRAIN_TIMEOUT_S


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
        # Aggregate free memory is not room on one cell (Nomad): name the best cell.
        live = [c for c in self.cells if c.state == Cell.State.HEALTHY]
        return max(live, key=lambda c: (c.free_memory_mb, -c.index), default=None)


@dataclass(slots=True)
class TrayGroup:
    reason: str
    count: int
    oldest_since: float
    items: list[Block]

    @property
    def more(self) -> int:
        return max(0, self.count - len(self.items))


@dataclass(slots=True)
class GridSnapshot:
    zones: list[ZoneView]
    tray: list[TrayGroup]
    mb_per_px: float
    cell_count: int


@dataclass(slots=True)
class ZoneTile:
    """One availability zone summarised (zones mode, G8)."""

    name: str
    cells: int = 0
    missing: int = 0
    draining: int = 0
    memory_mb: int = 0
    reserved_memory_mb: int = 0
    by_state: dict[str, int] = field(default_factory=dict)
    top_apps: list[tuple[str, int, str]] = field(default_factory=list)  # guid, MB, colour
    unplaced: int = 0

    @property
    def reserved_pct(self) -> float:
        return round(100.0 * self.reserved_memory_mb / self.memory_mb, 1) if self.memory_mb else 0.0


AWAITING = "awaiting auction"
BACK_OFF = "back-off"
# Instances holding resources on a cell: everything but UNCLAIMED/CRASHED rows.
_ON_CELL = (ActualLRP.State.CLAIMED, ActualLRP.State.RUNNING)


def auto_mode(cell_count: int) -> str:
    if cell_count <= FULL_MAX:
        return "full"
    return "dense" if cell_count <= DENSE_MAX else "zones"


def grid_mode(requested: str | None, cell_count: int | None = None) -> str:
    """``?mode=`` wins; otherwise the cluster's size chooses (G8)."""
    if requested in MODES:
        return requested  # type: ignore[return-value]
    return auto_mode(Cell.objects.count() if cell_count is None else cell_count)


def mb_per_px() -> float:
    widest = Cell.objects.aggregate(m=Max("memory_mb"))["m"] or 1
    return max(1.0, widest / MAX_BAR_PX)


def grid_snapshot(*, zone: str | None = None, cell_ids: Iterable[str] | None = None,
                  tray: bool = True) -> GridSnapshot:
    """Zones with their cells and blocks; ``zone`` or ``cell_ids`` narrow the cells read."""
    cells_qs = Cell.objects.select_related("zone").order_by("zone__name", "index", "cell_id")
    if zone is not None:
        cells_qs = cells_qs.filter(zone__name=zone)
    wanted = None if cell_ids is None else sorted(set(cell_ids))
    if wanted is not None:
        cells_qs = cells_qs.filter(cell_id__in=wanted)
    cells = list(cells_qs)
    by_cell: dict[str, CellView] = {}
    zones: dict[str, ZoneView] = {}
    now = sim_now()
    for cell in cells:
        view = CellView(
            cell_id=cell.cell_id, zone=cell.zone.name, index=cell.index, state=cell.state,
            memory_mb=cell.memory_mb, disk_mb=cell.disk_mb, containers=cell.containers,
            presence_lost_at=cell.presence_lost_at, evacuating_since=cell.evacuating_since,
            now=now,
        )
        by_cell[cell.cell_id] = view
        zones.setdefault(cell.zone.name, ZoneView(cell.zone.name)).cells.append(view)

    actuals = ActualLRP.objects.filter(state__in=_ON_CELL)
    tasks = Task.objects.filter(state=Task.State.RUNNING)
    if zone is not None or wanted is not None:
        ids = list(by_cell)
        actuals = actuals.filter(cell_id__in=ids)
        tasks = tasks.filter(cell_id__in=ids)
    rows = actuals.values_list(
        "desired_id", "index", "state", "presence", "cell_id", "since",
        "desired__memory_mb", "desired__disk_mb", "desired__domain",
    ).order_by("desired_id", "index", "presence")
    for guid, index, state, presence, cell_id, since, memory_mb, disk_mb, domain in rows:
        view = by_cell.get(cell_id)
        if view is None:
            continue
        block = Block("lrp", f"{guid}.{index}", guid, index, state, presence, memory_mb or 0,
                      app_colour(guid), app_pattern(guid), domain=domain or "", since=since)
        _place(view, block, disk_mb or 0)
    for guid, state, cell_id, memory_mb, disk_mb, domain, since in tasks.values_list(
        "task_guid", "state", "cell_id", "memory_mb", "disk_mb", "domain", "updated_at"
    ):
        view = by_cell.get(cell_id)
        if view is not None:
            _place(view, Block("task", guid, guid, None, state, "", memory_mb, "#9aa4b2", 0,
                               domain=domain, since=since), disk_mb)

    scale = mb_per_px()
    for view in by_cell.values():
        view.width_px = round(view.memory_mb / scale, 2)
        for block in view.blocks:
            block.width_px = round(block.memory_mb / scale, 2)
    total = len(cells) if zone is None and wanted is None else Cell.objects.count()
    return GridSnapshot(list(zones.values()), tray_groups() if tray else [], scale, total)


def tray_groups(chips: int = TRAY_CHIPS) -> list[TrayGroup]:
    """Unplaced work by reason (G6): count, oldest age, the first ``chips`` items.

    Groups are the exact placement error, "awaiting auction", and "back-off" for
    crashed instances waiting for their restart. The database counts and picks the
    chips: a flood's 100,000 failed instances and their queue entries never come into
    Python (issue 14: the page reads this on every load and every tray frame).
    """
    groups: dict[str, TrayGroup] = {}
    for reason, count, oldest in _tray_counts():
        group = groups.get(reason)
        if group is None:
            groups[reason] = TrayGroup(reason, count, oldest, [])
        else:
            group.count += count
            group.oldest_since = min(group.oldest_since, oldest)
    scale = mb_per_px()
    now = sim_now()
    for reason, group in groups.items():
        # An instance's chips come before a task's of the same reason, each in its order.
        group.items = _lrp_chips(reason, chips, scale, now)
        if len(group.items) < chips:
            group.items += _task_chips(reason, chips - len(group.items), scale)
    return sorted(groups.values(), key=lambda g: (g.reason == AWAITING, g.reason))


def _tray_counts() -> list[tuple[str, int, float]]:
    """(reason, count, oldest wait) of unplaced instances, then of pending tasks.

    How long work has waited counts from when it was first queued (auction.md 1 step 1:
    the queue time, kept across carry-over), not from its last failed auction; a crashed
    instance waits from its crash."""
    quote = connection.ops.quote_name
    actual, desired = quote(ActualLRP._meta.db_table), quote(DesiredLRP._meta.db_table)
    task, work = quote(Task._meta.db_table), quote(PendingWork._meta.db_table)
    index = quote("index")
    # The first time each queued item was queued (an item may be queued more than once).
    lrps_queued = (f"(SELECT process_guid, {index}, MIN(queued_at) AS queued_at FROM {work} "
                   f"WHERE kind = 'lrp' GROUP BY process_guid, {index})")
    tasks_queued = (f"(SELECT task_guid, MIN(queued_at) AS queued_at FROM {work} "
                    f"WHERE kind = 'task' GROUP BY task_guid)")
    sql = f"""
        SELECT reason, COUNT(*), MIN(waiting) FROM (
            SELECT CASE WHEN a.state = %s THEN %s ELSE COALESCE(NULLIF(a.placement_error, ''), %s) END
                       AS reason,
                   CASE WHEN a.state = %s THEN a.since ELSE COALESCE(q.queued_at, a.since) END AS waiting
            FROM {actual} a
            JOIN {desired} d ON d.process_guid = a.process_guid
            LEFT JOIN {lrps_queued} q ON q.process_guid = a.process_guid AND q.{index} = a.{index}
            WHERE a.state IN (%s, %s) AND a.presence = %s
        ) lrps GROUP BY reason
        UNION ALL
        SELECT reason, COUNT(*), MIN(waiting) FROM (
            SELECT COALESCE(NULLIF(t.rejection_reason, ''), %s) AS reason,
                   COALESCE(q.queued_at, t.created_at) AS waiting
            FROM {task} t
            LEFT JOIN {tasks_queued} q ON q.task_guid = t.task_guid
            WHERE t.state = %s
        ) tasks GROUP BY reason"""
    crashed, unclaimed = ActualLRP.State.CRASHED, ActualLRP.State.UNCLAIMED
    params = [crashed, BACK_OFF, AWAITING, crashed, unclaimed, crashed, ActualLRP.Presence.ORDINARY,
              AWAITING, Task.State.PENDING]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(reason, int(count), float(oldest)) for reason, count, oldest in cursor.fetchall()]


def _lrp_chips(reason: str, chips: int, scale: float, now: float) -> list[Block]:
    # The reason as ``_tray_counts`` names it, as a filter the state index serves.
    unclaimed = Q(state=ActualLRP.State.UNCLAIMED)
    if reason == BACK_OFF:
        of_reason = Q(state=ActualLRP.State.CRASHED) | unclaimed & Q(placement_error=BACK_OFF)
    elif reason == AWAITING:
        of_reason = unclaimed & Q(placement_error__in=["", AWAITING])
    else:
        of_reason = unclaimed & Q(placement_error=reason)
    # The first rows by themselves, then their apps: joined in the query, the planner
    # walked a flood's 100,000 rows into the join before the limit while its statistics
    # still described the table before the flood. A row whose app is gone is no chip.
    query = ActualLRP.objects.filter(of_reason, presence=ActualLRP.Presence.ORDINARY).values_list(
        "desired_id", "index", "state", "since", "crash_count").order_by("since", "desired_id", "index")
    rows: list[tuple[Any, ...]] = []
    sizes: dict[str, tuple[int, str]] = {}
    offset = 0
    while len(rows) < chips:
        page = list(query[offset:offset + chips])
        offset += len(page)
        sizes.update((guid, (memory_mb, domain)) for guid, memory_mb, domain in DesiredLRP.objects.filter(
            process_guid__in={r[0] for r in page} - set(sizes)).values_list("process_guid", "memory_mb", "domain"))
        rows += [r for r in page if r[0] in sizes][:chips - len(rows)]
        if len(page) < chips:
            break
    blocks = []
    for guid, index, state, since, crash_count in rows:
        memory_mb, domain = sizes[guid]
        due, text = None, ""
        if state == ActualLRP.State.CRASHED:
            restart = restart_of(state, crash_count, since, now)
            due, text = (restart.due if restart.due is not None and restart.due > now else None), restart.text
        blocks.append(Block(
            "lrp", f"{guid}.{index}", guid, index, state, ActualLRP.Presence.ORDINARY,
            memory_mb or 0, app_colour(guid), app_pattern(guid), round((memory_mb or 0) / scale, 2),
            domain or "", since, due, text))
    return blocks


def _task_chips(reason: str, chips: int, scale: float) -> list[Block]:
    of_reason = Q(rejection_reason__in=["", AWAITING]) if reason == AWAITING else Q(rejection_reason=reason)
    tasks = Task.objects.filter(of_reason, state=Task.State.PENDING).values_list(
        "task_guid", "created_at", "memory_mb", "domain").order_by("created_at", "task_guid")[:chips]
    return [Block("task", guid, guid, None, Task.State.PENDING, "", memory_mb, "#9aa4b2", 0,
                  round(memory_mb / scale, 2), domain, since) for guid, since, memory_mb, domain in tasks]


def zone_names() -> list[str]:
    return list(Cell.objects.order_by("zone__name").values_list("zone__name", flat=True).distinct())


def zone_tiles(names: Iterable[str] | None = None) -> list[ZoneTile]:
    """Per-zone summaries aggregated in SQL: never one row per instance (G8 zones mode)."""
    wanted = None if names is None else set(names)
    tiles: dict[str, ZoneTile] = {}
    cell_zone: dict[str, str] = {}
    for cell_id, zone, state, memory_mb in Cell.objects.values_list(
        "cell_id", "zone__name", "state", "memory_mb"
    ).order_by("zone__name"):
        if wanted is not None and zone not in wanted:
            continue
        tile = tiles.setdefault(zone, ZoneTile(zone))
        tile.cells += 1
        tile.memory_mb += memory_mb
        tile.missing += state == Cell.State.FAILED
        tile.draining += state == Cell.State.DRAINING
        cell_zone[cell_id] = zone
    actual = ActualLRP._meta.db_table
    desired = DesiredLRP._meta.db_table
    cell = Cell._meta.db_table
    zone_t = Cell._meta.get_field("zone").related_model._meta.db_table
    apps: dict[str, dict[str, int]] = defaultdict(dict)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT z.name, a.process_guid, a.state, COUNT(*), COALESCE(SUM(d.memory_mb), 0) "
            f"FROM {actual} a JOIN {cell} c ON c.cell_id = a.cell_id "
            f"JOIN {zone_t} z ON z.id = c.zone_id "
            f"LEFT JOIN {desired} d ON d.process_guid = a.process_guid "
            f"WHERE a.state IN ('CLAIMED', 'RUNNING') GROUP BY z.name, a.process_guid, a.state"
        )
        for zone, guid, state, count, memory in cursor.fetchall():
            tile = tiles.get(zone)
            if tile is None:
                continue
            tile.by_state[state] = tile.by_state.get(state, 0) + count
            tile.reserved_memory_mb += memory
            apps[zone][guid] = apps[zone].get(guid, 0) + memory
        task_t = Task._meta.db_table
        cursor.execute(
            f"SELECT z.name, COUNT(*), COALESCE(SUM(t.memory_mb), 0) FROM {task_t} t "
            f"JOIN {cell} c ON c.cell_id = t.cell_id JOIN {zone_t} z ON z.id = c.zone_id "
            f"WHERE t.state = 'RUNNING' GROUP BY z.name"
        )
        for zone, count, memory in cursor.fetchall():
            tile = tiles.get(zone)
            if tile is not None:
                tile.by_state["TASK"] = count
                tile.reserved_memory_mb += memory
    # Unplaced work has no zone yet; every tile shows the cluster's count (the tray's).
    unplaced = ActualLRP.objects.filter(
        state=ActualLRP.State.UNCLAIMED, presence=ActualLRP.Presence.ORDINARY
    ).count() + Task.objects.filter(state=Task.State.PENDING).count()
    for name, tile in tiles.items():
        top = sorted(apps[name].items(), key=lambda kv: (-kv[1], kv[0]))[:TILE_TOP_APPS]
        tile.top_apps = [(guid, mb, app_colour(guid)) for guid, mb in top]
        tile.unplaced = unplaced
    return list(tiles.values())


def cell_zones(cell_ids: Iterable[str]) -> dict[str, str]:
    return dict(Cell.objects.filter(cell_id__in=list(cell_ids)).values_list("cell_id", "zone__name"))


def _place(cell: CellView, block: Block, disk_mb: int) -> None:
    cell.blocks.append(block)
    cell.reserved_memory_mb += block.memory_mb
    cell.reserved_disk_mb += disk_mb
    cell.reserved_containers += 1


def zone_headers(names: Iterable[str]) -> list[ZoneView]:
    """Zones with per-cell reserved totals but no blocks: what a zone header needs (G1)."""
    zones: dict[str, ZoneView] = {}
    by_cell: dict[str, CellView] = {}
    for cell in Cell.objects.select_related("zone").filter(zone__name__in=list(names)):
        view = CellView(cell.cell_id, cell.zone.name, cell.index, cell.state, cell.memory_mb,
                        cell.disk_mb, cell.containers)
        by_cell[cell.cell_id] = view
        zones.setdefault(cell.zone.name, ZoneView(cell.zone.name)).cells.append(view)
    actual, desired, cell_t = ActualLRP._meta.db_table, DesiredLRP._meta.db_table, Cell._meta.db_table
    zone_t = Cell._meta.get_field("zone").related_model._meta.db_table
    params = list(zones)
    if not params:
        return []
    marks = ", ".join(["%s"] * len(params))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT a.cell_id, COUNT(*), COALESCE(SUM(d.memory_mb), 0) FROM {actual} a "
            f"JOIN {cell_t} c ON c.cell_id = a.cell_id JOIN {zone_t} z ON z.id = c.zone_id "
            f"LEFT JOIN {desired} d ON d.process_guid = a.process_guid "
            f"WHERE a.state IN ('CLAIMED', 'RUNNING') AND z.name IN ({marks}) GROUP BY a.cell_id",
            params,
        )
        rows = list(cursor.fetchall())
        cursor.execute(
            f"SELECT t.cell_id, COUNT(*), COALESCE(SUM(t.memory_mb), 0) FROM {Task._meta.db_table} t "
            f"JOIN {cell_t} c ON c.cell_id = t.cell_id JOIN {zone_t} z ON z.id = c.zone_id "
            f"WHERE t.state = 'RUNNING' AND z.name IN ({marks}) GROUP BY t.cell_id",
            params,
        )
        rows += list(cursor.fetchall())
    for cell_id, count, memory in rows:
        view = by_cell.get(cell_id)
        if view is not None:
            view.reserved_containers += count
            view.reserved_memory_mb += memory
    return [zones[name] for name in sorted(zones)]

"""The in-memory copy of the fetched cell states that one auction changes (auction.md 1.5).

Cells are held column-wise (one list per field, indexed by the cell's position in the
input) because the fast path reads a few fields of many cells per item. Every tentative
win goes through ``reserve`` (auction.md 4.6), which also bumps the cell's ``version`` so
strategies can cache per-cell values and notice when they went stale.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from itertools import compress
from operator import attrgetter, is_not, methodcaller, sub

from .filters import (
    ALL_PROBLEMS,
    failed_filter,
    filter_error,
    fit_problems,
    insufficient_resources_error,
)
from .types import CellState, LRPWork, WorkItem

FilterKey = tuple[str, tuple[str, ...], tuple[str, ...]]
#: A process guid's instances per cell id (``CellState.lrp_counts`` read by process).
Holders = Callable[[str], Mapping[str, int]]


#: Up to this many apps in a batch, their zone counts are summed app by app.
FEW_APPS = 4
#: Up to this many apps in a batch, a caller's index (``holders``) is read app by app; a
#: zone failure's thousands of apps are summed in one walk of every cell's counts instead.
HOLDERS_UP_TO = 64

#: What the filters read of a cell (``failed_filter``).
_runs = attrgetter("preloaded_rootfses", "rootfs_providers", "volume_drivers", "placement_tags",
                   "optional_placement_tags")


_cell_id = attrgetter("cell_id")
_zone = attrgetter("zone")
_available = attrgetter("available")
_total = attrgetter("total")
_memory = attrgetter("memory_mb")
_disk = attrgetter("disk_mb")
_containers = attrgetter("containers")
_starting = attrgetter("starting_containers")
_proxy = attrgetter("proxy_memory_mb")
_index = attrgetter("index")
_tasks = attrgetter("tasks")


def _count(guids: Sequence[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for guid in guids:
        counts[guid] = counts.get(guid, 0) + 1
    return counts


class FilterClass:
    """The cells compatible with every item that asks for the same rootfs, drivers and tags.

    Compatibility never changes during an auction (capacity is not a filter, auction.md 3),
    so it is computed once per distinct request.
    """

    __slots__ = ("_members", "by_zone", "cells", "error", "id", "zones")

    def __init__(self, ident: int, cells: list[int], by_zone: dict[str, list[int]],
                 error: str | None) -> None:
        self.id = ident
        self.cells = cells  # compatible positions, input order
        self.by_zone = by_zone  # zone -> compatible positions, input order
        self.zones = list(by_zone)  # zones with at least one compatible cell
        self.error = error  # the global filter error when no cell is compatible
        self._members: frozenset[int] | None = None

    @property
    def members(self) -> frozenset[int]:
        """``cells`` as a set, made once: a class lives over many auctions."""
        if self._members is None:
            self._members = frozenset(self.cells)
        return self._members


def filter_key(item: WorkItem) -> FilterKey:
    return (item.rootfs, tuple(item.volume_drivers), tuple(item.placement_tags))


class CellColumns:
    """The fetched cells column by column (what ``AuctionState`` starts from), and the
    filter classes of auction.md 3 over them.

    Built for one auction, or kept by a caller between auctions: ``refresh`` with the next
    fetch remakes only the positions whose ``CellState`` is another object than last time
    (a caller hands the same object for a cell that did not change, as the memory store
    does), and every column when the cells are other cells or in another order. The filter
    classes are dropped as soon as what a cell runs changes.

    A strategy may keep its own values over the columns in ``kept`` (the ``diego`` heaps):
    ``dirty`` holds the positions remade since it last took them (``None``: every one), and
    ``epoch`` moves whenever positions or filter class ids stop meaning what they meant.
    """

    __slots__ = ("_by_id", "a_cont", "a_disk", "a_mem", "cell_ids", "cells", "classes", "dirty",
                 "epoch", "in_use", "index", "kept", "kinds", "lrp_counts", "n_tasks", "proxy",
                 "starting", "t_cont", "t_disk", "t_mem", "zone_of", "zones")

    def __init__(self, cells: Sequence[CellState] = ()) -> None:
        self.cells: list[CellState] = []
        self.cell_ids: list[str] = []
        self.classes: dict[FilterKey, FilterClass] = {}
        self.dirty: set[int] | None = None
        self.epoch = 0
        self.kept: object | None = None
        self._gather(list(cells))

    def _gather(self, cells: list[CellState]) -> None:
        self.cells = cells
        # The columns gathered with C loops (``map`` of getters): an auction of one
        # restart on 1,000 cells spent more time here than placing it.
        self.cell_ids = list(map(_cell_id, cells))
        self.zone_of: list[str] = list(map(_zone, cells))
        self.zones: list[str] = sorted(set(self.zone_of))
        available = list(map(_available, cells))
        total = list(map(_total, cells))
        self.a_mem: list[int] = list(map(_memory, available))
        self.a_disk: list[int] = list(map(_disk, available))
        self.a_cont: list[int] = list(map(_containers, available))
        self.starting: list[int] = list(map(_starting, cells))
        self.t_mem: list[int] = list(map(_memory, total))
        self.t_disk: list[int] = list(map(_disk, total))
        self.t_cont: list[int] = list(map(_containers, total))
        # Memory in use as fetched (``quality.memory_in_use``), kept with the two columns
        # it is made of: an auction of one restart read it anew from 1,000 cells.
        self.in_use: list[int] = list(map(sub, self.t_mem, self.a_mem))
        self.proxy: list[int] = list(map(_proxy, cells))
        self.index: list[int] = list(map(_index, cells))
        self.n_tasks: list[int] = list(map(len, map(_tasks, cells)))
        self.lrp_counts: list[Mapping[str, int]] = list(map(_counts_of, cells))
        self.kinds: list[tuple[tuple[str, ...], ...]] = list(map(_runs, cells))
        self.classes = {}
        self.dirty = None
        self.epoch += 1
        self._by_id: tuple[dict[str, int], dict[str, str]] | None = None

    def by_id(self) -> tuple[dict[str, int], dict[str, str]]:
        """(position, zone) of each cell id, made once per cells and order: an auction
        of one restart on 1,000 cells looked them up from maps made anew each time."""
        if self._by_id is None:
            ids = self.cell_ids
            self._by_id = (dict(zip(ids, range(len(ids)), strict=True)),
                           dict(zip(ids, self.zone_of, strict=True)))
        return self._by_id

    def refresh(self, cells: Sequence[CellState]) -> list[int]:
        """Take the next fetch's cells; returns the positions remade (every one when the
        cells are other cells or in another order)."""
        cells = list(cells)
        if len(cells) != len(self.cells):
            self._gather(cells)
            return list(range(len(cells)))
        # A cell that is the same object has the same id: only the others are compared.
        changed = list(compress(range(len(cells)), map(is_not, cells, self.cells)))
        cell_ids = self.cell_ids
        if any(cells[pos].cell_id != cell_ids[pos] for pos in changed):
            self._gather(cells)
            return list(range(len(cells)))
        self.cells = cells
        for pos in changed:
            cell = cells[pos]
            if cell.zone != self.zone_of[pos]:  # zones and the filter classes by zone move
                self._gather(cells)
                return list(range(len(cells)))
            self.a_mem[pos] = cell.available.memory_mb
            self.a_disk[pos] = cell.available.disk_mb
            self.a_cont[pos] = cell.available.containers
            self.starting[pos] = cell.starting_containers
            self.t_mem[pos] = cell.total.memory_mb
            self.t_disk[pos] = cell.total.disk_mb
            self.t_cont[pos] = cell.total.containers
            self.in_use[pos] = cell.total.memory_mb - cell.available.memory_mb
            self.proxy[pos] = cell.proxy_memory_mb
            self.index[pos] = cell.index
            self.n_tasks[pos] = len(cell.tasks)
            self.lrp_counts[pos] = _counts_of(cell)
            runs = _runs(cell)
            if runs != self.kinds[pos]:
                self.kinds[pos] = runs
                self.classes = {}
                self.epoch += 1
        if self.dirty is not None:
            self.dirty.update(changed)
        return changed


def _counts_of(cell: CellState) -> Mapping[str, int]:
    return cell.lrp_counts if cell.lrp_counts is not None else _count(cell.lrps)


class AuctionState:
    """Mutable per-auction cell columns plus the per-process zone counts of auction.md 4.2."""

    __slots__ = (
        "_classes",
        "_columns",
        "_errors",
        "_holders",
        "_kinds",
        "_position",
        "_won_by_zone",
        "a_cont",
        "a_disk",
        "a_mem",
        "cell_ids",
        "cells",
        "in_flight",
        "index",
        "lrp_counts",
        "n_tasks",
        "proxy",
        "starting",
        "t_cont",
        "t_disk",
        "t_mem",
        "version",
        "_own",
        "_zone_counts",
        "kept_columns",
        "wins",
        "won",
        "zone_of",
        "zones",
    )

    def __init__(self, cells: Sequence[CellState], holders: Holders | None = None,
                 columns: CellColumns | None = None) -> None:
        # ``columns``: the fetch's columns kept by a caller between auctions (``CellColumns``),
        # refreshed for ``cells``; otherwise gathered here for this auction alone.
        self.kept_columns = columns
        if columns is None:
            columns = CellColumns(cells)
        self._columns = columns
        self.cells = columns.cells
        # ``holders(guid)``: the process's instances per cell id, as the cells' counts hold
        # them, from a caller that indexes instances by process (the memory store); then
        # a zone count reads the cells that hold the process, not every cell's counts.
        self._holders = holders
        self._position: dict[str, int] | None = None
        self._won_by_zone: dict[str, dict[str, int]] = {}
        # What a win never changes is shared with the columns; what it changes is copied.
        self.cell_ids = columns.cell_ids
        self.zone_of = columns.zone_of
        self.zones = columns.zones
        self.a_mem = columns.a_mem.copy()
        self.a_disk = columns.a_disk.copy()
        self.a_cont = columns.a_cont.copy()
        self.starting = columns.starting.copy()
        self.t_mem = columns.t_mem
        self.t_disk = columns.t_disk
        self.t_cont = columns.t_cont
        self.proxy = columns.proxy
        self.index = columns.index
        self.n_tasks = columns.n_tasks.copy()
        self.version = [0] * len(self.cells)
        # Each winning position's work, in the order won (most auctions: a few cells of
        # a thousand, so no list per cell).
        self.won: dict[int, list[WorkItem]] = {}
        # 4.1: the in-flight counter starts at the cells' starting containers.
        self.in_flight = sum(self.starting)
        # 4.2 step 1 counts instances over *all* cells of a zone, compatible or not. Each
        # cell's instances per process guid come counted (``CellState.lrp_counts``) or are
        # counted once (``CellColumns``); a cell's count is copied before its first win
        # changes it. Zone counts are summed per process guid when an item of it first asks
        # (``zone_counts_of``), then kept per win: O(cells) per app in the batch instead
        # of a walk of every cell's instance list per item (which Diego's zone_sorter does).
        self.lrp_counts: list[Mapping[str, int]] = columns.lrp_counts.copy()
        self._own = [False] * len(self.cells)  # lrp_counts[pos] is this auction's copy
        self._zone_counts: dict[str, dict[str, int]] = {}
        # Compatibility depends on what cells run, never on their resources: the classes
        # live as long as the columns' cells run the same (``CellColumns.refresh``).
        self._classes = columns.classes
        self._kinds = columns.kinds  # what each cell runs
        self.wins = 0  # tentative wins so far: cached failure texts are valid until it moves
        self._errors: dict[tuple[int, bool, int, int], tuple[int, str]] = {}

    def zone_counts_of(self, guid: str) -> dict[str, int]:
        """auction.md 4.2 step 1: the process's instances per zone, over every cell of the
        auction (wins so far included); zones without one are absent."""
        per_zone = self._zone_counts.get(guid)
        if per_zone is None and self._holders is not None:
            per_zone = self._zone_counts[guid] = dict(self._won_by_zone.get(guid, {}))
            if self._position is None:
                self._position = self._columns.by_id()[0]
            position, zone_of = self._position, self.zone_of
            for cell_id, n in self._holders(guid).items():
                pos = position.get(cell_id)
                if pos is not None and n:
                    zone = zone_of[pos]
                    per_zone[zone] = per_zone.get(zone, 0) + n
        elif per_zone is None:
            per_zone = self._zone_counts[guid] = {}
            # Every cell's count gathered in one C loop; only the cells that hold the
            # process are walked in Python (an auction of one restart asks once per cell).
            held = list(map(methodcaller("get", guid, 0), self.lrp_counts))
            for zone, n in compress(zip(self.zone_of, held, strict=True), held):
                per_zone[zone] = per_zone.get(zone, 0) + n
        return per_zone

    def count_zones(self, guids: Collection[str]) -> None:
        """Sum the zone counts of many process guids at once (a batch of many apps): one
        walk of every cell's counts when that is cheaper than one walk of the cells per app."""
        wanted = {g for g in guids if g not in self._zone_counts}
        if self._holders is not None and len(wanted) <= HOLDERS_UP_TO:
            return  # per app from the caller's index is cheaper still
        if len(wanted) <= FEW_APPS or len(wanted) * len(self.lrp_counts) <= sum(
                len(c) for c in self.lrp_counts):
            return  # per app, on demand, is cheaper (a cell holds a few apps or more)
        sums: dict[str, dict[str, int]] = {g: {} for g in wanted}
        zone_of = self.zone_of
        for pos, counts in enumerate(self.lrp_counts):
            zone = zone_of[pos]
            for guid, n in counts.items():
                per_zone = sums.get(guid)
                if per_zone is not None and n:
                    per_zone[zone] = per_zone.get(zone, 0) + n
        self._zone_counts.update(sums)

    def filter_class(self, key: FilterKey) -> FilterClass:
        """The (cached) compatible cells for a rootfs / drivers / tags request."""
        fc = self._classes.get(key)
        if fc is None:
            rootfs, drivers, tags = key
            compatible: list[int] = []
            by_zone: dict[str, list[int]] = {}
            # The filters read only what a cell can run: cells alike in that (most of a
            # foundation) are filtered once.
            kinds = self._kinds
            if self.cells and kinds.count(kinds[0]) == len(kinds):  # one kind of cell
                if failed_filter(self.cells[0], rootfs, drivers, tags) is None:
                    compatible = list(range(len(kinds)))
                    for pos, zone in enumerate(self.zone_of):
                        by_zone.setdefault(zone, []).append(pos)
            else:
                verdicts: dict[tuple[tuple[str, ...], ...], bool] = {}
                for pos, cell in enumerate(self.cells):
                    kind = kinds[pos]
                    ok = verdicts.get(kind)
                    if ok is None:
                        ok = verdicts[kind] = failed_filter(cell, rootfs, drivers, tags) is None
                    if ok:
                        compatible.append(pos)
                        by_zone.setdefault(cell.zone, []).append(pos)
            error = None if compatible else filter_error(self.cells, rootfs, drivers, tags)
            fc = FilterClass(len(self._classes), compatible, by_zone, error)
            self._classes[key] = fc
        return fc

    def memory_needed(self, item: WorkItem, pos: int) -> int:
        """``m_eff`` of auction.md 3: the proxy overhead counts for LRPs only."""
        if type(item) is LRPWork:
            return item.memory_mb + self.proxy[pos]
        return item.memory_mb

    def fits(self, item: WorkItem, pos: int) -> bool:
        return (
            self.a_disk[pos] >= item.disk_mb
            and self.a_mem[pos] >= self.memory_needed(item, pos)
            and self.a_cont[pos] >= 1
        )

    def feasible(self, item: WorkItem, fc: FilterClass) -> list[int]:
        """Compatible cells that fit, in input order (auction.md 8: the candidates)."""
        return [pos for pos in fc.cells if self.fits(item, pos)]

    def problems(self, item: WorkItem, pos: int) -> frozenset[str]:
        return fit_problems(self.a_mem[pos], self.a_disk[pos], self.a_cont[pos],
                            self.memory_needed(item, pos), item.disk_mb)

    def insufficient_error(self, item: WorkItem, fc: FilterClass) -> str:
        """auction.md 6.4: the problems shared by every compatible cell that does not fit.

        Cached per request shape until the next win: a full cluster then fails every
        further item in O(1) instead of re-checking every compatible cell.
        """
        key = (fc.id, type(item) is LRPWork, item.memory_mb, item.disk_mb)
        cached = self._errors.get(key)
        if cached is not None and cached[0] == self.wins:
            return cached[1]
        common = set(ALL_PROBLEMS)
        for pos in fc.cells:
            problems = self.problems(item, pos)
            if problems:  # a fitting cell is never intersected (4.2 step 3)
                common &= problems
        error = insufficient_resources_error(common)
        self._errors[key] = (self.wins, error)
        return error

    def reserve(self, pos: int, item: WorkItem) -> None:
        """auction.md 4.6: the tentative win changes the copy before the next item.

        Raw memory is reserved: the proxy overhead counts in fit and score only.
        """
        self.a_mem[pos] -= item.memory_mb
        self.a_disk[pos] -= item.disk_mb
        self.a_cont[pos] -= 1
        self.starting[pos] += 1
        self.version[pos] += 1
        self.in_flight += 1
        self.wins += 1
        if type(item) is LRPWork:
            guid = item.process_guid
            if self._own[pos]:
                own = self.lrp_counts[pos]
            else:  # the caller's count is only read: the first win works on a copy
                own = self.lrp_counts[pos] = dict(self.lrp_counts[pos])
                self._own[pos] = True
            assert isinstance(own, dict)
            own[guid] = own.get(guid, 0) + 1
            zone = self.zone_of[pos]
            per_zone = self._zone_counts.get(guid)
            if per_zone is not None:  # not summed yet: the sum will see this win
                per_zone[zone] = per_zone.get(zone, 0) + 1
            elif self._holders is not None:  # the caller's index is as of the fetch
                won = self._won_by_zone.setdefault(guid, {})
                won[zone] = won.get(zone, 0) + 1
        else:
            self.n_tasks[pos] += 1
        work = self.won.get(pos)
        if work is None:
            self.won[pos] = [item]
        else:
            work.append(item)

    def won_by_cell(self) -> dict[str, list[WorkItem]]:
        """Each winning cell's work, cells in input order (``AuctionResult.won``)."""
        won, cell_ids = self.won, self.cell_ids
        return {cell_ids[pos]: won[pos] for pos in sorted(won)}

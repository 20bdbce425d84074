"""The memory store: a whole simulated cluster in plain Python objects (the ``World``).

It holds what the database holds (cells, apps, ActualLRP rows, tasks, domains, the
auctioneer's queue, the timeline) and implements the ``Store`` reads and ``apply`` of
``auction.sim.driver``; every decision is made by the same rules the database store
runs. Indexes keep it fast at a real foundation's size: rows by process guid and by
cell, each cell's load kept per write, and heaps of the reps' timers.

A ``World`` is plain data: ``copy.deepcopy`` clones it (comparison panes and plans start
from one clone each; ``checkpoint`` keeps one to reset to).
"""

from __future__ import annotations

import copy
import heapq
import math
from collections import Counter
from collections.abc import Callable, ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field, fields, replace
from operator import attrgetter
from typing import Any

from auction.bbs import types as core
from auction.bbs.changes import RowCreate, RowDelete, RowUpdate, TaskDelete
from auction.bbs.collector import collector_paused
from auction.bbs.convergence import QuietLRPs
from auction.bbs.lrp_convergence import KnownRows, PlainApps
from auction.bbs.validation import bbs_message, cell_errors, task_errors
from auction.engine import AuctionConfig, CellState
from auction.engine.state import CellColumns
from auction.engine.types import slot_writers
from auction.sim import chaos as chaos_rules
from auction.sim.cfdot import ClusterView
from auction.sim.changes import ChangeSet
from auction.sim.chaos import ChaosError
from auction.sim.clock import ClockState
from auction.sim.driver import advance, next_instant
from auction.sim.loads import (
    FETCH_ORDER,
    HOLDING_STATES,
    add_lrp,
    add_task,
    answering,
    cell_state,
    holds_container,
    restate_lrp,
)
from auction.sim.lrps import lrp_desire, task_desire
from auction.sim.model import (
    CELL_STATES,
    DRAINING,
    FAILED,
    HEALTHY,
    Load,
    QueuedWork,
    SimApp,
    SimCell,
    SimTask,
    app_from_spec,
)
from auction.sim.quality import AuctionStats
from auction.sim.replay_record import copy_keys, explain_wanted, replay_fields
from auction.sim.reps import next_evacuation_sync
from auction.sim.round import RoundInput, RoundRecord, has_new_work

__all__ = [
    "DRAINING", "FAILED", "HEALTHY", "AuctionRecord", "LogEntry", "SimApp", "SimCell", "SimTask",
    "World", "WorldError", "app_from_spec",
]


class WorldError(ValueError):
    """A request the simulated cluster refuses (unknown cell, duplicate guid, ...)."""


@dataclass(slots=True)
class AuctionRecord:
    at: float
    items: int
    placed: dict[str, str]
    failures: dict[str, str]
    order: list[str]
    stats: AuctionStats


@dataclass(slots=True, frozen=True)
class LogEntry:
    """One event of the run: a BBS event (bbs.md 8) or a note of the simulator's."""

    at: float
    type: str
    key: str = ""
    cell_id: str = ""

    def __init__(self, at: float, type: str, key: str = "", cell_id: str = "") -> None:
        # The slots written directly (``slot_writers``): a run logs a million.
        _set_at(self, at)
        _set_type(self, type)
        _set_key(self, key)
        _set_cell_id(self, cell_id)


_set_at, _set_type, _set_key, _set_cell_id = slot_writers(LogEntry)


class RowTable:
    """The ActualLRP rows by key, with each cell's load kept per write and the reps'
    timers in heaps (entries are checked against the row when they come due)."""

    __slots__ = ("_added", "_at", "_changed", "_gone", "_listed", "_order", "_rows", "by_cell", "by_guid",
                 "copies", "crashes", "loads", "proxy", "sizes", "stale", "start_keys", "starts", "written")

    def __init__(self, sizes: dict[str, tuple[int, int]], proxy: dict[str, int]) -> None:
        self._rows: dict[core.RowKey, core.ActualLRP] = {}
        self.sizes = sizes  # shared with the world: process guid -> (memory, disk)
        self.proxy = proxy  # shared with the world: cell id -> proxy memory
        self.loads: dict[str, Load] = {}
        self.by_guid: dict[str, set[core.RowKey]] = {}
        self.by_cell: dict[str, set[core.RowKey]] = {}
        # The starts by instant: a heap of the instants, and the instances due at each.
        # An app's instances claimed together start together, and a heap of 100,000
        # (instant, guid, index) tuples cost more per pop than the start's own work.
        self.starts: list[float] = []
        self.start_keys: dict[float, list[tuple[str, int]]] = {}
        self.crashes: list[tuple[float, str, int, str]] = []
        # Cells whose load changed since the world last copied it (``World.loads``).
        self.stale: set[str] = set()
        # The keys in order as of the last ``in_key_order``, and the keys added and gone
        # since: an update in place keeps the key, so most passes find nothing to sort.
        self._order: list[core.RowKey] | None = None
        self._added: set[core.RowKey] = set()
        self._gone: set[core.RowKey] = set()
        # The rows as the last ``in_key_order`` listed them, and the keys written since:
        # when no key came or went, only those are read anew (a pass at 250,000 rows
        # looked up every one). ``_at`` is each key's position in ``_order``.
        self._listed: list[core.ActualLRP] | None = None
        self._at: dict[core.RowKey, int] | None = None
        self._changed: set[core.RowKey] = set()
        # The apps any of whose rows was written, added or removed between the listings
        # since ``World`` last took a pass's plain apps (``lrp_convergence.PlainApps``).
        self.written: set[str] = set()
        # How many rows are EVACUATING or SUSPECT copies (a key's presence never changes:
        # counted as keys come and go); without any, a start looks none up.
        self.copies = 0

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        """A copy (``World.clone``) leaves the listing behind: it is made again on demand."""
        state = {name: getattr(self, name) for name in self.__slots__}
        state["_listed"] = state["_at"] = None
        return None, state

    def _account(self, row: core.ActualLRP, sign: int) -> None:
        if not holds_container(row.state, row.cell_id):
            return
        self.stale.add(row.cell_id)
        load = self.loads.get(row.cell_id)
        if load is None:
            load = self.loads[row.cell_id] = Load()
        memory, disk = self.sizes.get(row.process_guid, (0, 0))
        add_lrp(load, row.process_guid, row.state, memory, disk, self.proxy.get(row.cell_id, 0), sign)

    def _index(self, row: core.ActualLRP, add: bool) -> None:
        key = row.key
        _index_key(self.by_guid, row.process_guid, key, add)
        _index_key(self.by_cell, row.cell_id, key, add)

    def __setitem__(self, key: core.RowKey, row: core.ActualLRP) -> None:
        old = self._rows.get(key)
        if old is not None:
            self._account(old, -1)
            self._index(old, False)
        else:
            if key[2] != core.ORDINARY:
                self.copies += 1
            if key in self._gone:
                self._gone.discard(key)
            else:
                self._added.add(key)
        self._rows[key] = row
        self._changed.add(key)
        self._account(row, +1)
        self._index(row, True)
        self._timers(row)

    def _timers(self, row: core.ActualLRP) -> None:
        if row.ready_at is not None and row.state == core.CLAIMED and row.presence == core.ORDINARY:
            self.start_at(row.ready_at, row.process_guid, row.index)
        if row.crash_at is not None and row.state in (core.CLAIMED, core.RUNNING):
            heapq.heappush(self.crashes, (row.crash_at, row.process_guid, row.index, row.presence))

    def start_at(self, at: float, process_guid: str, index: int) -> None:
        """An instance's start timer (checked against its row when it comes due)."""
        due = self.start_keys.get(at)
        if due is None:
            due = self.start_keys[at] = []
            heapq.heappush(self.starts, at)
        due.append((process_guid, index))

    def update(self, key: core.RowKey, row: core.ActualLRP) -> None:
        """``pop(key)`` then ``self[row.key] = row`` (the row moves to the end of the
        order); the indexes are left alone when the row stays on its cell."""
        old = self._rows.get(key)
        if old is None or row.key != key:
            self.pop(key, None)
            self[row.key] = row
            return
        del self._rows[key]
        self._rows[key] = row
        self._changed.add(key)
        if old.cell_id != row.cell_id:
            # A claim: ``pop`` then set, in their order, the same key in and out of the
            # keys added or gone since the last ``in_key_order`` (no change there). The
            # key, and so the process, is the same: only the index by cell moves.
            if old.cell_id:  # an UNCLAIMED row is on no cell: nothing to take back
                self._account(old, -1)
                _index_key(self.by_cell, old.cell_id, key, False)
            self._account(row, +1)
            _index_key(self.by_cell, row.cell_id, key, True)
            self._timers(row)
            return
        if (old.state in HOLDING_STATES and row.state in HOLDING_STATES
                and old.process_guid in self.sizes and old.cell_id in self.loads):
            # The container stays where it was (a start): only the starting count moves.
            self.stale.add(row.cell_id)
            restate_lrp(self.loads[row.cell_id], row.process_guid, old.state, row.state)
        else:
            self._account(old, -1)
            self._account(row, +1)
        self._timers(row)

    def __delitem__(self, key: core.RowKey) -> None:
        row = self._rows.pop(key)
        if key[2] != core.ORDINARY:
            self.copies -= 1
        if key in self._added:
            self._added.discard(key)
        else:
            self._gone.add(key)
        self._account(row, -1)
        self._index(row, False)

    def pop(self, key: core.RowKey, default: Any = None) -> Any:
        if key not in self._rows:
            return default
        row = self._rows[key]
        del self[key]
        return row

    def resize(self, process_guid: str, size: tuple[int, int]) -> None:
        """An app's memory or disk changed (or it went): re-account its instances."""
        rows = [self._rows[k] for k in self.by_guid.get(process_guid, ())]
        for row in rows:
            self._account(row, -1)
        self.sizes[process_guid] = size
        for row in rows:
            self._account(row, +1)

    def reproxy(self, cell_id: str, proxy: int) -> None:
        rows = [self._rows[k] for k in self.by_cell.get(cell_id, ())]
        for row in rows:
            self._account(row, -1)
        self.proxy[cell_id] = proxy
        for row in rows:
            self._account(row, +1)

    def holders(self, process_guid: str) -> dict[str, int]:
        """The app's instances that hold a container, per cell (its cells' ``Load.lrps``)."""
        counts: dict[str, int] = {}
        rows = self._rows
        for key in self.by_guid.get(process_guid, ()):
            row = rows[key]
            if holds_container(row.state, row.cell_id):
                counts[row.cell_id] = counts.get(row.cell_id, 0) + 1
        return counts

    @property
    def table(self) -> Mapping[core.RowKey, core.ActualLRP]:
        """The rows by key, to read (a hot loop's lookups without a method call each)."""
        return self._rows

    def listing_holds(self) -> bool:
        """Whether no row was written, added or removed since the last ``in_key_order``."""
        return self._listed is not None and not (self._changed or self._added or self._gone)

    def in_key_order(self) -> list[core.ActualLRP]:
        """Every row, by key (the order a convergence pass reads them in)."""
        order = self._order
        rows = self._rows
        listed = self._listed
        written = self.written
        written.update(key[0] for key in self._changed)
        written.update(key[0] for key in self._gone)
        if order is None or listed is None or self._added or self._gone:
            if order is None:
                order = sorted(rows)
            elif self._added or self._gone:
                if self._gone:
                    gone = self._gone
                    order = [k for k in order if k not in gone]
                order += sorted(self._added)
                order.sort()  # two sorted runs: one merge
            listed = list(map(rows.__getitem__, order))
            self._at = None
        elif self._changed:
            at = self._at
            if at is None:
                at = self._at = dict(zip(order, range(len(order)), strict=True))
            for key in self._changed:
                pos = at.get(key)  # a key added then deleted since is in neither
                if pos is not None:
                    listed[pos] = rows[key]
        self._order = order
        self._listed = listed
        self._added.clear()
        self._gone.clear()
        self._changed.clear()
        return list(listed)

    def of_guid(self, process_guid: str) -> list[core.ActualLRP]:
        return [self._rows[k] for k in sorted(self.by_guid.get(process_guid, ()))]

    def on_cell(self, cell_id: str) -> list[core.ActualLRP]:
        return [self._rows[k] for k in sorted(self.by_cell.get(cell_id, ()))]

    def __getitem__(self, key: core.RowKey) -> core.ActualLRP:
        return self._rows[key]

    def get(self, key: core.RowKey, default: Any = None) -> Any:
        return self._rows.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def __iter__(self) -> Iterator[core.RowKey]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def keys(self) -> KeysView[core.RowKey]:
        return self._rows.keys()

    def values(self) -> ValuesView[core.ActualLRP]:
        return self._rows.values()

    def items(self) -> ItemsView[core.RowKey, core.ActualLRP]:
        return self._rows.items()


def _index_key(index: dict[str, set[core.RowKey]], name: str, key: core.RowKey, add: bool) -> None:
    if not name:
        return
    keys = index.get(name)
    if add:
        if keys is None:
            keys = index[name] = set()
        keys.add(key)
    elif keys is not None:
        keys.discard(key)
        if not keys:
            del index[name]


@dataclass(slots=True)
class World:
    """The memory store (see the module docstring); ``run_until`` moves it in sim time."""

    seed: int = 0
    config: AuctionConfig = field(default_factory=AuctionConfig)
    convergence: core.ConvergenceConfig = field(default_factory=core.ConvergenceConfig)
    convergence_interval_s: float = 30.0
    now: float = 0.0
    cells: dict[str, SimCell] = field(default_factory=dict)
    apps: dict[str, SimApp] = field(default_factory=dict)
    domains: dict[str, float | None] = field(default_factory=dict)
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)
    proxy: dict[str, int] = field(default_factory=dict)
    rows: RowTable = field(default=None)  # type: ignore[assignment]
    tasks: dict[str, SimTask] = field(default_factory=dict)
    queue: dict[int, QueuedWork] = field(default_factory=dict)
    seq: int = 0
    timeline: list[tuple[float, int, str, str, dict[str, Any]]] = field(default_factory=list)
    done_steps: set[str] = field(default_factory=set)
    next_convergence_at: float | None = None
    # Events due on a failed cell's rep wait here until it is restored (heap entries).
    held: dict[str, list[tuple[str, Any]]] = field(default_factory=dict)
    completions: list[tuple[float, str]] = field(default_factory=list)
    # Process guids that ever had an instance on a cell (objective's cached blobs).
    cached: dict[str, set[str]] = field(default_factory=dict)
    auctions: list[AuctionRecord] = field(default_factory=list)
    passes: list[tuple[float, dict[str, int]]] = field(default_factory=list)
    counters: Counter[str] = field(default_factory=Counter)
    log: list[LogEntry] = field(default_factory=list)
    record_log: bool = True
    # A plan's world hands each auction's replay record here (``replay_record``), with
    # every verdict, while it answers True; the caller keeps what its bounds allow.
    replay_sink: Callable[[dict[str, Any]], bool] | None = field(default=None, compare=False, repr=False)
    # Per placed item over the whole run (auction.md 9).
    waits: list[float] = field(default_factory=list)
    attempts: list[int] = field(default_factory=list)
    failures_by_error: Counter[str] = field(default_factory=Counter)
    communications: int = 0
    initial_distribution: float | None = None
    # Indexes kept by ``apply`` so ``next_due`` never scans every cell or queue item.
    draining: set[str] = field(default_factory=set)
    lapsing: dict[str, float] = field(default_factory=dict)
    new_work: dict[int, float] = field(default_factory=dict)
    # Their earliest entries, as heaps checked against the dicts when read: ``next_due``
    # runs twice per instant, and 100,000 instances desired at once are 100,000 new items.
    # New work by instant: how many items of ``new_work`` were queued at each, and a heap
    # of those instants (one entry per instant, not per item: the items of one start
    # request share theirs).
    lapse_heap: list[tuple[float, str]] = field(default_factory=list)
    new_work_heap: list[float] = field(default_factory=list)
    new_work_waiting: dict[float, int] = field(default_factory=dict)
    # Each cell's load and fetched state as of its last change, kept between auctions: a
    # 1,000-cell world runs thousands of auctions and few cells change between two. A cell
    # is made anew when it, its instances or its blob cache change; every cell when a task
    # does (``_refetch``).
    fetched_loads: dict[str, Load] = field(default_factory=dict)
    fetched_states: dict[str, CellState] = field(default_factory=dict)
    unfetched: set[str] = field(default_factory=set)
    # The cells in the state fetch's order (``loads.answering``), kept until a cell is put:
    # sorting an already sorted list is one comparison per cell.
    fetch_order: list[SimCell] | None = None
    # The cells that answered the last fetch (``loads.answering``) and until when that
    # answer holds: until a cell is put or the next presence lapses.
    fetched: list[SimCell] | None = None
    fetched_at: float = 0.0
    fetched_until: float = 0.0
    # The engine's columns of the fetched states, refreshed per auction where a cell's
    # state is another object (``CellColumns``): most of 1,000 cells did not change.
    columns: CellColumns = field(default_factory=CellColumns, compare=False, repr=False)
    # The convergence pass's DesiredLRPs (``_desired``), with the apps they were made of.
    desired_kept: tuple[dict[str, SimApp], list[core.DesiredLRP]] | None = field(
        default=None, compare=False, repr=False)
    # The last pass's LRP half, when it did nothing and waits on no clock (``QuietLRPs``):
    # handed to the next pass with the same rows, while no row was written since.
    lrp_quiet: QuietLRPs | None = field(default=None, compare=False, repr=False)
    # The last walking pass's plain apps (``PlainApps``): the next pass reads only the rows
    # of the other apps and of those written since (``RowTable.written``).
    lrp_plain: PlainApps | None = field(default=None, compare=False, repr=False)
    # ``fetched`` with its positions by cell id and its kept states in that order, and the
    # cells restated since that list was last brought up to date (``_fetched_states``).
    states_in_order: tuple[list[SimCell], dict[str, int], list[CellState]] | None = field(
        default=None, compare=False, repr=False)
    restated: set[str] = field(default_factory=set, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.rows is None:
            self.rows = RowTable(self.sizes, self.proxy)
        if self.next_convergence_at is None:
            self.next_convergence_at = self.now + self.convergence_interval_s
        if not self.lapse_heap:
            self.lapse_heap = [(t, c) for c, t in self.lapsing.items()]
            heapq.heapify(self.lapse_heap)
        if not self.new_work and self.queue:  # a world built from its queue alone
            self.new_work = {seq: q.queued_at for seq, q in self.queue.items() if not q.carried}
        if not self.new_work_heap:
            self.new_work_waiting = dict(Counter(self.new_work.values()))
            self.new_work_heap = list(self.new_work_waiting)
            heapq.heapify(self.new_work_heap)

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        """A copy (``clone``, ``checkpoint``) leaves the quiet LRP half behind: its rows'
        listing is not copied either (``RowTable.__getstate__``), so it could not be used."""
        return None, {f.name: None if f.name in ("lrp_quiet", "lrp_plain") else getattr(self, f.name)
                      for f in fields(self)}

    # ------------------------------------------------------------------ building
    def restore_queue(self, items: Iterable[QueuedWork]) -> None:
        """Put work that a store already numbered (a clone of the live auctioneer's queue),
        keeping ``next_due``'s indexes: new work is due for the next auction."""
        for q in sorted(items, key=lambda q: q.seq):
            self.queue[q.seq] = q
            self.seq = max(self.seq, q.seq)
            if not q.carried:
                self._new_work_add(q.seq, q.queued_at)

    def add_cell(self, cell: SimCell) -> None:
        errors = cell_errors(cell_id=cell.cell_id, index=cell.index, memory_mb=cell.memory_mb,
                             disk_mb=cell.disk_mb, containers=cell.containers,
                             proxy_memory_mb=cell.proxy_memory_mb)
        if errors:
            raise WorldError(bbs_message(errors))
        if cell.cell_id in self.cells:
            raise WorldError(f"cell {cell.cell_id!r} already exists")
        if cell.state not in CELL_STATES:
            raise WorldError(f"cell {cell.cell_id!r}: unknown state {cell.state!r}")
        self.apply(ChangeSet(self.now, cells_put=[cell]))

    def upsert_domain(self, name: str, ttl: float) -> None:
        self.apply(ChangeSet(self.now, domains_put={name: None if ttl == 0 else self.now + ttl}))

    def desire_lrp(self, app: SimApp) -> None:
        """A DesiredLRP, one UNCLAIMED row per index and one start request (bbs.md 1.4)."""
        try:
            app = chaos_rules.desired_app(asdict(app))
        except ChaosError as exc:
            raise WorldError(exc.message) from None
        if app.process_guid in self.apps:
            raise WorldError(f"desired LRP {app.process_guid!r} already exists")
        existing = [r.index for r in self.rows.of_guid(app.process_guid) if r.presence == core.ORDINARY]
        self.apply(lrp_desire(app, existing, self.now))

    def desire_task(self, task: SimTask) -> None:
        guid = task.task.task_guid
        errors = task_errors(task_guid=guid, domain=task.task.domain, rootfs=task.rootfs,
                             memory_mb=task.memory_mb, disk_mb=task.disk_mb)
        if errors:
            raise WorldError(bbs_message(errors))
        if guid in self.tasks:
            raise WorldError(f"task {guid!r} already exists")
        self.apply(task_desire(task, self.now))

    def schedule_action(self, at: float, action: str, marker: str | None = None, **args: Any) -> None:
        """A timed chaos or deploy action (scenario timelines), checked now; ``marker``
        names it (``scenario_steps``)."""
        try:
            chaos_rules.chaos_args(action, args)
        except ChaosError as exc:
            raise WorldError(exc.message) from None
        position = len(self.timeline)
        self.timeline.append((at, position, marker or f"{position}:{action}@{at:g}", action, args))
        self.timeline.sort(key=lambda s: (s[0], s[1]))

    # ------------------------------------------------------------------ operating
    def act(self, action: str, **args: Any) -> None:
        """Run a chaos or operator action now (the registry's rule)."""
        try:
            change = chaos_rules.chaos_change(self, action, chaos_rules.chaos_args(action, args), self.now)
        except ChaosError as exc:
            raise WorldError(exc.message) from None
        self.apply(change)

    def cell_fail(self, cell_id: str) -> None:
        self.act("cell_fail", cell=cell_id)

    def cell_restore(self, cell_id: str) -> None:
        self.act("cell_restore", cell=cell_id)

    def cell_drain(self, cell_id: str) -> None:
        self.act("cell_drain", cell=cell_id)

    def zone_fail(self, zone: str) -> None:
        self.act("zone_fail", zone=zone)

    def zone_restore(self, zone: str) -> None:
        self.act("zone_restore", zone=zone)

    def crash_instance(self, process_guid: str, index: int) -> None:
        self.act("crash", process_guid=process_guid, index=index)

    def scale(self, process_guid: str, instances: int) -> None:
        self.act("scale", process_guid=process_guid, instances=instances)

    # ------------------------------------------------------------------ running
    def run_until(self, until: float) -> int:
        """Handle everything due at or before ``until``; the clock ends at ``until``."""
        with collector_paused():
            return advance(self, max(until, self.now))

    def run_for(self, seconds: float) -> int:
        return self.run_until(self.now + seconds)

    def follow(self, clock: ClockState, wall: float) -> int:
        """Run to a live clock's now at ``wall`` (pause, speed and step as the beat does)."""
        return self.run_until(clock.now(wall))

    def next_event_at(self) -> float | None:
        return self.next_due()

    def checkpoint(self) -> World:
        with collector_paused():
            return copy.deepcopy(self)

    def clone(self, **changes: Any) -> World:
        with collector_paused():
            world = copy.deepcopy(self)
        for name, value in changes.items():
            setattr(world, name, value)
        return world

    # ------------------------------------------------------------------ reads (ChaosReader)
    def cell(self, cell_id: str) -> SimCell | None:
        return self.cells.get(cell_id)

    def zone_cells(self, zone: str) -> list[SimCell]:
        return [c for c in self.cells.values() if c.zone == zone]

    def app(self, process_guid: str) -> SimApp | None:
        return self.apps.get(process_guid)

    def app_rows(self, process_guid: str) -> list[core.ActualLRP]:
        return self.rows.of_guid(process_guid)

    def rows_on(self, cell_id: str) -> list[core.ActualLRP]:
        return self.rows.on_cell(cell_id)

    def tasks_on(self, cell_id: str) -> list[SimTask]:
        return sorted((t for t in self.tasks.values() if t.task.cell_id == cell_id),
                      key=lambda t: t.task_guid)

    def reachable(self, cell_id: str, at: float) -> bool:
        cell = self.cells.get(cell_id)
        return cell is not None and not cell.silent and cell.has_presence(at)

    def answering(self) -> list[SimCell]:
        return answering(self.cells.values(), self.now)

    def loads(self) -> dict[str, Load]:
        """Each rep's reserved resources (``auction.sim.loads``); copies the world keeps
        until the cell changes, so they must not be changed."""
        return dict(self._refetch())

    def _refetch(self) -> dict[str, Load]:
        """The kept loads and states, the cells that changed made anew."""
        if not self.unfetched and not self.rows.stale:
            return self.fetched_loads
        changed = (self.unfetched | self.rows.stale) & self.cells.keys()
        self.unfetched.clear()
        self.rows.stale.clear()
        loads, states = self.fetched_loads, self.fetched_states
        for cell_id in changed:
            held = self.rows.loads.get(cell_id)
            loads[cell_id] = Load() if held is None else Load(
                held.memory_mb, held.disk_mb, held.containers, held.starting, dict(held.lrps))
        for sim_task in self.tasks.values():
            task = sim_task.task
            if task.state == core.TASK_RUNNING and task.cell_id in changed:
                add_task(loads[task.cell_id], task.task_guid, sim_task.memory_mb, sim_task.disk_mb)
        for cell_id in changed:
            states[cell_id] = cell_state(self.cells[cell_id], loads[cell_id])
        self.restated |= changed
        return loads

    def _states(self) -> Mapping[str, CellState]:
        """Every cell's answer to a state fetch (``loads.cell_state``), kept like its load;
        the ``objective`` strategy's blob caches are read anew (a clone may change it)."""
        loads = self._refetch()
        if self.config.placement_strategy == "objective":
            return {c: cell_state(self.cells[c], load, self.cached.get(c, ())) for c, load in loads.items()}
        return self.fetched_states

    def cell_states(self, cells: Iterable[SimCell] | None = None) -> list[CellState]:
        loads = self._refetch()
        chosen = self.answering() if cells is None else list(cells)
        # The states kept for the auctions are the same answer (``_refetch``): a cell's
        # state lists every instance on it, a quarter of a million at a real size.
        kept, current = self.fetched_states, self.cells
        return [kept[c.cell_id] if current.get(c.cell_id) is c else cell_state(c, loads[c.cell_id])
                for c in chosen]

    def instances_on(self, cell_id: str) -> list[core.ActualLRP]:
        return [r for r in self.rows.on_cell(cell_id) if r.state != core.UNCLAIMED]

    def cluster_view(self) -> ClusterView:
        """Everything ``auction.sim.cfdot`` prints, now."""
        return ClusterView(now=self.now, cells=list(self.cells.values()), loads=self.loads(),
                           apps=list(self.apps.values()), rows=list(self.rows.values()),
                           tasks=list(self.tasks.values()), domains=dict(self.domains),
                           events=[(e.at, e.type, e.key) for e in self.log],
                           queue=self.unplaced(), next_convergence_at=self.next_convergence_at,
                           convergence_interval_s=self.convergence_interval_s,
                           timeline=[(at, marker, action, args) for at, _, marker, action, args
                                     in self.timeline if marker not in self.done_steps])

    def unplaced(self) -> list[QueuedWork]:
        return sorted(self.queue.values(), key=QueuedWork.batch_key)

    # ------------------------------------------------------------------ Store: timing
    def next_due(self) -> float | None:
        # Runs twice per instant: the walk of draining cells only when there are some.
        # The order of the candidates is kept: of equal instants the first is returned
        # (a timed action at 120 before a pass at 120.0).
        draining = None
        if self.draining:
            draining = min((t for t in (next_evacuation_sync(c) for c in self._draining())
                            if t is not None), default=None)
        action = None
        for at, _, marker, _, _ in self.timeline:
            if marker not in self.done_steps:
                action = at
                break
        return next_instant((self._peek_start(), self._peek_crash(), self._peek_completion(),
                             draining, self._next_lapse(), action, self.next_convergence_at,
                             self._next_new_work()))

    def _next_lapse(self) -> float | None:
        """The earliest presence lapse still ahead (one already past stays past)."""
        heap = self.lapse_heap
        while heap:
            at, cell_id = heap[0]
            if at <= self.now or self.lapsing.get(cell_id) != at:
                heapq.heappop(heap)
                continue
            return at
        return None

    def _next_new_work(self) -> float | None:
        heap, waiting = self.new_work_heap, self.new_work_waiting
        while heap:
            at = heap[0]
            if at not in waiting:
                heapq.heappop(heap)
                continue
            return at
        return None

    def _new_work_add(self, seq: int, at: float) -> None:
        self.new_work[seq] = at
        waiting = self.new_work_waiting.get(at)
        if waiting is None:
            waiting = 0
            heapq.heappush(self.new_work_heap, at)
        self.new_work_waiting[at] = waiting + 1

    def _new_work_drop(self, seq: int) -> None:
        at = self.new_work.pop(seq, None)
        if at is not None:
            left = self.new_work_waiting[at] - 1
            if left:
                self.new_work_waiting[at] = left
            else:
                del self.new_work_waiting[at]  # its heap entry goes when it surfaces

    def _draining(self) -> list[SimCell]:
        return [self.cells[c] for c in self.draining]

    def _held(self, cell_id: str) -> bool:
        cell = self.cells.get(cell_id)
        return cell is not None and cell.silent

    def _peek_start(self) -> float | None:
        head = self._start_head()
        return None if head is None else head[0]

    def _start_head(self) -> tuple[float, core.ActualLRP] | None:
        """The earliest live start timer and its row (it stays last of its instant's
        list); stale entries are dropped and those of a held cell set aside on the way
        (the one rule of a live start). Within an instant, any order: the starts are
        sorted by instance when they are made."""
        heap, keys = self.rows.starts, self.rows.start_keys
        live = self._live_start
        while heap:
            at = heap[0]
            due = keys[at]
            while due:
                guid, index = due[-1]
                row = live(at, guid, index)
                if row is None:
                    due.pop()
                    continue
                return at, row
            heapq.heappop(heap)
            del keys[at]
        return None

    def _live_start(self, at: float, guid: str, index: int) -> core.ActualLRP | None:
        """The row of a start timer when it is live; None when it is stale, or when its
        cell is held (then set aside, to be looked at again when the cell reports)."""
        row = self.rows.table.get((guid, index, core.ORDINARY))
        if row is None or row.state != core.CLAIMED or row.ready_at != at:
            return None
        cell = self.cells.get(row.cell_id)
        if cell is not None and cell.silent:
            self.held.setdefault(row.cell_id, []).append(("start", (at, guid, index)))
            return None
        return row

    def _peek_crash(self) -> float | None:
        heap, table = self.rows.crashes, self.rows.table
        while heap:
            at, guid, index, presence = heap[0]
            row = table.get((guid, index, presence))
            if row is None or row.state not in (core.CLAIMED, core.RUNNING) or row.crash_at != at:
                heapq.heappop(heap)
                continue
            if self._held(row.cell_id):
                self.held.setdefault(row.cell_id, []).append(("crash", heapq.heappop(heap)))
                continue
            return at
        return None

    def _peek_completion(self) -> float | None:
        heap = self.completions
        while heap:
            at, guid = heap[0]
            sim_task = self.tasks.get(guid)
            task = sim_task.task if sim_task else None
            if task is None or task.state != core.TASK_RUNNING or task.finishes_at != at:
                heapq.heappop(heap)
                continue
            if self._held(task.cell_id):
                self.held.setdefault(task.cell_id, []).append(("complete", heapq.heappop(heap)))
                continue
            return at
        return None

    def due_actions(self, at: float) -> list[tuple[str, str, dict[str, object]]]:
        return [(marker, action, dict(args)) for when, _, marker, action, args in self.timeline
                if when <= at and marker not in self.done_steps]

    def due_starts(self, at: float) -> tuple[list[core.ActualLRP],
                                             dict[core.LRPKey, list[core.ActualLRP]],
                                             dict[str, SimApp]]:
        rows: list[core.ActualLRP] = []
        seen: set[core.RowKey] = set()  # a set, not a scan: a zone's replacements start together
        keys, table, live = self.rows.start_keys, self.rows.table, self._live_start
        while (head := self._start_head()) is not None and head[0] <= at:
            when, row = head
            due = keys[when]
            due.pop()
            found: core.ActualLRP | None = row
            while found is not None:
                key = found.key
                if key not in seen:
                    seen.add(key)
                    rows.append(found)
                # The rest of the instant's timers, each checked by the same rule as the
                # head (an app's instances start together: one heap look per instant).
                found = None
                while due and found is None:
                    found = live(when, *due.pop())
        # Only the indices that have a copy (most have none): ``instances_start`` reads
        # an absent one as none.
        copies: dict[core.LRPKey, list[core.ActualLRP]] = {}
        for r in rows if self.rows.copies else ():
            for presence in (core.EVACUATING, core.SUSPECT):
                if (c := table.get((r.process_guid, r.index, presence))) is not None:
                    copies.setdefault(r.lrp_key, []).append(c)
        return rows, copies, self.apps

    def due_crashes(self, at: float) -> list[core.ActualLRP]:
        rows: list[core.ActualLRP] = []
        seen: set[core.RowKey] = set()
        while (due := self._peek_crash()) is not None and due <= at:
            _, guid, index, presence = heapq.heappop(self.rows.crashes)
            row = self.rows[(guid, index, presence)]
            if row.key not in seen:
                seen.add(row.key)
                rows.append(row)
        return rows

    def due_completions(self, at: float) -> list[SimTask]:
        done: list[SimTask] = []
        while (due := self._peek_completion()) is not None and due <= at:
            _, guid = heapq.heappop(self.completions)
            if all(t.task_guid != guid for t in done):
                done.append(self.tasks[guid])
        return done

    def due_evacuations(self, at: float) -> list[SimCell]:
        if not self.draining:
            return []  # asked at every instant: no sort of nothing
        return [cell for cell in sorted(self._draining(), key=lambda c: c.cell_id)
                if (due := next_evacuation_sync(cell)) is not None and due <= at]

    def evacuation_view(self, cell_id: str) -> tuple[list[core.ActualLRP], dict[core.LRPKey, str],
                                                     set[str], bool]:
        on_cell = self.rows.on_cell(cell_id)
        guids = {r.process_guid for r in on_cell}
        ordinary = {r.lrp_key: r.state for g in guids for r in self.rows.of_guid(g)
                    if r.presence == core.ORDINARY}
        desired = {g for g in guids if g in self.apps}
        tasks_left = any(t.task.cell_id == cell_id and t.task.state == core.TASK_RUNNING
                         for t in self.tasks.values())
        return on_cell, ordinary, desired, tasks_left

    def due_lapses(self, at: float) -> list[SimCell]:
        ahead = self._next_lapse()
        if ahead is None or ahead > at:
            return []
        return sorted((self.cells[c] for c, lost in self.lapsing.items() if self.now < lost <= at),
                      key=lambda c: c.cell_id)

    def convergence_due(self, at: float) -> bool:
        return self.next_convergence_at is not None and self.next_convergence_at <= at

    def convergence_input(self, at: float) -> tuple[core.Snapshot, set[str], set[str], float,
                                                    QuietLRPs | None]:
        quiet = self.lrp_quiet
        known = None
        if quiet is not None and self.rows.listing_holds():
            actual = quiet.snapshot.actual  # the very list: the rows are the same
        else:
            quiet, actual = None, self.rows.in_key_order()
            known = KnownRows(self.lrp_plain, self.rows.written)
        snapshot = core.Snapshot(
            now=at, cells=frozenset(c.cell_id for c in self.cells.values() if c.has_presence(at)),
            domains=dict(self.domains),
            desired=self._desired(),
            actual=actual, tasks=[t.task for t in self.tasks.values()],
            config=self.convergence, ordered=True, known=known)
        silent = {c.cell_id for c in self.cells.values() if c.silent}
        otto = {g for g, t in self.tasks.items() if t.placement_mode != "diego"}
        return snapshot, silent, otto, self.convergence_interval_s, quiet

    def _desired(self) -> list[core.DesiredLRP]:
        """The DesiredLRPs by process guid, kept until an app is put or removed: a pass
        on 50,000 apps made them all anew though none changed."""
        kept = self.desired_kept
        if kept is None or kept[0] is not self.apps:
            kept = self.desired_kept = (self.apps, [
                core.DesiredLRP(a.process_guid, a.domain, a.instances)
                for a in sorted(self.apps.values(), key=_app_order)])
        return list(kept[1])

    def has_new_work(self) -> bool:
        # ``new_work`` holds every item not carried over: the rule needs no other.
        return bool(self.new_work) and has_new_work(self.queue[seq] for seq in self.new_work)

    def auction_config(self) -> AuctionConfig:
        return self.config

    def round_input(self, at: float) -> RoundInput:
        queue = list(self.queue.values())
        unclaimed = {}
        for q in queue:
            if q.kind == "lrp":
                row = self.rows.get((q.process_guid, q.index, core.ORDINARY))
                if row is not None and row.state == core.UNCLAIMED:
                    unclaimed[(q.process_guid, q.index)] = row
        states = self._states()
        explain = self.replay_sink is not None and explain_wanted(len(queue), len(self.answering()))
        if self.fetch_order is None:
            self.fetch_order = sorted(self.cells.values(), key=FETCH_ORDER)
        fetched = self._fetched(at)
        in_order = self._fetched_states(fetched) if states is self.fetched_states else None
        return RoundInput(at=at, queue=queue, cells=self.fetch_order, loads=self.fetched_loads,
                          apps=self.apps, unclaimed=unclaimed, tasks=self.tasks,
                          config=self.config, cached=self.cached, states=states,
                          holders=self.rows.holders, explain=explain,
                          columns=self.columns, fetched=fetched, cells_by_id=self.cells,
                          fetched_states=in_order)

    def _fetched_states(self, fetched: list[SimCell]) -> list[CellState]:
        """The kept states of ``fetched`` in its order: made again when the answering cells
        change, else only the cells restated since (``_refetch``) are written in."""
        kept = self.states_in_order
        states = self.fetched_states
        if kept is None or kept[0] is not fetched:
            in_order = list(map(states.__getitem__, map(_cell_id, fetched)))
            kept = self.states_in_order = (fetched, {c.cell_id: n for n, c in enumerate(fetched)}, in_order)
        else:
            positions, in_order = kept[1], kept[2]
            for cell_id in self.restated:
                pos = positions.get(cell_id)
                if pos is not None:
                    in_order[pos] = states[cell_id]
        self.restated.clear()
        return kept[2]

    def _fetched(self, at: float) -> list[SimCell]:
        """``loads.answering`` at ``at``, kept while no cell is put and no presence lapses."""
        if self.fetched is None or not self.fetched_at <= at < self.fetched_until:
            if self.fetch_order is None:
                self.fetch_order = sorted(self.cells.values(), key=FETCH_ORDER)
            self.fetched = answering(self.fetch_order, at)
            self.fetched_at = at
            self.fetched_until = min((c.presence_lost_at for c in self.fetch_order
                                      if c.presence_lost_at is not None and c.presence_lost_at > at),
                                     default=math.inf)
        return self.fetched

    def advanced(self, to: float) -> None:
        self.now = max(self.now, to)

    def phase(self) -> AbstractContextManager[object]:
        return _NO_TRANSACTION

    def read_apart(self) -> AbstractContextManager[object | None]:
        return _NO_TRANSACTION  # one thread, no other writer: read in the phase

    def unchanged_since(self, mark: object) -> bool:
        return True

    def prepare(self, change: ChangeSet) -> None:
        pass

    # ------------------------------------------------------------------ Store: apply
    def apply(self, change: ChangeSet) -> None:
        at = change.at
        if change.apps_put or change.apps_removed:
            self.desired_kept = None
        for app in change.apps_put:
            self.apps[app.process_guid] = app
            if self.sizes.get(app.process_guid) != (app.memory_mb, app.disk_mb):
                self.rows.resize(app.process_guid, (app.memory_mb, app.disk_mb))
        for guid in change.apps_removed:
            self.apps.pop(guid, None)
            self.rows.resize(guid, (0, 0))
        for cell in change.cells_put:
            self._cell_put(cell)
        rows = self.rows
        for op in change.lrp_ops:
            # Most ops (claims, starts) are updates: tried first, in the loop itself.
            if isinstance(op, RowUpdate):
                after = op.after
                if after.state == core.CLAIMED and op.before.state == core.UNCLAIMED:
                    self._blob_cached(after)
                rows.update(op.key, after)
            elif isinstance(op, RowCreate):
                rows[op.row.key] = op.row
            elif isinstance(op, RowDelete):
                rows.pop(op.key, None)
        if change.tasks_put or change.task_ops:
            self.unfetched.update(self.cells)  # a cell's running tasks: a walk of every task
        for sim_task in change.tasks_put:
            self.tasks[sim_task.task_guid] = sim_task
        for top in change.task_ops:
            guid = top.before.task_guid
            if isinstance(top, TaskDelete):
                self.tasks.pop(guid, None)
            elif guid in self.tasks:
                self.tasks[guid] = replace(self.tasks[guid], task=top.after)
                done_at = top.after.finishes_at
                if done_at is not None and top.after.state == core.TASK_RUNNING:
                    heapq.heappush(self.completions, (done_at, guid))
        self.domains.update(change.domains_put)
        for name in change.domains_removed:
            self.domains.pop(name, None)
        queued = len(self.queue)
        for seq in change.queue_remove:
            self.queue.pop(seq, None)
            self._new_work_drop(seq)
        for guid, keep in change.queue_drop:
            for seq in [s for s, q in self.queue.items()
                        if q.kind == "lrp" and q.process_guid == guid and (q.index or 0) >= keep]:
                del self.queue[seq]
                self._new_work_drop(seq)
        for q in change.queue_put:
            if q.seq in self.queue:
                self.queue[q.seq] = q
                if q.carried:
                    self._new_work_drop(q.seq)
        if queued > 64 and len(self.queue) <= queued // 2:
            # A dict never shrinks: once 100,000 items left, every walk of the queue (each
            # auction's) would still step over 100,000 empty slots.
            self.queue, self.new_work = dict(self.queue), dict(self.new_work)
        for q in change.queue_add:
            self.seq += 1
            self.queue[self.seq] = q.numbered(self.seq)
            self._new_work_add(self.seq, q.queued_at)
        if self.record_log:
            self.log += _entries(at, change.events)
            self.log += [LogEntry(at, n.type, n.key, n.cell_id) for n in change.notes]
        if change.counters:
            self.counters.update(change.counters)
        if change.auction is not None:
            self._record_auction(change.auction)
        if change.convergence is not None:
            self.passes.append((at, dict(change.convergence.metrics)))
            self.lrp_quiet = change.convergence.result.quiet
            plain = change.convergence.result.selection.plain
            if plain is not self.lrp_plain:  # a pass that read the rows: its plain apps
                self.lrp_plain = plain
                self.rows.written = set()
        if change.next_convergence_at is not None:
            self.next_convergence_at = change.next_convergence_at
        self.done_steps.update(change.steps_done)

    def _cell_put(self, cell: SimCell) -> None:
        old = self.cells.get(cell.cell_id)
        self.cells[cell.cell_id] = cell
        self.fetch_order = None
        self.fetched = None
        self.unfetched.add(cell.cell_id)
        if cell.state == DRAINING:
            self.draining.add(cell.cell_id)
        else:
            self.draining.discard(cell.cell_id)
        if cell.presence_lost_at is None:
            self.lapsing.pop(cell.cell_id, None)
        else:
            self.lapsing[cell.cell_id] = cell.presence_lost_at
            heapq.heappush(self.lapse_heap, (cell.presence_lost_at, cell.cell_id))
        if old is None or old.proxy_memory_mb != cell.proxy_memory_mb:
            self.rows.reproxy(cell.cell_id, cell.proxy_memory_mb)
        if old is not None and old.silent and not cell.silent:
            # Its rep reports again: what came due while it was silent is looked at anew.
            heaps: dict[str, list[Any]] = {"crash": self.rows.crashes, "complete": self.completions}
            for kind, entry in self.held.pop(cell.cell_id, []):
                if kind == "start":
                    self.rows.start_at(*entry)
                else:
                    heapq.heappush(heaps[kind], entry)

    def _blob_cached(self, claimed: core.ActualLRP) -> None:
        """The objective strategy's blob cache: every app a cell ever ran."""
        blobs = self.cached.get(claimed.cell_id)
        if blobs is None:
            blobs = self.cached[claimed.cell_id] = set()
        if claimed.process_guid not in blobs:
            blobs.add(claimed.process_guid)
            self.unfetched.add(claimed.cell_id)

    def _record_auction(self, record: RoundRecord) -> None:
        result, stats = record.result, record.stats
        if self.initial_distribution is None:
            self.initial_distribution = stats.distribution_initial
        self.waits += record.waits
        self.attempts += record.attempts
        self.failures_by_error.update(result.failures.values())
        self.communications += stats.communications
        self.auctions.append(AuctionRecord(record.at, len(record.batch), dict(result.placements),
                                           dict(result.failures), list(result.order), stats))
        if self.replay_sink is not None and not self.replay_sink(
                replay_fields(record, self._copies(copy_keys(record)))):
            self.replay_sink = None

    def _copies(self, keys: set[tuple[str, int]]) -> dict[tuple[str, int], tuple[str, str]]:
        copies = {}
        for guid, index in keys:
            for presence in (core.SUSPECT, core.EVACUATING):
                row = self.rows.get((guid, index, presence))
                if row is not None:
                    copies[(guid, index)] = (presence, row.cell_id)
        return copies


_app_order = attrgetter("process_guid")
_cell_id = attrgetter("cell_id")
#: ``phase`` has no transaction to open: one reusable no-op context for every phase.
_NO_TRANSACTION = nullcontext()




def _entries(at: float, events: Iterable[Any]) -> list[LogEntry]:
    """An entry per event, keyed by its row (after, else before). An instance change's
    events (instance, then group) name the same row: its key is made once for both."""
    entries: list[LogEntry] = []
    last: Any = None
    key = cell_id = ""
    for event in events:
        row = event.after if event.after is not None else event.before
        if row is not last:
            last = row
            if isinstance(row, core.ActualLRP):
                key, cell_id = f"{row.process_guid}.{row.index}", row.cell_id
            elif isinstance(row, core.Task):
                key, cell_id = row.task_guid, row.cell_id
            else:
                key, cell_id = getattr(row, "process_guid", ""), ""
        entries.append(LogEntry(at, event.type, key, cell_id))
    return entries


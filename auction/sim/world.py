"""A whole simulated cluster in memory: cells, reps, one clock, auctions, convergence.

The same rules as the database shell (``auction/services``: auctioneer, convergence,
reps, cells, sim), composed from the same pure cores (``auction.engine`` schedules and
commits, ``auction.bbs`` converges, crashes and moves tasks, ``auction.sim.reps`` draws
crashes), but driven by a heap of timed events instead of beat ticks, so a run is
exact in sim time and fast enough to compare strategies side by side.

Events: a claimed instance starts after its app's delay; a started instance may crash
(seeded draw); a task completes after its run time; convergence every 30 s (timer only,
bbs.md 4.1); auctions run back to back at the instant work is queued while new work
waits (auction.md 1 step 2); a failed cell's presence lapses 10-15 s later (bbs.md 6.1);
a draining cell syncs every 10 s (bbs.md 6.3); scenario chaos at its own instant.

A ``World`` is plain data: ``copy.deepcopy`` clones it (comparison panes start from one
clone each; ``checkpoint``/``restore`` reset a scenario).
"""

from __future__ import annotations

import copy
import heapq
import time
from collections import Counter, deque
from collections.abc import ItemsView, Iterable, Iterator, KeysView, ValuesView
from dataclasses import dataclass, field
from typing import Any

from auction.bbs import task_states
from auction.bbs import types as core
from auction.bbs.changes import RowCreate, RowDelete, RowUpdate, TaskDelete
from auction.bbs.convergence import converge
from auction.bbs.crash import crash
from auction.bbs.errors import BBSError
from auction.bbs.lrp_operations import unclaim
from auction.bbs.validation import (
    bbs_message,
    cell_errors,
    desired_lrp_errors,
    simulation_errors,
    task_errors,
)
from auction.engine import (
    AuctionConfig,
    CellState,
    LRPWork,
    Resources,
    TaskWork,
    apply_commits,
    commit,
    container_memory,
    dedupe,
    order_batch,
    schedule,
)
from auction.sim.clock import ClockState
from auction.sim.quality import AuctionStats, auction_stats
from auction.sim.reps import (
    CRASH_REASON,
    EVACUATION_SYNC_S,
    crash_time,
    evacuation_over,
    evacuation_plan,
    instance_address,
    presence_lapses_at,
)

HEALTHY, DRAINING, FAILED = "healthy", "draining", "failed"
MAX_AUCTIONS_PER_RUN = 100
LOG_LIMIT = 2000


class WorldError(ValueError):
    """A request the simulated cluster refuses (unknown cell, duplicate guid...)."""


@dataclass(slots=True)
class SimCell:
    cell_id: str
    zone: str
    index: int = 0
    memory_mb: int = 8192
    disk_mb: int = 32768
    containers: int = 250
    preloaded_rootfses: tuple[str, ...] = ("cflinuxfs4",)
    rootfs_providers: tuple[str, ...] = ("docker",)
    volume_drivers: tuple[str, ...] = ()
    placement_tags: tuple[str, ...] = ()
    optional_placement_tags: tuple[str, ...] = ()
    proxy_memory_mb: int = 0
    state: str = HEALTHY
    presence_lost_at: float | None = None
    evacuating_since: float | None = None
    evacuation_synced_at: float | None = None

    def has_presence(self, now: float) -> bool:
        return self.presence_lost_at is None or now < self.presence_lost_at


@dataclass(slots=True)
class SimApp:
    """A DesiredLRP with the simulator's knobs (start delay, crash odds)."""

    process_guid: str
    domain: str = "cf-apps"
    instances: int = 1
    memory_mb: int = 256
    disk_mb: int = 1024
    rootfs: str = "preloaded:cflinuxfs4"
    placement_tags: tuple[str, ...] = ()
    volume_drivers: tuple[str, ...] = ()
    start_delay_s: float = 3.0
    crash_probability: float = 0.0
    crash_after_s: float = 10.0


@dataclass(slots=True)
class SimTask:
    task: core.Task
    memory_mb: int = 256
    disk_mb: int = 1024
    rootfs: str = "preloaded:cflinuxfs4"
    placement_tags: tuple[str, ...] = ()
    volume_drivers: tuple[str, ...] = ()
    duration_s: float = 60.0
    placement_mode: str = "diego"


@dataclass(slots=True)
class Pending:
    """One queued start request item (the shell's PendingWork row)."""

    ident: str
    kind: str  # "lrp" | "task"
    guid: str
    index: int
    queued_at: float
    seq: int
    carried: bool = False
    batch_position: int = 0
    attempts: int = 1
    last_error: str = ""


@dataclass(slots=True)
class AuctionRecord:
    at: float
    items: int
    placed: dict[str, str]
    failures: dict[str, str]
    order: list[str]
    stats: AuctionStats


@dataclass(slots=True)
class LogEntry:
    at: float
    type: str
    key: str = ""
    cell_id: str = ""


class RowTable:
    """The ActualLRP rows by key, keeping each cell's reserved resources up to date.

    A rep reserves a container for every CLAIMED or RUNNING instance on it, whatever
    its presence (the shell's ``cell_loads``); keeping that sum per write instead of
    recounting 10,000 rows per auction is what lets a 1,000-cell world run fast.
    """

    __slots__ = ("_rows", "_sizes", "_proxy", "loads")

    def __init__(self, sizes: dict[str, tuple[int, int]], proxy: dict[str, int]) -> None:
        self._rows: dict[core.RowKey, core.ActualLRP] = {}
        self._sizes = sizes  # shared with the world: process guid -> (memory, disk)
        self._proxy = proxy  # shared with the world: cell id -> proxy memory
        self.loads: dict[str, Load] = {}

    def _account(self, row: core.ActualLRP, sign: int) -> None:
        if row.state != core.CLAIMED and row.state != core.RUNNING or not row.cell_id:
            return
        load = self.loads.get(row.cell_id)
        if load is None:
            load = self.loads[row.cell_id] = Load()
        memory, disk = self._sizes.get(row.process_guid, (0, 0))
        load.memory_mb += sign * container_memory(memory, self._proxy.get(row.cell_id, 0))
        load.disk_mb += sign * disk
        load.containers += sign
        if row.state == core.CLAIMED:
            load.starting += sign
        if sign > 0:
            load.lrps.append(row.process_guid)
        else:
            load.lrps.remove(row.process_guid)

    def __setitem__(self, key: core.RowKey, row: core.ActualLRP) -> None:
        old = self._rows.get(key)
        if old is not None:
            self._account(old, -1)
        self._rows[key] = row
        self._account(row, +1)

    def __delitem__(self, key: core.RowKey) -> None:
        self._account(self._rows.pop(key), -1)

    def pop(self, key: core.RowKey, default: Any = None) -> Any:
        row = self._rows.pop(key, None)
        if row is None:
            return default
        self._account(row, -1)
        return row

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


@dataclass(slots=True)
class World:
    seed: int = 0
    config: AuctionConfig = field(default_factory=AuctionConfig)
    convergence: core.ConvergenceConfig = field(default_factory=core.ConvergenceConfig)
    convergence_interval_s: float = 30.0
    now: float = 0.0
    cells: dict[str, SimCell] = field(default_factory=dict)
    apps: dict[str, SimApp] = field(default_factory=dict)
    domains: dict[str, float | None] = field(default_factory=dict)
    # process guid -> (memory, disk) and cell id -> proxy memory, shared with ``rows``.
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)
    proxy: dict[str, int] = field(default_factory=dict)
    rows: RowTable = field(default=None)  # type: ignore[assignment]
    tasks: dict[str, SimTask] = field(default_factory=dict)
    pending: dict[int, Pending] = field(default_factory=dict)
    # Events: (at, seq, kind, payload); seq keeps equal instants in scheduling order.
    heap: list[tuple[float, int, str, Any]] = field(default_factory=list)
    seq: int = 0
    auction_due: bool = False
    # Events that came due on a failed cell's rep: it reports nothing until restored.
    held: dict[str, list[tuple[str, Any]]] = field(default_factory=dict)
    # Process guids that ever had an instance on a cell (objective's cached blobs).
    cached: dict[str, set[str]] = field(default_factory=dict)
    auctions: list[AuctionRecord] = field(default_factory=list)
    passes: list[tuple[float, dict[str, int]]] = field(default_factory=list)
    counters: Counter[str] = field(default_factory=Counter)
    log: deque[LogEntry] = field(default_factory=lambda: deque(maxlen=LOG_LIMIT))
    # Per placed item (auction.md 9): wait and attempts over the whole run.
    waits: list[float] = field(default_factory=list)
    attempts: list[int] = field(default_factory=list)
    failures_by_error: Counter[str] = field(default_factory=Counter)
    communications: int = 0
    initial_distribution: float | None = None
    instance_serial: int = 0
    next_convergence_at: float = 0.0

    def __post_init__(self) -> None:
        if self.rows is None:
            self.rows = RowTable(self.sizes, self.proxy)
        if not self.heap and self.next_convergence_at == 0.0:
            self.next_convergence_at = self.now + self.convergence_interval_s
            self._push(self.next_convergence_at, "converge", None)

    # ------------------------------------------------------------------ building
    def add_cell(self, cell: SimCell) -> None:
        errors = cell_errors(cell_id=cell.cell_id, index=cell.index, memory_mb=cell.memory_mb,
                             disk_mb=cell.disk_mb, containers=cell.containers,
                             proxy_memory_mb=cell.proxy_memory_mb)
        if errors:
            raise WorldError(bbs_message(errors))
        if cell.cell_id in self.cells:
            raise WorldError(f"cell {cell.cell_id!r} already exists")
        if cell.state not in (HEALTHY, DRAINING, FAILED):
            raise WorldError(f"cell {cell.cell_id!r}: unknown state {cell.state!r}")
        self.cells[cell.cell_id] = cell
        self.proxy[cell.cell_id] = cell.proxy_memory_mb

    def upsert_domain(self, name: str, ttl: float) -> None:
        self.domains[name] = None if ttl == 0 else self.now + ttl

    def desire_lrp(self, app: SimApp) -> None:
        """A DesiredLRP and one UNCLAIMED row per index, then one start request (bbs.md 1.4)."""
        if app.process_guid in self.apps:
            raise WorldError(f"desired LRP {app.process_guid!r} already exists")
        errors = desired_lrp_errors(
            process_guid=app.process_guid, domain=app.domain, rootfs=app.rootfs,
            instances=app.instances, memory_mb=app.memory_mb, disk_mb=app.disk_mb,
        ) + simulation_errors(start_delay_s=app.start_delay_s, crash_probability=app.crash_probability,
                              crash_after_s=app.crash_after_s)
        if errors:
            raise WorldError(bbs_message(errors))
        self.apps[app.process_guid] = app
        self.sizes[app.process_guid] = (app.memory_mb, app.disk_mb)
        for i in range(app.instances):
            self.rows[(app.process_guid, i, core.ORDINARY)] = core.ActualLRP(
                app.process_guid, i, core.UNCLAIMED, domain=app.domain, since=self.now)
        self._request_lrps(((app.process_guid, i) for i in range(app.instances)), "desire")

    def desire_task(self, task: SimTask) -> None:
        guid = task.task.task_guid
        errors = task_errors(task_guid=guid, domain=task.task.domain, rootfs=task.rootfs,
                             memory_mb=task.memory_mb, disk_mb=task.disk_mb)
        if errors:
            raise WorldError(bbs_message(errors))
        if guid in self.tasks:
            raise WorldError(f"task {guid!r} already exists")
        task.task.state = core.PENDING
        task.task.created_at = task.task.updated_at = self.now
        self.tasks[guid] = task
        if task.placement_mode == "diego":
            self._request_tasks([guid], "desire")

    def schedule_action(self, at: float, action: str, **args: Any) -> None:
        """A timed chaos or deploy action (scenario timelines)."""
        if action not in ACTIONS:
            raise WorldError(f"unknown action {action!r}; known: {', '.join(sorted(ACTIONS))}")
        self._push(at, "action", (action, args))

    # ------------------------------------------------------------------ running
    def run_until(self, until: float) -> int:
        """Handle every event due at or before ``until``; the clock ends at ``until``."""
        handled = 0
        while self.heap and self.heap[0][0] <= until:
            at, _, kind, payload = heapq.heappop(self.heap)
            self.now = max(self.now, at)
            HANDLERS[kind](self, payload)
            handled += 1
        self.now = max(self.now, until)
        return handled

    def run_for(self, seconds: float) -> int:
        return self.run_until(self.now + seconds)

    def follow(self, clock: ClockState, wall: float) -> int:
        """Run to the sim clock's now at ``wall`` (``auction.sim.clock``): a world can
        follow a live clock (pause, speed, step) as the database shell's beat does."""
        return self.run_until(clock.now(wall))

    def next_event_at(self) -> float | None:
        return self.heap[0][0] if self.heap else None

    def checkpoint(self) -> World:
        return copy.deepcopy(self)

    def clone(self, **changes: Any) -> World:
        world = copy.deepcopy(self)
        for name, value in changes.items():
            setattr(world, name, value)
        return world

    # ------------------------------------------------------------------ chaos
    def cell_fail(self, cell_id: str) -> None:
        cell = self._cell(cell_id)
        cell.state = FAILED
        if cell.presence_lost_at is None:
            cell.presence_lost_at = presence_lapses_at(self.now)
            self._push(cell.presence_lost_at, "presence_lost", cell_id)
        self._log("cell_fail", cell_id, cell_id)

    def cell_restore(self, cell_id: str) -> None:
        cell = self._cell(cell_id)
        cell.state = HEALTHY
        cell.presence_lost_at = cell.evacuating_since = cell.evacuation_synced_at = None
        self._log("cell_restore", cell_id, cell_id)
        for kind, payload in self.held.pop(cell_id, []):
            self._push(self.now, kind, payload)

    def cell_drain(self, cell_id: str) -> None:
        cell = self._cell(cell_id)
        if cell.state != HEALTHY:
            raise WorldError(f"cell {cell_id} is {cell.state}; only a healthy cell can drain")
        cell.state = DRAINING
        cell.evacuating_since = self.now
        self._log("cell_drain", cell_id, cell_id)
        self._evacuation_sync(cell_id)

    def zone_fail(self, zone: str) -> None:
        for cell_id in self._zone(zone):
            self.cell_fail(cell_id)

    def zone_restore(self, zone: str) -> None:
        for cell_id in self._zone(zone):
            self.cell_restore(cell_id)

    def crash_instance(self, process_guid: str, index: int) -> None:
        row = self.rows.get((process_guid, index, core.ORDINARY))
        if row is None or row.state not in (core.CLAIMED, core.RUNNING):
            raise WorldError(f"{process_guid}.{index}: only a CLAIMED or RUNNING instance can crash")
        self._crash(row)

    # ------------------------------------------------------------------ reads
    def answering(self) -> list[SimCell]:
        """Cells that answer the state fetch: healthy with a presence (auction.md 1.3)."""
        return sorted((c for c in self.cells.values() if c.state == HEALTHY and c.has_presence(self.now)),
                      key=lambda c: (c.zone, c.index, c.cell_id))

    def loads(self) -> dict[str, Load]:
        """Each rep's reserved resources: CLAIMED/RUNNING instances (any presence) + proxy,
        and RUNNING tasks (the shell's ``cell_loads``)."""
        lrp_loads = self.rows.loads
        loads = {}
        for cell_id in self.cells:
            held = lrp_loads.get(cell_id)
            loads[cell_id] = Load() if held is None else Load(
                held.memory_mb, held.disk_mb, held.containers, held.starting, list(held.lrps))
        for sim_task in self.tasks.values():
            task = sim_task.task
            if task.state == core.TASK_RUNNING and task.cell_id in loads:
                load = loads[task.cell_id]
                load.memory_mb += sim_task.memory_mb
                load.disk_mb += sim_task.disk_mb
                load.containers += 1
                load.tasks.append(task.task_guid)
        return loads

    def cell_states(self, cells: Iterable[SimCell] | None = None) -> list[CellState]:
        loads = self.loads()
        cells = self.answering() if cells is None else list(cells)
        return [self._cell_state(c, loads[c.cell_id]) for c in cells]

    def instances_on(self, cell_id: str) -> list[core.ActualLRP]:
        return [r for r in self.rows.values() if r.cell_id == cell_id and r.state != core.UNCLAIMED]

    def unplaced(self) -> list[Pending]:
        return sorted(self.pending.values(), key=lambda p: (not p.carried, p.batch_position, p.seq))

    # ------------------------------------------------------------------ internals
    def _push(self, at: float, kind: str, payload: Any) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (at, self.seq, kind, payload))

    def _log(self, type_: str, key: str = "", cell_id: str = "") -> None:
        self.log.append(LogEntry(self.now, type_, key, cell_id))

    def _cell(self, cell_id: str) -> SimCell:
        cell = self.cells.get(cell_id)
        if cell is None:
            raise WorldError(f"unknown cell {cell_id!r}")
        return cell

    def _zone(self, zone: str) -> list[str]:
        ids = [c.cell_id for c in self.cells.values() if c.zone == zone]
        if not ids:
            raise WorldError(f"unknown zone {zone!r}")
        return ids

    def _silent(self, cell_id: str) -> bool:
        cell = self.cells.get(cell_id)
        return cell is not None and cell.state == FAILED

    def _hold(self, cell_id: str, kind: str, payload: Any) -> bool:
        """A failed cell's rep reports nothing: keep the event until it is restored."""
        if self._silent(cell_id):
            self.held.setdefault(cell_id, []).append((kind, payload))
            return True
        return False

    def _cell_state(self, cell: SimCell, load: Load) -> CellState:
        return CellState(
            cell_id=cell.cell_id, zone=cell.zone, index=cell.index,
            total=Resources(cell.memory_mb, cell.disk_mb, cell.containers),
            available=Resources(cell.memory_mb - load.memory_mb, cell.disk_mb - load.disk_mb,
                                cell.containers - load.containers),
            starting_containers=load.starting, lrps=tuple(load.lrps), tasks=tuple(load.tasks),
            preloaded_rootfses=cell.preloaded_rootfses, rootfs_providers=cell.rootfs_providers,
            volume_drivers=cell.volume_drivers, placement_tags=cell.placement_tags,
            optional_placement_tags=cell.optional_placement_tags,
            proxy_memory_mb=cell.proxy_memory_mb,
            # Only the objective strategy reads the blob cache (auction.md 8.2).
            cached_blob_ids=tuple(sorted(self.cached.get(cell.cell_id, ())))
            if self.config.placement_strategy == "objective" else (),
        )

    def _request_lrps(self, keys: Iterable[tuple[str, int]], reason: str) -> None:
        for guid, index in keys:
            self._enqueue(Pending(f"{guid}.{index}", "lrp", guid, index, self.now, self.seq))
            self.seq += 1

    def _request_tasks(self, guids: Iterable[str], reason: str) -> None:
        for guid in guids:
            self._enqueue(Pending(guid, "task", guid, 0, self.now, self.seq))
            self.seq += 1

    def _enqueue(self, item: Pending) -> None:
        self.pending[item.seq] = item
        if not self.auction_due:
            self.auction_due = True
            self._push(self.now, "auction", None)

    # -- auctions (auction.md 1; the shell's auctioneer_run / auction_once)
    def _auctioneer_run(self, _: Any) -> None:
        self.auction_due = False
        for _ in range(MAX_AUCTIONS_PER_RUN):
            # Carried-over work alone does not start an auction (auction.md 1 step 8).
            if not any(not p.carried for p in self.pending.values()):
                return
            self._auction_once()

    def _work_items(self, pending: list[Pending]) -> tuple[list[Any], list[Pending]]:
        items: list[Any] = []
        dropped: list[Pending] = []
        for p in pending:
            if p.kind == "lrp":
                app = self.apps.get(p.guid)
                row = self.rows.get((p.guid, p.index, core.ORDINARY))
                if app is None or row is None or row.state != core.UNCLAIMED:
                    dropped.append(p)
                    continue
                items.append(LRPWork(p.guid, p.index, app.memory_mb, app.disk_mb, app.rootfs,
                                     app.volume_drivers, app.placement_tags,
                                     total_instances=max(app.instances, p.index + 1), ref=p))
            else:
                sim_task = self.tasks.get(p.guid)
                if sim_task is None or sim_task.task.state != core.PENDING or sim_task.placement_mode != "diego":
                    dropped.append(p)
                    continue
                items.append(TaskWork(p.guid, sim_task.memory_mb, sim_task.disk_mb, sim_task.rootfs,
                                      sim_task.volume_drivers, sim_task.placement_tags, ref=p))
        return items, dropped

    def _auction_once(self) -> None:
        wall_start = time.perf_counter()
        now = self.now
        pending = self.unplaced()
        answering = self.answering()
        loads = self.loads()
        states = [self._cell_state(c, loads[c.cell_id]) for c in answering]
        items, dropped = self._work_items(pending)
        batch = order_batch(dedupe(items), self.config.go_compat)
        kept = {id(item.ref) for item in batch}
        duplicates = [item.ref for item in items if id(item.ref) not in kept]
        result = schedule(states, batch, self.config, ordered=True)
        outcomes, unreachable = {}, set()
        for cell_id, work in result.won.items():
            cell = self.cells[cell_id]
            if cell.state == FAILED or not cell.has_presence(now):
                unreachable.add(cell_id)
                continue
            load = loads[cell_id]
            free = Resources(cell.memory_mb - load.memory_mb, cell.disk_mb - load.disk_mb,
                             cell.containers - load.containers)
            outcomes[cell_id] = commit(free, cell.proxy_memory_mb, work, evacuating=cell.state == DRAINING)
        result = apply_commits(result, outcomes)
        by_ident = {item.identifier: item for item in batch}
        for ident, cell_id in result.placements.items():
            self._claim(by_ident[ident], cell_id, unreachable)
        for ident, error in result.failures.items():
            self._report_failure(by_ident[ident], error)
        for position, ident in enumerate(result.order):
            if ident not in result.failures:
                continue
            p = by_ident[ident].ref
            if p.kind == "task" and self.tasks[p.guid].task.state != core.PENDING:
                self.pending.pop(p.seq, None)
                continue
            p.carried, p.batch_position, p.last_error = True, position, result.failures[ident]
            p.attempts += 1
        for p in [by_ident[i].ref for i in result.placements] + dropped + duplicates:
            self.pending.pop(p.seq, None)
        stats = auction_stats(states, result, {i: by_ident[i].ref.queued_at for i in by_ident},
                              {i: by_ident[i].ref.attempts for i in by_ident}, now,
                              wall_seconds=time.perf_counter() - wall_start)
        if self.initial_distribution is None:
            self.initial_distribution = stats.distribution_initial
        self.waits += [now - by_ident[i].ref.queued_at for i in result.placements]
        self.attempts += [by_ident[i].ref.attempts for i in result.placements]
        self.failures_by_error.update(result.failures.values())
        self.communications += stats.communications
        self.counters["AuctioneerLRPAuctionsStarted"] += sum(
            1 for i in result.placements if isinstance(by_ident[i], LRPWork))
        self.counters["AuctioneerLRPAuctionsFailed"] += sum(
            1 for i in result.failures if isinstance(by_ident[i], LRPWork))
        self.counters["AuctioneerTaskAuctionsStarted"] += sum(
            1 for i in result.placements if isinstance(by_ident[i], TaskWork))
        self.counters["AuctioneerTaskAuctionsFailed"] += sum(
            1 for i in result.failures if isinstance(by_ident[i], TaskWork))
        self.auctions.append(AuctionRecord(now, len(batch), dict(result.placements),
                                           dict(result.failures), list(result.order), stats))
        self._log("auction_completed", f"auction-{len(self.auctions)}")

    def _claim(self, work: Any, cell_id: str, unreachable: set[str]) -> None:
        """The winning cell claims its LRPs and starts its tasks; an unreachable cell
        may be running them: convergence decides (auction.md 1.8)."""
        if cell_id in unreachable:
            return
        self.cached.setdefault(cell_id, set())
        if isinstance(work, LRPWork):
            key = (work.process_guid, work.index, core.ORDINARY)
            row = self.rows.get(key)
            if row is None or row.state != core.UNCLAIMED:
                return
            self.instance_serial += 1
            guid = f"i-{self.instance_serial}"
            self.rows[key] = core.evolve(row, state=core.CLAIMED, cell_id=cell_id, instance_guid=guid,
                                         placement_error="", since=self.now,
                                         modification_tag_index=row.modification_tag_index + 1)
            self.cached[cell_id].add(work.process_guid)
            delay = self.apps[work.process_guid].start_delay_s
            self._push(self.now + delay, "start", (key, guid))
            self._log("actual_lrp_claimed", work.identifier, cell_id)
            return
        sim_task = self.tasks[work.task_guid]
        started = task_states.start(sim_task.task, cell_id, self.now)
        if isinstance(started, BBSError):
            return
        sim_task.task = started
        self._push(self.now + sim_task.duration_s, "complete", (work.task_guid, cell_id))
        self._log("task_started", work.task_guid, cell_id)

    def _report_failure(self, work: Any, error: str) -> None:
        """Fail (LRP: stays UNCLAIMED with the error) or Reject (task) (auction.md 1.7)."""
        if isinstance(work, LRPWork):
            key = (work.process_guid, work.index, core.ORDINARY)
            row = self.rows.get(key)
            if row is not None and row.state == core.UNCLAIMED:
                self.rows[key] = core.evolve(row, placement_error=error, since=self.now,
                                             modification_tag_index=row.modification_tag_index + 1)
            return
        sim_task = self.tasks[work.task_guid]
        rejected = task_states.reject(sim_task.task, error, self.now)
        if not isinstance(rejected, BBSError):
            sim_task.task = rejected

    # -- reps (the shell's reps_advance)
    def _start(self, payload: tuple[core.RowKey, str]) -> None:
        key, guid = payload
        row = self.rows.get(key)
        if row is None or row.state != core.CLAIMED or row.instance_guid != guid:
            return
        if self._hold(row.cell_id, "start", payload):
            return
        app = self.apps.get(row.process_guid)
        self.rows[key] = core.evolve(row, state=core.RUNNING, since=self.now,
                                     address=instance_address(row.cell_id, row.index),
                                     modification_tag_index=row.modification_tag_index + 1)
        # Start deletes any EVACUATING and SUSPECT row of the index (bbs.md 2.3).
        self.rows.pop((row.process_guid, row.index, core.EVACUATING), None)
        self.rows.pop((row.process_guid, row.index, core.SUSPECT), None)
        self._log("actual_lrp_running", core.lrp_id(key), row.cell_id)
        if app is not None:
            at = crash_time(self.seed, row.process_guid, row.index, row.modification_tag_index,
                            self.now, app.crash_probability, app.crash_after_s)
            if at is not None:
                self._push(at, "crash", (key, guid))

    def _crash_due(self, payload: tuple[core.RowKey, str]) -> None:
        key, guid = payload
        row = self.rows.get(key)
        if row is None or row.state not in (core.CLAIMED, core.RUNNING) or row.instance_guid != guid:
            return
        if self._hold(row.cell_id, "crash", payload):
            return
        self._crash(row)

    def _crash(self, row: core.ActualLRP, *, immediate_start: bool = True) -> None:
        outcome = crash(row, self.now, CRASH_REASON, immediate_start=immediate_start)
        if isinstance(outcome, BBSError):
            return
        self.rows.pop(row.key, None)
        if outcome.after is not None:
            self.rows[outcome.after.key] = outcome.after
        self.counters["CrashesReported"] += 1
        self._log("actual_lrp_crashed", core.lrp_id(row.key), row.cell_id)
        if outcome.start:
            self._request_lrps([row.lrp_key], "crash")

    def _complete(self, payload: tuple[str, str]) -> None:
        guid, cell_id = payload
        sim_task = self.tasks.get(guid)
        if sim_task is None or sim_task.task.state != core.TASK_RUNNING or sim_task.task.cell_id != cell_id:
            return
        if self._hold(cell_id, "complete", payload):
            return
        done = task_states.complete(sim_task.task, self.now, failed=False)
        if isinstance(done, BBSError):
            return
        sim_task.task = done
        self.counters["TasksSucceeded"] += 1
        self._log("task_completed", guid, cell_id)

    def _presence_lost(self, cell_id: str) -> None:
        cell = self.cells.get(cell_id)
        if cell is not None and cell.presence_lost_at is not None and not cell.has_presence(self.now):
            self._log("cell_presence_lost", cell_id, cell_id)

    def _evacuation_tick(self, cell_id: str) -> None:
        cell = self.cells.get(cell_id)
        if cell is None or cell.state != DRAINING or cell.presence_lost_at is not None:
            return
        self._evacuation_sync(cell_id)

    def _evacuation_sync(self, cell_id: str) -> None:
        """One sync of a draining cell's rep (bbs.md 6.3; the shell's ``evacuation_sync``)."""
        cell = self.cells[cell_id]
        at = self.now
        on_cell = [r for r in self.rows.values() if r.cell_id == cell_id]
        ordinary_state = {k[:2]: r.state for k, r in self.rows.items() if k[2] == core.ORDINARY}
        plan = evacuation_plan(on_cell, ordinary_state, self.apps)
        for row in plan.delete:
            self.rows.pop(row.key, None)
        for row in plan.evacuate:
            # Keep serving from an EVACUATING copy until the replacement runs.
            self.rows[(row.process_guid, row.index, core.EVACUATING)] = core.evolve(row, presence=core.EVACUATING)
        for row in plan.unclaim:
            self._unclaim(row)
        self._request_lrps(plan.restart, "evacuation")
        cell.evacuation_synced_at = at
        left = any(r.cell_id == cell_id and r.state != core.UNCLAIMED for r in self.rows.values())
        tasks_left = any(t.task.cell_id == cell_id and t.task.state == core.TASK_RUNNING
                         for t in self.tasks.values())
        over, _ = evacuation_over(at, cell.evacuating_since, left or tasks_left)
        if over:
            # Evacuation is over: the rep drops its presence; convergence prunes leftovers.
            cell.presence_lost_at = at
            self._log("cell_evacuated", cell_id, cell_id)
        else:
            self._push(at + EVACUATION_SYNC_S, "evacuate", cell_id)

    def _unclaim(self, row: core.ActualLRP) -> None:
        after = unclaim(row, self.now)
        if isinstance(after, BBSError):
            return
        self.rows[row.key] = after

    # -- convergence (the shell's convergence_run)
    def _converge(self, _: Any) -> None:
        at = self.now
        present = frozenset(c.cell_id for c in self.cells.values() if c.has_presence(at))
        snapshot = core.Snapshot(
            now=at, cells=present, domains=dict(self.domains),
            desired=[core.DesiredLRP(a.process_guid, a.domain, a.instances) for a in self.apps.values()],
            actual=list(self.rows.values()),
            tasks=[t.task for t in self.tasks.values()],
            config=self.convergence,
        )
        result = converge(snapshot)
        for op in result.lrp.ops:
            if isinstance(op, RowCreate):
                self.rows[op.row.key] = op.row
            elif isinstance(op, RowDelete):
                self.rows.pop(op.key, None)
            elif isinstance(op, RowUpdate):
                self.rows.pop(op.key, None)
                self.rows[op.after.key] = op.after
        for top in result.tasks.ops:
            guid = top.before.task_guid
            if isinstance(top, TaskDelete):
                self.tasks.pop(guid, None)
            elif guid in self.tasks:
                self.tasks[guid].task = top.after
        # Retiring a CLAIMED/RUNNING instance sends its cell a stop; the simulated rep
        # removes it at once, unless the cell is unreachable (bbs.md 2.3 Retire).
        for stop in result.lrp.stops:
            row = self.rows.get(stop.key)
            if row is not None and not self._silent(stop.cell_id) and row.instance_guid == stop.instance_guid:
                del self.rows[stop.key]
        for name in result.lrp.pruned_domains:
            self.domains.pop(name, None)
        self.passes.append((at, dict(result.metrics)))
        self.counters["ConvergenceLRPRuns"] += 1
        self._log("convergence_completed", f"pass-{len(self.passes)}")
        # The start request goes out after the metrics are recorded (bbs.md 4.3).
        self._request_lrps(result.start_request.lrps, "converge")
        self._request_tasks(result.start_request.tasks, "converge")
        self.next_convergence_at = at + self.convergence_interval_s
        self._push(self.next_convergence_at, "converge", None)

    def _action(self, payload: tuple[str, dict[str, Any]]) -> None:
        action, args = payload
        ACTIONS[action](self, **args)
        self._log(f"scenario_{action}", ",".join(f"{k}={v}" for k, v in sorted(args.items()) if k != "apps"))


@dataclass(slots=True)
class Load:
    memory_mb: int = 0
    disk_mb: int = 0
    containers: int = 0
    starting: int = 0
    lrps: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)


def _desire_lrps(world: World, apps: list[dict[str, Any]]) -> None:
    for spec in apps:
        world.desire_lrp(app_from_spec(spec))


def app_from_spec(spec: dict[str, Any]) -> SimApp:
    known = set(SimApp.__slots__)  # type: ignore[attr-defined]
    fields_ = {k: (tuple(v) if isinstance(v, list) else v) for k, v in spec.items() if k in known}
    return SimApp(**fields_)


HANDLERS = {
    "auction": World._auctioneer_run,
    "start": World._start,
    "crash": World._crash_due,
    "complete": World._complete,
    "converge": World._converge,
    "presence_lost": World._presence_lost,
    "evacuate": World._evacuation_tick,
    "action": World._action,
}

ACTIONS = {
    "cell_fail": lambda w, cell: w.cell_fail(cell),
    "cell_restore": lambda w, cell: w.cell_restore(cell),
    "cell_drain": lambda w, cell: w.cell_drain(cell),
    "zone_fail": lambda w, zone: w.zone_fail(zone),
    "zone_restore": lambda w, zone: w.zone_restore(zone),
    "crash": lambda w, process_guid, index: w.crash_instance(process_guid, index),
    "desire_lrps": _desire_lrps,
}

"""The memory store (``World``): a whole simulated cluster in plain Python objects.

It holds what the database holds and implements the ``Store`` reads and ``apply`` of
``auction.sim.driver``; every decision is made by the same rules the database store
runs. The package keeps one concept per module: ``state`` (the fields: the truth, then
what is derived from it), ``rows`` (the row table and its indexes), ``timers`` (every
heap of instants), ``due`` (the timing reads), ``fetch`` (the state fetch kept between
auctions), ``apply`` (the writes), ``check`` (every kept answer proved against a fresh
one, ``DIEGO_CHECK_DERIVED``), and here the building, operating and reading of a world.

A ``World`` is plain data: ``copy.deepcopy`` clones it (comparison panes and plans start
from one clone each; ``checkpoint`` keeps one to reset to).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, replace
from operator import attrgetter
from typing import Any

from auction.bbs import types as core
from auction.bbs.collector import collector_paused
from auction.bbs.convergence import KeptParts
from auction.bbs.validation import bbs_message, cell_errors, task_errors
from auction.engine import AuctionConfig
from auction.sim import chaos as chaos_rules
from auction.sim.cfdot import ClusterView
from auction.sim.changes import ChangeSet
from auction.sim.chaos import ChaosError
from auction.sim.clock import ClockState
from auction.sim.driver import advance
from auction.sim.lrps import lrp_desire, task_desire
from auction.sim.memory.apply import Apply
from auction.sim.memory.records import WorldError
from auction.sim.model import CELL_STATES, QueuedWork, SimApp, SimCell, SimTask
from auction.sim.round import has_new_work
from auction.sim.timers import NEW_WORK


class World(Apply):
    """The memory store (see the module docstring); ``run_until`` moves it in sim time."""

    __slots__ = ()

    # ------------------------------------------------------------------ building
    def restore_queue(self, items: Iterable[QueuedWork]) -> None:
        """Put work that a store already numbered (a clone of the live auctioneer's queue),
        keeping ``next_due``'s indexes: new work is due for the next auction."""
        for q in sorted(items, key=lambda q: q.seq):
            self.queue[q.seq] = q
            self.seq = max(self.seq, q.seq)
            if NEW_WORK.applies(q):
                self.timers.new_work_add(q.seq, q.queued_at)

    def restore_rows(self, rows: Iterable[core.ActualLRP]) -> None:
        """Put rows as a capture holds them (``base.world_from_view``), with the objective
        strategy's blob cache of what each cell runs now."""
        for row in rows:
            self.rows[row.key] = row
            if row.cell_id and row.state in (core.CLAIMED, core.RUNNING):
                self.cached.setdefault(row.cell_id, set()).add(row.process_guid)
                self.unfetched.add(row.cell_id)

    def restore_tasks(self, tasks: Iterable[SimTask]) -> None:
        """Put tasks as a capture holds them, with their completion timers."""
        for sim_task in sorted(tasks, key=lambda t: t.task_guid):
            self.tasks[sim_task.task_guid] = sim_task
            self.timers.task_written(sim_task.task)
        self.unfetched.update(self.cells)

    def remove_cell(self, cell_id: str) -> None:
        """The cell is gone with its rep and presence (a plan's ``cell_remove``); its
        instances stay for convergence to find missing."""
        del self.cells[cell_id]
        self.draining.discard(cell_id)
        self.lapsing.pop(cell_id, None)
        self.fetch_order = self.fetched = None
        self.fetched_loads.pop(cell_id, None)
        self.fetched_states.pop(cell_id, None)

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


    def convergence_due(self, at: float) -> bool:
        return self.next_convergence_at is not None and self.next_convergence_at <= at

    def convergence_input(self, at: float) -> tuple[core.Snapshot, set[str], set[str], float,
                                                    KeptParts | None]:
        cells = frozenset(c.cell_id for c in self.cells.values() if c.has_presence(at))
        desired = self._desired()
        snapshot = core.Snapshot(
            now=at, cells=cells, domains=dict(self.domains), desired=desired,
            tasks=[t.task for t in self.tasks.values()], config=self.convergence, ordered=True)
        kept = self._kept_parts(snapshot)
        silent = {c.cell_id for c in self.cells.values() if c.silent}
        otto = {g for g, t in self.tasks.items() if t.placement_mode != "diego"}
        return kept[0], silent, otto, self.convergence_interval_s, kept[1]

    def _kept_parts(self, snapshot: core.Snapshot) -> tuple[core.Snapshot, KeptParts]:
        """The snapshot's rows and what the last pass left for this one: its quiet half
        over the very same rows while none was written (bbs.md 4.5), else every row but
        those of the plain apps none of whose rows was written since (``PlainApps``)."""
        quiet = self.lrp_quiet
        if quiet is not None and self.rows.listing_holds():
            again = replace(snapshot, actual=quiet.snapshot.actual)  # the very list
            if quiet.answers(again):
                return again, KeptParts(quiet=quiet)
        listed = self.rows.in_key_order()
        plain = self.lrp_plain
        if plain is None or not plain.holds_for(snapshot.cells, snapshot.desired):
            return replace(snapshot, actual=listed), KeptParts()
        part = plain.without(self.rows.written)
        return replace(snapshot, actual=_other_rows(listed, part.apps)), KeptParts(plain=part)
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
        new_work = self.timers.new_work
        return bool(new_work) and has_new_work(self.queue[seq] for seq in new_work)

    def auction_config(self) -> AuctionConfig:
        return self.config

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



def _other_rows(listed: list[core.ActualLRP],
                apps: Mapping[str, tuple[list[core.ActualLRP], int]]) -> list[core.ActualLRP]:
    """The rows in key order but those of ``apps`` (in key order an app's rows are
    together: each app is looked up once)."""
    if not apps:
        return listed
    out: list[core.ActualLRP] = []
    size = len(listed)
    at = 0
    while at < size:
        guid = listed[at].process_guid
        app = apps.get(guid)
        if app is not None:
            at += len(app[0])
            continue
        start = at
        at += 1
        while at < size and listed[at].process_guid == guid:
            at += 1
        out += listed[start:at]
    return out


_app_order = attrgetter("process_guid")
#: ``phase`` has no transaction to open: one reusable no-op context for every phase.
_NO_TRANSACTION = nullcontext()

"""The database store: the live cluster as the rules of ``auction.sim`` read and change it.

It implements the reads of ``auction.sim.driver.Store`` over the models (values, not
model objects, where rows are many) and ``apply``, which writes a ``ChangeSet`` in bulk
and records events, counters and replay records. It decides nothing: every decision is
the rules', exactly as in the memory store. ``phase()`` is one transaction around a read
and its apply.

``apply`` starts nothing outside the database: what must follow the change (an auction,
Otto fed again, callbacks, open pages told) are intents, the rule's own and those that
follow from what it wrote (``_intents``), handed to the shell's runner
(``auction.services.intents``), which runs them after the commit.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, ne
from typing import Any

from django.db import transaction

from auction.bbs import types as core
from auction.bbs.changes import RowUpdate
from auction.engine import AuctionConfig
from auction.models import (
    ActualLRP,
    AuctionRun,
    AuditEntry,
    BBSEvent,
    Cell,
    ConvergenceRun,
    Counter,
    DesiredLRP,
    Domain,
    PendingWork,
    SimClock,
    Task,
    Zone,
)
from auction.selectors.auction_settings import auction_settings_config
from auction.selectors.auctions import explanation_summary
from auction.selectors.bbs import (
    ACTUAL_COLUMNS,
    TASK_COLUMNS,
    actual_from_values,
    bbs_snapshot,
    task_from_values,
)
from auction.selectors.cells import cell_loads, sim_cell
from auction.selectors.clock import clock_row, world_epoch
from auction.selectors.scenarios import loaded_scenario
from auction.services.bulk import Values, bulk_delete, bulk_insert, bulk_set, bulk_set_columns
from auction.services.counters import counters_add
from auction.services.events import event_record, event_rows, events_store
from auction.services.intents import intents_after_commit
from auction.services.reading_apart import round_inputs_mark, snapshot_read
from auction.services.rows import apply_row_ops, apply_task_ops
from auction.services.where import silent_cells, timer_due, timer_next, timer_records, where_q
from auction.sim import replay_record, timers
from auction.sim.cfdot import ClusterView
from auction.sim.changes import (
    AuctionWanted,
    CallbacksDue,
    CellsChanged,
    ChangeSet,
    Intent,
    LiveChanged,
)
from auction.sim.check_mode import DerivedMismatch, checking
from auction.sim.lrps import void_requests
from auction.sim.model import Load, QueuedWork, SimApp, SimCell, SimTask
from auction.sim.replay_record import (
    COPY_PRECEDENCE,
    copy_keys,
    explain_wanted,
    named_copy,
    replay_fields,
)
from auction.sim.round import RoundInput, RoundRecord
from auction.sim.scenario import scenario_steps

# The newest auctions keep every verdict; older ones a summary per item (dashboard.md 2).
KEEP_FULL_RECORDS = 20
CHUNK = 500
# An auction of more items than this is recorded as a summary and a sample (bbs.md 8.1).
RECORD_ITEMS_MAX = replay_record.RECORD_ITEMS_MAX
RECORD_SAMPLE = replay_record.RECORD_SAMPLE
QUEUE_FIELDS = ("kind", "ident", "process_guid", "index", "task_guid", "queued_at", "reason",
                "carried", "batch_position", "attempts", "last_error")


# -- models as the rules see them -------------------------------------------------------

def sim_app(desired: DesiredLRP) -> SimApp:
    return SimApp(
        process_guid=desired.process_guid, domain=desired.domain, instances=desired.instances,
        memory_mb=desired.memory_mb, disk_mb=desired.disk_mb, rootfs=desired.rootfs,
        placement_tags=tuple(desired.placement_tags), volume_drivers=tuple(desired.volume_drivers),
        ports=tuple(int(p) for p in desired.ports or ()), start_delay_s=desired.start_delay_s,
        crash_probability=desired.crash_probability, crash_after_s=desired.crash_after_s,
        epoch=desired.modification_tag_epoch, tag=desired.modification_tag_index)


def core_task(task: Task) -> core.Task:
    return task_from_values(tuple(getattr(task, "pk" if c == "id" else c) for c in TASK_COLUMNS))


def sim_task(task: Task) -> SimTask:
    return SimTask(core_task(task), memory_mb=task.memory_mb, disk_mb=task.disk_mb,
                   rootfs=task.rootfs, placement_tags=tuple(task.placement_tags),
                   volume_drivers=tuple(task.volume_drivers), duration_s=task.duration_s,
                   placement_mode=task.placement_mode)


QUEUED_COLUMNS = ("id", "kind", "process_guid", "index", "task_guid", "queued_at", "reason",
                  "carried", "batch_position", "attempts", "last_error")


def queued(row: PendingWork) -> QueuedWork:
    return QueuedWork(row.pk, row.kind, row.process_guid, row.index or 0, row.task_guid,
                      row.queued_at, row.reason, row.carried, row.batch_position, row.attempts,
                      row.last_error)


def queued_from_values(v: tuple[Any, ...]) -> QueuedWork:
    """``queued`` from ``QUEUED_COLUMNS`` values (no model instance per queued item)."""
    return QueuedWork(v[0], v[1], v[2], v[3] or 0, v[4], v[5], v[6], v[7], v[8], v[9], v[10])


ROUND_FIELDS = ("state", "cell_id", "instance_guid", "placement_error", "since", "ready_at",
                "crash_at", "modification_tag_index")
_round_values = attrgetter(*ROUND_FIELDS)
_APP_FIELDS = ("domain", "instances", "memory_mb", "disk_mb", "rootfs", "placement_tags",
               "volume_drivers", "start_delay_s", "crash_probability", "crash_after_s")


_Rounds = dict[tuple[bool, ...], tuple[list[int], list[tuple[Any, ...]]]]


@dataclass(slots=True)
class _Prepared:
    change: ChangeSet
    rounds: tuple[_Rounds, list[Any]]
    events: list[tuple[Any, ...]]


class DbStore:
    """The live cluster (see the module docstring)."""

    def __init__(self, *, trigger_auctions: bool = True, trim_events: bool = True,
                 after_commit: Callable[[list[Intent]], None] = intents_after_commit) -> None:
        self._pk: dict[core.RowKey, int] = {}
        self._task_pk: dict[str, int] = {}
        # The UNCLAIMED rows ``round_input`` read FOR UPDATE: the round's answer is
        # applied in the same transaction (the driver's phase, ``auction_once``).
        self._round_locked: set[int] = set()
        self._prepared: _Prepared | None = None
        # Each cell's reachability at one instant, read once for a rule that asks it per
        # row (a removal of 100,000 RUNNING instances asked it 100,000 times, one query
        # each); forgotten at every phase and apply, where cells may change.
        self._reach: tuple[float, dict[str, bool]] | None = None
        self._clock = clock_row()
        self.seed = self._clock.seed
        self.trigger_auctions = trigger_auctions
        self.trim_events = trim_events
        # Given each applied change's intents inside its transaction, to run after commit.
        self.after_commit = after_commit

    # -- Store: basics ----------------------------------------------------------------------
    @property
    def now(self) -> float:
        return self._clock.advanced_to

    def phase(self) -> Any:
        self._reach = None
        return transaction.atomic()

    def read_apart(self) -> AbstractContextManager[object | None]:
        return snapshot_read()

    def unchanged_since(self, mark: object) -> bool:
        return round_inputs_mark() == mark

    def advanced(self, to: float) -> None:
        if to > self._clock.advanced_to:
            self._clock.advanced_to = to
            SimClock.objects.filter(pk=self._clock.pk).update(advanced_to=to)

    def auction_config(self) -> AuctionConfig:
        return auction_settings_config()

    def _silent(self) -> list[str]:
        return silent_cells()

    def _rows(self, query: Any) -> list[core.ActualLRP]:
        rows = []
        for values in query.values_list(*ACTUAL_COLUMNS):
            row = actual_from_values(values)
            self._pk[row.key] = values[0]
            rows.append(row)
        return rows

    def _tasks(self, query: Any) -> list[SimTask]:
        out = []
        for task in query:
            self._task_pk[task.task_guid] = task.pk
            out.append(sim_task(task))
        return out

    # -- Store: timing ----------------------------------------------------------------------
    def next_due(self) -> float | None:
        silent, now = self._silent(), self.now
        candidates: list[float | None] = [
            timer_next(timers.START, now, silent), timer_next(timers.CRASH, now, silent),
            timer_next(timers.COMPLETION, now, silent), timer_next(timers.LAPSE, now),
            timer_next(timers.NEW_WORK, now), self._clock.next_convergence_at,
        ]
        candidates += [timers.EVACUATION_SYNC.instant(cell) for cell in self._draining()]
        steps = self._timeline()
        candidates.append(steps[0][1] if steps else None)
        present = [c for c in candidates if c is not None]
        return min(present) if present else None

    def _timeline(self) -> list[tuple[str, float, str, dict[str, Any]]]:
        """The loaded scenario's timed steps not yet done: (marker, at, action, args)."""
        load = (AuditEntry.objects.filter(action__in=("scenario_checkpoint", "foundation_import"))
                .order_by("-id").first())
        # An imported foundation (plans.md 3) replaced the scenario's cluster and its timeline.
        if load is None or load.action != "scenario_checkpoint":
            return []
        steps = _steps(load)
        if not steps:
            return []
        done = set(AuditEntry.objects.filter(action="scenario_step", pk__gt=load.pk)
                   .values_list("target", flat=True))
        return [s for s in steps if s[0] not in done]

    def due_actions(self, at: float) -> list[tuple[str, str, dict[str, object]]]:
        return [(marker, action, dict(args)) for marker, when, action, args in self._timeline()
                if when <= at]

    def due_starts(self, at: float) -> tuple[list[core.ActualLRP],
                                             dict[core.LRPKey, list[core.ActualLRP]],
                                             dict[str, SimApp]]:
        rows = self._rows(timer_due(timers.START, at, self.now, self._silent()).select_for_update())
        if not rows:
            return [], {}, {}
        keys = {r.lrp_key for r in rows}
        copies: dict[core.LRPKey, list[core.ActualLRP]] = defaultdict(list)
        guids = sorted({g for g, _ in keys})
        for chunk in _chunks(guids):
            for row in self._rows(ActualLRP.objects.filter(desired_id__in=chunk).exclude(
                    presence=ActualLRP.Presence.ORDINARY)):
                if row.lrp_key in keys:
                    copies[row.lrp_key].append(row)
        return rows, copies, self._apps(guids)

    def _apps(self, guids: Iterable[str]) -> dict[str, SimApp]:
        out = {}
        for chunk in _chunks(sorted(set(guids))):
            out.update({d.process_guid: sim_app(d) for d in DesiredLRP.objects.filter(process_guid__in=chunk)})
        return out

    def due_crashes(self, at: float) -> list[core.ActualLRP]:
        return self._rows(timer_due(timers.CRASH, at, self.now, self._silent()).select_for_update())

    def due_completions(self, at: float) -> list[SimTask]:
        return self._tasks(timer_due(timers.COMPLETION, at, self.now, self._silent()).select_for_update())

    def _draining(self) -> list[SimCell]:
        """The cells an evacuation sync runs on (its instant is computed per cell)."""
        return [sim_cell(c) for c in timer_records(timers.EVACUATION_SYNC).select_related("zone")]

    def due_evacuations(self, at: float) -> list[SimCell]:
        return sorted((c for c in self._draining() if timers.EVACUATION_SYNC.due(c, at, self.now)),
                      key=lambda c: c.cell_id)

    def evacuation_view(self, cell_id: str) -> tuple[list[core.ActualLRP], dict[core.LRPKey, str],
                                                     set[str], bool]:
        rows = self.rows_on(cell_id)
        guids = sorted({r.process_guid for r in rows})
        ordinary: dict[core.LRPKey, str] = {}
        desired: set[str] = set()
        for chunk in _chunks(guids):
            ordinary.update({(g, i): s for g, i, s in ActualLRP.objects.filter(
                desired_id__in=chunk, presence=ActualLRP.Presence.ORDINARY)
                .values_list("desired_id", "index", "state")})
            desired |= set(DesiredLRP.objects.filter(process_guid__in=chunk)
                           .values_list("process_guid", flat=True))
        tasks_left = Task.objects.filter(cell_id=cell_id, state=Task.State.RUNNING).exists()
        return rows, ordinary, desired, tasks_left

    def due_lapses(self, at: float) -> list[SimCell]:
        return sorted((sim_cell(c) for c in timer_due(timers.LAPSE, at, self.now).select_related("zone")),
                      key=lambda c: c.cell_id)

    def convergence_due(self, at: float) -> bool:
        return self._clock.next_convergence_at <= at

    def convergence_input(self, at: float) -> tuple[core.Snapshot, set[str], set[str], float, None]:
        # The rows are read whole each pass: nothing vouches they did not change.
        loaded = bbs_snapshot(at)
        self._pk.update(loaded.actual_pk)
        self._task_pk.update(loaded.task_pk)
        otto = set(Task.objects.filter(state=Task.State.PENDING, placement_mode=Task.PlacementMode.OTTO)
                   .values_list("task_guid", flat=True))
        return loaded.snapshot, set(self._silent()), otto, self._clock.convergence_interval_s, None

    # -- Store: the auction -----------------------------------------------------------------
    def has_new_work(self) -> bool:
        return timer_records(timers.NEW_WORK).exists()

    def round_input(self, at: float) -> RoundInput:
        queue = [queued_from_values(v) for v in PendingWork.objects.select_for_update().order_by("id")
                 .values_list(*QUEUED_COLUMNS)]
        cells = self.cells()
        loads = self.loads([c.cell_id for c in cells], {c.cell_id: c.proxy_memory_mb for c in cells})
        keys = {(q.process_guid, q.index) for q in queue if q.kind == "lrp"}
        guids = sorted({g for g, _ in keys})
        unclaimed: dict[core.LRPKey, core.ActualLRP] = {}
        for chunk in _chunks(guids):
            for row in self._rows(ActualLRP.objects.select_for_update().filter(
                    desired_id__in=chunk, presence=ActualLRP.Presence.ORDINARY,
                    state=ActualLRP.State.UNCLAIMED)):
                if row.lrp_key in keys:
                    unclaimed[row.lrp_key] = row
        self._round_locked = {self._pk[row.key] for row in unclaimed.values()}
        task_guids = sorted({q.task_guid for q in queue if q.kind == "task"})
        tasks: dict[str, SimTask] = {}
        for chunk in _chunks(task_guids):
            tasks.update({t.task_guid: t for t in self._tasks(
                Task.objects.select_for_update().filter(task_guid__in=chunk))})
        answering = sum(1 for c in cells if c.answers(at))
        config = self.auction_config()
        return RoundInput(at=at, queue=queue, cells=cells, loads=loads, apps=self._apps(guids),
                          unclaimed=unclaimed, tasks=tasks, config=config,
                          explain=explain_wanted(len(queue), answering))

    def cells(self) -> list[SimCell]:
        return [sim_cell(c) for c in Cell.objects.select_related("zone").select_for_update(of=("self",))]

    @staticmethod
    def loads(cell_ids: list[str], proxy: Mapping[str, int]) -> dict[str, Load]:
        return cell_loads(cell_ids, proxy)

    # -- ChaosReader ------------------------------------------------------------------------
    def cell(self, cell_id: str) -> SimCell | None:
        cell = Cell.objects.select_related("zone").select_for_update(of=("self",)).filter(cell_id=cell_id).first()
        return None if cell is None else sim_cell(cell)

    def zone_cells(self, zone: str) -> list[SimCell]:
        return [sim_cell(c) for c in Cell.objects.select_related("zone").select_for_update(of=("self",))
                .filter(zone__name=zone)]

    def app(self, process_guid: str) -> SimApp | None:
        desired = DesiredLRP.objects.select_for_update().filter(process_guid=process_guid).first()
        return None if desired is None else sim_app(desired)

    def app_rows(self, process_guid: str) -> list[core.ActualLRP]:
        return self._rows(ActualLRP.objects.select_for_update().filter(desired_id=process_guid))

    def rows_by_id(self, pks: list[int]) -> list[core.ActualLRP]:
        """The rows of ``pks`` that are still there, unlocked (a big removal's stops are
        worked out apart; each chunk's apply re-checks its rows)."""
        return [row for chunk in _chunks(pks) for row in self._rows(ActualLRP.objects.filter(pk__in=chunk))]

    def rows_on(self, cell_id: str) -> list[core.ActualLRP]:
        return self._rows(ActualLRP.objects.select_for_update().filter(cell_id=cell_id))

    def tasks_on(self, cell_id: str) -> list[SimTask]:
        return self._tasks(Task.objects.select_for_update().filter(cell_id=cell_id).order_by("task_guid"))

    def reachable(self, cell_id: str, at: float) -> bool:
        if self._reach is None or self._reach[0] != at:
            self._reach = (at, {
                cell: state != Cell.State.FAILED and (lost is None or at < lost)
                for cell, state, lost in Cell.objects.values_list("cell_id", "state", "presence_lost_at")})
        return self._reach[1].get(cell_id, False)

    def cluster_view(self) -> ClusterView:
        """Everything ``auction.sim.cfdot`` prints, as the database holds it now."""
        cells = [sim_cell(c) for c in Cell.objects.select_related("zone")]
        rows = [actual_from_values(v) for v in
                ActualLRP.objects.values_list(*ACTUAL_COLUMNS).iterator(chunk_size=20_000)]
        return ClusterView(
            now=self.now, cells=cells,
            loads=self.loads([c.cell_id for c in cells], {c.cell_id: c.proxy_memory_mb for c in cells}),
            apps=[sim_app(d) for d in DesiredLRP.objects.all()], rows=rows,
            tasks=[sim_task(t) for t in Task.objects.all()],
            domains=dict(Domain.objects.values_list("name", "expires_at")),
            events=list(BBSEvent.objects.order_by("id").values_list("at", "type", "key")),
            origin_ns=self._clock.origin_ns,
            queue=[queued_from_values(v) for v in PendingWork.objects.order_by("id")
                   .values_list(*QUEUED_COLUMNS)],
            next_convergence_at=self._clock.next_convergence_at,
            convergence_interval_s=self._clock.convergence_interval_s,
            timeline=[(at, marker, action, args) for marker, at, action, args in self._timeline()])

    # -- Store: apply -----------------------------------------------------------------------
    def apply(self, change: ChangeSet) -> None:
        prepared, self._prepared = self._prepared, None
        self._reach = None
        if prepared is not None and prepared.change is not change:
            prepared = None
        with transaction.atomic():
            at = change.at
            for app in change.apps_put:
                _app_put(app)
            if change.apps_removed:
                DesiredLRP.objects.filter(process_guid__in=change.apps_removed).delete()
            for cell in change.cells_put:
                _cell_put(cell)
            self._lrp_ops(change, prepared)
            for spec in change.tasks_put:
                self._task_pk[spec.task_guid] = _task_create(spec)
            if change.task_ops:
                missing = [op.before.task_guid for op in change.task_ops
                           if op.before.task_guid not in self._task_pk]
                self._task_pk.update(dict(Task.objects.filter(task_guid__in=missing)
                                          .values_list("task_guid", "id")))
                apply_task_ops(change.task_ops, self._task_pk)
            for name, expiry in change.domains_put.items():
                Domain.objects.update_or_create(name=name, defaults={"expires_at": expiry})
            if change.domains_removed:
                Domain.objects.filter(name__in=change.domains_removed).delete()
            self._queue(change)
            run_id = _record_auction(change.auction) if change.auction is not None else None
            events_store(prepared.events if prepared is not None else event_rows(change.events, at))
            for note in change.notes:
                key = f"auction-{run_id}" if note.type == "auction_completed" and run_id else note.key
                event_record(note.type, at, key=key, cell_id=note.cell_id, **note.data)
            counters_add(change.counters)
            for name, value in change.gauges.items():
                Counter.objects.update_or_create(name=name, defaults={"value": int(value)})
            if change.convergence is not None:
                _record_pass(change)
            if change.next_convergence_at is not None:
                self._clock.next_convergence_at = change.next_convergence_at
                SimClock.objects.filter(pk=self._clock.pk).update(
                    next_convergence_at=change.next_convergence_at)
            for marker in change.steps_done:
                AuditEntry.objects.create(sim=at, source="scenario", action="scenario_step",
                                          target=marker, diff={})
            self.after_commit(self._intents(change, run_id))

    def _intents(self, change: ChangeSet, run_id: int | None) -> list[Intent]:
        """The rule's intents, then those that follow from what ``apply`` wrote."""
        intents = list(change.intents)
        if change.queue_add and self.trigger_auctions:
            intents.append(AuctionWanted())
        if run_id is not None:
            intents.append(LiveChanged(("auctions",)))  # the auction list is live (dashboard.md A1)
        if change.callbacks:
            intents.append(CallbacksDue(tuple(change.callbacks)))
        cells = change.cells_changed()
        if (cells or change.queue_add or change.queue_remove or change.queue_drop or change.queue_put
                or change.apps_put or change.apps_removed or change.lrp_ops or change.task_ops
                or change.tasks_put):
            # The tray and desired vs actual re-render with every cells frame. A row on
            # no cell changes no cell, yet the tray (an unclaimed instance crashed:
            # the convergence test's soak, step 58, seed 21).
            intents.append(CellsChanged(tuple(sorted(cells))))
        return intents

    def _lrp_ops(self, change: ChangeSet, prepared: _Prepared | None) -> None:
        rounds, others = prepared.rounds if prepared is not None else self._round_writes(change)
        self._round_locked = set()
        if others:
            missing = [op.key for op in others if not hasattr(op, "row") and op.key not in self._pk]
            for guid, index, presence, pk in _pks(missing):
                self._pk[(guid, index, presence)] = pk
            if checking():
                self._check_pks(others)
            apply_row_ops(others, self._pk)
        # An auction's claims and failures in one bulk write per set of fields the round
        # changed, without apply_row_ops' re-read: the round read these rows in this
        # transaction FOR UPDATE, or (SQLite) in a snapshot no write to them followed
        # (``auction_one``). One UPDATE per cell cost 1,000 statements an auction, and the
        # re-read of a flood's 100,000 failures most of a second.
        for changed, (pks, values) in rounds.items():
            bulk_set_columns(ActualLRP, list(compress(ROUND_FIELDS, changed)), pks,
                             list(compress(zip(*values, strict=True), changed)))

    def _check_pks(self, ops: list[Any]) -> None:
        """Check mode: each primary key kept between reads that an op writes through still
        names its row (a row removed and made again since has another: the write would be
        skipped as if it raced)."""
        keys = sorted({op.key for op in ops if not hasattr(op, "row") and op.key in self._pk})
        current = {(guid, index, presence): pk for guid, index, presence, pk in _pks(keys)}
        for key in keys:
            if key in current and current[key] != self._pk[key]:
                raise DerivedMismatch("DbStore._pk", key, current[key], self._pk[key])

    def _round_writes(self, change: ChangeSet) -> tuple[_Rounds, list[Any]]:
        """The round's own rows (UNCLAIMED, read by ``round_input``) grouped by the set of
        fields it changed (of ``ROUND_FIELDS``), their keys and values by column (a
        flood's 100,000 failures build no object per row); every other op apart."""
        locked = self._round_locked if change.auction is not None else set()
        rounds: _Rounds = {}
        others = []
        pk_of = self._pk
        for op in change.lrp_ops:
            if (type(op) is RowUpdate and op.before.state == core.UNCLAIMED
                    and pk_of.get(op.key) in locked):
                after = _round_values(op.after)
                changed = tuple(map(ne, after, _round_values(op.before)))
                group = rounds.get(changed)
                if group is None:
                    group = rounds[changed] = ([], [])
                group[0].append(pk_of[op.key])
                group[1].append(after)
            else:
                others.append(op)
        return rounds, others

    def prepare(self, change: ChangeSet) -> None:
        """The Python side of ``apply``'s biggest writes, done before its phase where an
        auction is computed apart (``auction_one``): on SQLite the phase holds the one
        write lock, and for a 100,000-item flood this was half of its hold. ``apply``
        uses it for this very change only."""
        self._prepared = _Prepared(change, self._round_writes(change), event_rows(change.events, change.at))

    def _queue(self, change: ChangeSet) -> None:
        if change.queue_remove:
            bulk_delete(PendingWork, change.queue_remove)
        for guid, keep in change.queue_drop:
            PendingWork.objects.filter(where_q(void_requests(guid, keep))).delete()
        if change.queue_put:
            bulk_set(PendingWork,
                     [Values(q.seq, carried=q.carried, batch_position=q.batch_position,
                             attempts=q.attempts, last_error=q.last_error) for q in change.queue_put],
                     ["carried", "batch_position", "attempts", "last_error"])
        if change.queue_add:
            # Tuples, not model instances (issue 14: 100,000 start requests in one request).
            bulk_insert(PendingWork, QUEUE_FIELDS, (
                (q.kind, q.ident, q.process_guid, q.index if q.kind == "lrp" else None,
                 q.task_guid, q.queued_at, q.reason, False, 0, 0, "") for q in change.queue_add))


def _steps(checkpoint: AuditEntry) -> list[tuple[str, float, str, dict[str, Any]]]:
    """The timeline of the scenario a checkpoint loaded."""
    scenario = loaded_scenario(checkpoint)
    return scenario_steps(scenario.data) if scenario is not None else []


def _chunks(items: list[Any]) -> Iterable[list[Any]]:
    for start in range(0, len(items), CHUNK):
        yield items[start:start + CHUNK]


def _pks(keys: list[core.RowKey]) -> list[tuple[str, int, str, int]]:
    out = []
    by_guid: dict[str, set[core.RowKey]] = defaultdict(set)
    for key in keys:
        by_guid[key[0]].add(key)
    for chunk in _chunks(sorted(by_guid)):
        for guid, index, presence, pk in ActualLRP.objects.filter(desired_id__in=chunk).values_list(
                "desired_id", "index", "presence", "id"):
            if (guid, index, presence) in by_guid[guid]:
                out.append((guid, index, presence, pk))
    return out


def _app_put(app: SimApp) -> None:
    fields = {name: (list(getattr(app, name)) if isinstance(getattr(app, name), tuple)
                     else getattr(app, name)) for name in _APP_FIELDS}
    fields.update(modification_tag_epoch=app.epoch, modification_tag_index=app.tag)
    if not DesiredLRP.objects.filter(process_guid=app.process_guid).update(**fields):
        DesiredLRP.objects.create(process_guid=app.process_guid, ports=list(app.ports), **fields)


def _cell_put(cell: SimCell) -> None:
    fields = {"state": cell.state, "presence_lost_at": cell.presence_lost_at,
              "evacuating_since": cell.evacuating_since,
              "evacuation_synced_at": cell.evacuation_synced_at}
    if Cell.objects.filter(cell_id=cell.cell_id).update(**fields):
        return
    zone, _ = Zone.objects.get_or_create(name=cell.zone)
    Cell.objects.create(
        cell_id=cell.cell_id, zone=zone, index=cell.index, memory_mb=cell.memory_mb,
        disk_mb=cell.disk_mb, containers=cell.containers,
        preloaded_rootfses=list(cell.preloaded_rootfses), rootfs_providers=list(cell.rootfs_providers),
        volume_drivers=list(cell.volume_drivers), placement_tags=list(cell.placement_tags),
        optional_placement_tags=list(cell.optional_placement_tags),
        proxy_memory_mb=cell.proxy_memory_mb, **fields)


def _task_create(spec: SimTask) -> int:
    task = spec.task
    row = Task.objects.filter(task_guid=task.task_guid).first()
    values = {"domain": task.domain, "state": task.state, "cell_id": task.cell_id,
              "created_at": task.created_at, "updated_at": task.updated_at,
              "memory_mb": spec.memory_mb, "disk_mb": spec.disk_mb, "rootfs": spec.rootfs,
              "placement_tags": list(spec.placement_tags), "volume_drivers": list(spec.volume_drivers),
              "duration_s": spec.duration_s, "placement_mode": spec.placement_mode,
              "completion_callback_url": task.callback_url}
    if row is not None:
        # A service stored the task's other BBS fields first (annotation, max_pids).
        Task.objects.filter(pk=row.pk).update(**values)
        return row.pk
    return Task.objects.create(task_guid=task.task_guid, **values).pk


def _record_auction(record: RoundRecord) -> int:
    """The auction's replay record (``replay_fields``: one rule for the live cluster and a
    plan's world), with the SUSPECT and EVACUATING copies its batch names read here."""
    fields = replay_fields(record, _copies(copy_keys(record)), items_max=RECORD_ITEMS_MAX,
                           sample=RECORD_SAMPLE)
    run = AuctionRun.objects.create(wall_started=time.time() - record.wall_seconds,
                                    world_epoch=world_epoch(), **fields)
    kept = list(AuctionRun.objects.order_by("-pk").values_list("pk", flat=True)[:KEEP_FULL_RECORDS])
    if len(kept) < KEEP_FULL_RECORDS:
        return run.pk
    for old in AuctionRun.objects.filter(pk__lt=kept[-1], detail="full").only("pk", "explanations"):
        if old.explanations is None:
            old.detail = "none"
        else:
            old.explanations = [explanation_summary(note) for note in old.explanations]
            old.detail = "summary"
        old.save(update_fields=["explanations", "detail"])
    return run.pk


def _copies(keys: set[tuple[str, int]]) -> dict[tuple[str, int], tuple[str, str]]:
    """The copy each instance's replay entry names (``named_copy``: one precedence)."""
    found: dict[tuple[str, int], dict[str, str]] = defaultdict(dict)
    for chunk in _chunks(sorted({g for g, _ in keys})):
        for guid, index, presence, cell_id in ActualLRP.objects.filter(
            desired_id__in=chunk, presence__in=COPY_PRECEDENCE,
        ).values_list("desired_id", "index", "presence", "cell_id"):
            if (guid, index) in keys:
                found[(guid, index)][presence] = cell_id
    return {key: copy for key, by_presence in found.items()
            if (copy := named_copy(by_presence)) is not None}


def _record_pass(change: ChangeSet) -> None:
    record = change.convergence
    metrics = dict(record.metrics)
    ConvergenceRun.objects.create(at=record.at, duration_ns=metrics.get("ConvergenceLRPDuration", 0),
                                  metrics=metrics, lrp=record.lrp, tasks=record.tasks,
                                  world_epoch=world_epoch())


__all__ = ["DbStore", "sim_app", "sim_cell", "sim_task"]

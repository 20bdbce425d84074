"""The simulated reps: what each cell does with its containers as sim time passes.

A claimed instance becomes RUNNING after its app's start delay; an injected crash
fires at its time; a task completes after its run time; a draining cell evacuates
(bbs.md 6.3). Each event happens at its own sim instant (not at the tick), so the
crash back-off and ``since`` are exact whatever the tick rate. A failed cell's rep is
unreachable: it reports nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import F

from auction.bbs import events as ev
from auction.bbs import task_states
from auction.bbs.crash import crash
from auction.bbs.errors import BBSError as CoreError
from auction.bbs.lrp_operations import unclaim
from auction.models import ActualLRP, BBSEvent, Cell, DesiredLRP, Task
from auction.selectors.bbs import ACTUAL_COLUMNS, TASK_COLUMNS, actual_from_values, task_from_values
from auction.services.callbacks import task_callbacks_request
from auction.services.counters import counters_add
from auction.services.events import events_record, events_store
from auction.services.rows import actual_model_fields
from auction.services.work import work_request_lrps
from auction.sim.reps import (
    CRASH_REASON,
    EVACUATION_SYNC_S,
    crash_time,
    evacuation_over,
    evacuation_plan,
    instance_address,
)


@dataclass(slots=True)
class RepReport:
    started: int = 0
    crashed: int = 0
    completed: int = 0
    evacuated: int = 0
    cells: set[str] = field(default_factory=set)


def _silent_cells() -> set[str]:
    return set(Cell.objects.filter(state=Cell.State.FAILED).values_list("cell_id", flat=True))


def reps_advance(until: float, seed: int = 0) -> RepReport:
    report = RepReport()
    silent = _silent_cells()
    _start_due(until, silent, seed, report)
    _crash_due(until, silent, report)
    _complete_due(until, silent, report)
    _evacuate_due(until, report)
    return report


def _start_due(until: float, silent: set[str], seed: int, report: RepReport) -> None:
    rows = list(ActualLRP.objects.filter(
        state=ActualLRP.State.CLAIMED, presence=ActualLRP.Presence.ORDINARY, ready_at__lte=until,
    ).exclude(cell_id__in=silent).order_by("ready_at", "id"))
    if not rows:
        return
    specs = {d.process_guid: d for d in DesiredLRP.objects.filter(
        process_guid__in={r.desired_id for r in rows})}
    for row in rows:
        at = row.ready_at or until
        spec = specs.get(row.desired_id)
        crash_at = None if spec is None else crash_time(
            seed, row.desired_id, row.index, row.modification_tag_index, at,
            spec.crash_probability, spec.crash_after_s)
        ports = [{"container_port": p, "host_port": 61000 + row.index} for p in (spec.ports if spec else [])]
        updated = ActualLRP.objects.filter(pk=row.pk, state=ActualLRP.State.CLAIMED).update(
            state=ActualLRP.State.RUNNING, since=at, address=instance_address(row.cell_id, row.index),
            ports=ports, ready_at=None, crash_at=crash_at,
            modification_tag_index=F("modification_tag_index") + 1,
        )
        if not updated:
            continue
        # Start deletes any EVACUATING and SUSPECT row of the index (bbs.md 2.3).
        ActualLRP.objects.filter(desired_id=row.desired_id, index=row.index).exclude(
            presence=ActualLRP.Presence.ORDINARY).delete()
        report.started += 1
        report.cells.add(row.cell_id)
        events_store([BBSEvent(at=at, type="actual_lrp_instance_changed", key=row.key,
                               cell_id=row.cell_id, data={"after": {"state": "RUNNING"}})])


def actual_lrp_crash_now(row: ActualLRP, at: float, *, immediate_start: bool = True) -> bool:
    """Apply a crash report for ``row`` at ``at`` through the core's Crash (bbs.md 3)."""
    values = ActualLRP.objects.filter(pk=row.pk).values_list(*ACTUAL_COLUMNS).first()
    if values is None:
        return False
    outcome = crash(actual_from_values(values), at, CRASH_REASON, immediate_start=immediate_start)
    if isinstance(outcome, CoreError):
        return False
    if outcome.after is None:
        ActualLRP.objects.filter(pk=row.pk).delete()
    else:
        fields = actual_model_fields(outcome.after)
        fields.pop("desired_id"), fields.pop("index"), fields.pop("presence")
        ActualLRP.objects.filter(pk=row.pk).update(**fields, ready_at=None, crash_at=None)
    events_record(outcome.events, at)
    counters_add({"CrashesReported": 1})
    if outcome.start:
        work_request_lrps([(row.desired_id, row.index)], at, "crash")
    return True


def _crash_due(until: float, silent: set[str], report: RepReport) -> None:
    rows = ActualLRP.objects.filter(
        crash_at__lte=until, state__in=[ActualLRP.State.CLAIMED, ActualLRP.State.RUNNING],
    ).exclude(cell_id__in=silent).order_by("crash_at", "id")
    for row in rows:
        if actual_lrp_crash_now(row, row.crash_at or until):
            report.crashed += 1
            report.cells.add(row.cell_id)


def _complete_due(until: float, silent: set[str], report: RepReport) -> None:
    rows = Task.objects.filter(state=Task.State.RUNNING, finishes_at__lte=until).exclude(
        cell_id__in=silent).order_by("finishes_at", "id")
    succeeded: dict[str, int] = {}
    for task in rows:
        at = task.finishes_at or until
        values = tuple(getattr(task, "pk" if c == "id" else c) for c in TASK_COLUMNS)
        done = task_states.complete(task_from_values(values), at, failed=False, failure_reason="", result="")
        if isinstance(done, CoreError):
            continue
        Task.objects.filter(pk=task.pk, state=Task.State.RUNNING).update(
            state=done.state, failed=False, first_completed_at=done.first_completed_at,
            updated_at=done.updated_at, cell_id=done.cell_id, finishes_at=None)
        events_record([ev.Event(ev.TASK_CHANGED, before=task_from_values(values), after=done)], at)
        succeeded[task.cell_id] = succeeded.get(task.cell_id, 0) + 1
        report.completed += 1
        report.cells.add(task.cell_id)
        if task.completion_callback_url:
            task_callbacks_request([task.task_guid])
    counters_add({f"TasksSucceeded.{cell}": n for cell, n in succeeded.items()})


def _evacuate_due(until: float, report: RepReport) -> None:
    for cell in Cell.objects.filter(state=Cell.State.DRAINING, presence_lost_at__isnull=True):
        synced = cell.evacuation_synced_at
        due = (cell.evacuating_since or until) if synced is None else synced + EVACUATION_SYNC_S
        while due <= until and cell.presence_lost_at is None:
            report.evacuated += evacuation_sync(cell, due)
            report.cells.add(cell.cell_id)
            due += EVACUATION_SYNC_S


def evacuation_sync(cell: Cell, at: float) -> int:
    """One sync of a draining cell's rep (bbs.md 6.3); returns the containers it removed."""
    rows = list(ActualLRP.objects.filter(cell_id=cell.cell_id).order_by("desired_id", "index"))
    ordinary_state = {
        (r.desired_id, r.index): r.state
        for r in ActualLRP.objects.filter(
            desired_id__in={r.desired_id for r in rows}, presence=ActualLRP.Presence.ORDINARY)
    }
    desired = set(DesiredLRP.objects.filter(process_guid__in={r.desired_id for r in rows})
                  .values_list("process_guid", flat=True))
    plan = evacuation_plan(rows, ordinary_state, desired)
    for row in plan.delete:
        ActualLRP.objects.filter(pk=row.pk).delete()
    for row in plan.evacuate:
        # Keep serving from an EVACUATING copy until the replacement runs.
        ActualLRP.objects.filter(desired_id=row.desired_id, index=row.index,
                                 presence=ActualLRP.Presence.EVACUATING).delete()
        ActualLRP.objects.create(
            desired_id=row.desired_id, index=row.index, presence=ActualLRP.Presence.EVACUATING,
            state=ActualLRP.State.RUNNING, domain=row.domain, instance_guid=row.instance_guid,
            cell_id=row.cell_id, address=row.address, ports=row.ports, since=row.since,
            crash_count=row.crash_count, modification_tag_epoch=row.modification_tag_epoch,
        )
    for row in plan.unclaim:
        _unclaim(row, at)
    work_request_lrps(plan.restart, at, "evacuation")
    Cell.objects.filter(pk=cell.pk).update(evacuation_synced_at=at)
    cell.evacuation_synced_at = at
    left = ActualLRP.objects.filter(cell_id=cell.cell_id).exclude(state=ActualLRP.State.UNCLAIMED)
    tasks_left = Task.objects.filter(cell_id=cell.cell_id, state=Task.State.RUNNING).exists()
    over, timed_out = evacuation_over(at, cell.evacuating_since, left.exists() or tasks_left)
    if timed_out:
        stranded = left.filter(presence=ActualLRP.Presence.EVACUATING).count()
        counters_add({"StrandedEvacuatingActualLRPs": stranded})
    if over:
        # Evacuation is over: the rep drops its presence; convergence prunes leftovers.
        Cell.objects.filter(pk=cell.pk).update(presence_lost_at=at)
        cell.presence_lost_at = at
    return plan.removed


def _unclaim(row: ActualLRP, at: float) -> None:
    values = ActualLRP.objects.filter(pk=row.pk).values_list(*ACTUAL_COLUMNS).first()
    if values is None:
        return
    after = unclaim(actual_from_values(values), at)
    if isinstance(after, CoreError):
        return
    fields = actual_model_fields(after)
    for name in ("desired_id", "index", "presence"):
        fields.pop(name)
    ActualLRP.objects.filter(pk=row.pk).update(**fields, ready_at=None, crash_at=None)
    events_record(ev.changed(actual_from_values(values), after, group=True), at)

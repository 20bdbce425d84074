"""Desiring, cancelling and deleting tasks (bbs.md 7)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, transaction

from auction.bbs import events as ev
from auction.bbs import task_states
from auction.bbs import types as core
from auction.bbs.errors import BBSError as CoreError
from auction.bbs.validation import bbs_message
from auction.models import Task
from auction.selectors.bbs import TASK_COLUMNS, task_from_values
from auction.selectors.clock import sim_now
from auction.services.audit import audit_record
from auction.services.errors import (
    BBSError,
    InvalidRequest,
    ResourceExists,
    ResourceNotFound,
    reject_unknown_members,
)
from auction.services.events import events_record
from auction.services.intents import intents_after_commit
from auction.services.otto import otto_task_submit
from auction.services.retry import retry_locked
from auction.services.store import DbStore, sim_task
from auction.sim.changes import CallbacksDue, CellsChanged
from auction.sim.lrps import task_desire as core_task_desire

TASK_FIELDS = (
    "task_guid", "domain", "rootfs", "memory_mb", "disk_mb", "max_pids", "placement_tags",
    "volume_drivers", "annotation", "completion_callback_url", "duration_s", "placement_mode",
)


class InvalidStateTransition(BBSError):
    """A task operation its state does not allow: ``Cannot transition from X to Y``."""

    type = "InvalidStateTransition"
    status = 409


@retry_locked
def task_desire(spec: Mapping[str, Any], *, source: str = "system", user: Any = None) -> Task:
    """Desire a task (bbs.md 7): ``auction.sim.lrps.task_desire``; an Otto task goes to
    the open auction instead of the auctioneer (otto.md 9)."""
    reject_unknown_members(spec, TASK_FIELDS)
    task = Task(**spec)
    errors = task.bbs_errors()
    if errors:
        raise InvalidRequest(bbs_message(errors))
    now = sim_now()
    try:
        with transaction.atomic():
            if Task.objects.filter(task_guid=task.task_guid).exists():
                raise ResourceExists()
            task.created_at = task.updated_at = now
            task.save()  # every BBS field; the rule's change completes it
            store = DbStore()
            store.apply(core_task_desire(sim_task(task), now))
            task.refresh_from_db()
            if task.placement_mode == Task.PlacementMode.OTTO:
                otto_task_submit([task], now)
            audit_record("task_desire", task.task_guid, now, source=source, user=user,
                         diff={name: [None, spec[name]] for name in spec})
    except IntegrityError:
        raise ResourceExists() from None
    return task


def _core(task: Task) -> core.Task:
    return task_from_values(tuple(getattr(task, "pk" if c == "id" else c) for c in TASK_COLUMNS))


def _locked(task_guid: str) -> Task:
    task = Task.objects.select_for_update().filter(task_guid=task_guid).first()
    if task is None:
        raise ResourceNotFound()
    return task


def _raise(error: CoreError) -> None:
    raise InvalidStateTransition(error.message)


@retry_locked
def task_cancel(task_guid: str, *, source: str = "system", user: Any = None) -> Task:
    """PENDING or RUNNING → COMPLETED, failed ``task was cancelled``; its cell stops it."""
    with transaction.atomic():
        now = sim_now()
        task = _locked(task_guid)
        before = _core(task)
        after = task_states.cancel(before, now)
        if isinstance(after, CoreError):
            _raise(after)
        cell_id = task.cell_id
        task.state, task.failed, task.failure_reason = after.state, after.failed, after.failure_reason
        task.cell_id, task.first_completed_at, task.updated_at = after.cell_id, after.first_completed_at, after.updated_at
        # The simulated rep stops the container at once, so it never completes on its own.
        task.finishes_at = None
        task.save()
        events_record([ev.Event(ev.TASK_CHANGED, before=before, after=after)], now)
        audit_record("task_cancel", task_guid, now, source=source, user=user,
                     diff={"state": [before.state, after.state]}, cell_id=cell_id)
        intents_after_commit([CellsChanged((cell_id,) if cell_id else ()),
                              *([CallbacksDue((task_guid,))] if task.completion_callback_url else [])])
    return task


@retry_locked
def task_delete(task_guid: str, *, source: str = "system", user: Any = None) -> None:
    """Resolve and delete a finished task, as a client does after reading its result
    (``ResolvingTask`` then ``DeleteTask``): COMPLETED or RESOLVING only."""
    with transaction.atomic():
        now = sim_now()
        task = _locked(task_guid)
        before = _core(task)
        resolving = before if before.state == Task.State.RESOLVING else task_states.resolving(before, now)
        if isinstance(resolving, CoreError):
            _raise(resolving)
        refused = task_states.check_delete(resolving)
        if refused is not None:
            _raise(refused)
        task.delete()
        events_record([ev.Event(ev.TASK_REMOVED, before=before)], now)
        audit_record("task_delete", task_guid, now, source=source, user=user,
                     diff={"state": [before.state, None]})

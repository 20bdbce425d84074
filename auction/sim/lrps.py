"""What the BBS API does with desired state, outside convergence (bbs.md 1.4, 2.3, 7).

Desire, update (scale), remove and retire for LRPs, desire for tasks: pure rules that
read the rows they touch and return a ``ChangeSet``. Validation (bbs.md 1.2) happens
before, with ``auction.bbs.validation``; the stores and services call these so that a
scale in the admin, the API, the dashboard, a scenario timeline or a plan does exactly
the same thing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from auction.bbs import events as ev
from auction.bbs import types as core
from auction.bbs.changes import RowCreate, RowDelete
from auction.bbs.lrp_operations import new_unclaimed
from auction.sim.changes import ChangeSet
from auction.sim.ids import desired_epoch, row_epoch
from auction.sim.model import SimApp, SimTask
from auction.sim.where import EQ, GE, Where

DESIRED_CREATED = "desired_lrp_created"
DESIRED_CHANGED = "desired_lrp_changed"
DESIRED_REMOVED = "desired_lrp_removed"

def desired_view(app: SimApp) -> core.DesiredLRP:
    return core.DesiredLRP(app.process_guid, app.domain, app.instances)


def _unclaimed(change: ChangeSet, app: SimApp, indices: Iterable[int], existing: set[int],
               at: float) -> None:
    """New ORDINARY UNCLAIMED rows, then **one** start request listing them (bbs.md 1.4)."""
    new = [i for i in indices if i not in existing]
    for index in new:
        row = new_unclaimed(app.process_guid, index, app.domain, at,
                            row_epoch((app.process_guid, index), at))
        change.lrp_ops.append(RowCreate(row))
        change.events += ev.created(row, group=True)
    change.request_lrps([(app.process_guid, i) for i in new], at, "desire")


def lrp_desire(app: SimApp, existing_ordinary: Iterable[int], at: float) -> ChangeSet:
    """Desire: store it (a new modification tag), ``desired_lrp_created``, an UNCLAIMED
    row per index, one start request. An index that already has an ORDINARY row (an
    orphan) keeps it."""
    change = ChangeSet(at)
    app = replace(app, epoch=desired_epoch(app.process_guid, at), tag=0)
    change.apps_put.append(app)
    change.events.append(ev.Event(DESIRED_CREATED, after=desired_view(app)))
    _unclaimed(change, app, range(app.instances), set(existing_ordinary), at)
    return change


def void_requests(process_guid: str, keep: int) -> tuple[Where, ...]:
    """The queued items a scale-down to ``keep`` makes void (bbs.md 1.4 [project rule]):
    the app's LRP start requests from index ``keep`` on, carried or new. Both stores
    drop by it (``ChangeSet.queue_drop``): the memory store with ``holds_all``, the
    database store as one filter (``auction/services/where.py``)."""
    return (Where("kind", EQ, "lrp"), Where("process_guid", EQ, process_guid), Where("index", GE, keep))


def _stop_from(change: ChangeSet, process_guid: str, rows: Sequence[core.ActualLRP], keep: int,
               reachable: Callable[[str], bool]) -> None:
    """Scale-down (bbs.md 1.4 ``stopInstancesFrom``): every non-EVACUATING row with index
    >= ``keep``. UNCLAIMED or CRASHED rows go at once; CLAIMED or RUNNING ones get a stop
    when their cell has a presence (the simulated rep removes the container and reports
    it at once, so the row goes too); on a cell without one nothing happens (an extra
    for convergence)."""
    change.queue_drop.append((process_guid, keep))
    change.merge(lrp_stops(rows, keep, reachable, change.at))


def lrp_stops(rows: Sequence[core.ActualLRP], keep: int, reachable: Callable[[str], bool],
              at: float) -> ChangeSet:
    """The instance stops of ``_stop_from``, without the queue: what a removal or a
    scale-down does to ``rows`` (the database shell applies a big one's in chunks after
    the desired LRP's own change, ``auction/services/lrps.py``)."""
    change = ChangeSet(at)
    for row in sorted(rows, key=lambda r: (r.index, r.presence)):
        if row.index < keep or row.presence == core.EVACUATING:
            continue
        if row.state in (core.UNCLAIMED, core.CRASHED) or reachable(row.cell_id):
            change.lrp_ops.append(RowDelete(row.key, row))
            change.events += ev.removed(row, group=True)
            if row.cell_id:
                change.touched.add(row.cell_id)
    return change


def lrp_update(app: SimApp, update: Mapping[str, Any], rows: Sequence[core.ActualLRP],
               reachable: Callable[[str], bool], at: float) -> tuple[SimApp, ChangeSet]:
    """Update (bbs.md 1.4): instances (scale up: new rows and one start request; down:
    ``_stop_from``), routes and annotation; then ``desired_lrp_changed``. The tag index
    moves on every update, even one that changes nothing. ``rows`` are the app's
    ActualLRPs. Returns the app after the update."""
    change = ChangeSet(at)
    after = replace(app, instances=update.get("instances", app.instances), tag=app.tag + 1)
    change.apps_put.append(after)
    ordinary = {r.index for r in rows if r.presence == core.ORDINARY}
    if after.instances > app.instances:
        _unclaimed(change, after, range(app.instances, after.instances), ordinary, at)
    elif after.instances < app.instances:
        _stop_from(change, app.process_guid, rows, after.instances, reachable)
    change.events.append(ev.Event(DESIRED_CHANGED, before=desired_view(app),
                                  after=desired_view(after)))
    return after, change


def lrp_remove(app: SimApp, rows: Sequence[core.ActualLRP], reachable: Callable[[str], bool],
               at: float) -> ChangeSet:
    """Remove: delete it, ``desired_lrp_removed``, then the scale-down to 0 (bbs.md 1.4)."""
    change = ChangeSet(at)
    change.apps_removed.append(app.process_guid)
    change.events.append(ev.Event(DESIRED_REMOVED, before=desired_view(app)))
    _stop_from(change, app.process_guid, rows, 0, reachable)
    return change


def lrp_retire(row: core.ActualLRP, at: float) -> ChangeSet:
    """Retire one ORDINARY instance (``cfdot retire-actual-lrp``, bbs.md 2.3): UNCLAIMED or
    CRASHED rows are deleted; a CLAIMED or RUNNING one is stopped and the simulated rep
    reports it removed at once. Convergence later finds the index missing."""
    change = ChangeSet(at)
    change.lrp_ops.append(RowDelete(row.key, row))
    change.events += ev.removed(row, group=True)
    if row.cell_id:
        change.touched.add(row.cell_id)
    return change


def task_desire(sim_task: SimTask, at: float) -> ChangeSet:
    """Desire a task: PENDING, ``task_created``, and a start request for a Diego task
    (an Otto task goes to the open auction instead, otto.md 9)."""
    task = replace(sim_task.task, state=core.PENDING, created_at=at, updated_at=at)
    change = ChangeSet(at)
    change.tasks_put.append(replace(sim_task, task=task))
    change.events.append(ev.Event(ev.TASK_CREATED, after=task))
    if sim_task.placement_mode == "diego":
        change.request_tasks([task.task_guid], at, "desire")
    return change


# A scale by this factor or more asks the operator first (dashboard.md C7).
SCALE_CONFIRM_FACTOR = 10


def scale_doubts(current: int, new: int, memory_mb: int, cluster_memory_mb: int) -> str:
    """Why scaling from ``current`` to ``new`` instances of ``memory_mb`` each deserves an
    "are you sure" on a cluster of ``cluster_memory_mb`` (healthy cells); "" when it does not.

    Diego itself takes any count up to its limit: the question is the dashboard's, so that a
    slip of the keyboard (100000 for 10) is not a wedged afternoon (dashboard.md C7).
    """
    reasons = []
    if new > current and new >= SCALE_CONFIRM_FACTOR * max(current, 1):
        reasons.append(f"from {current} to {new} instances is {new / max(current, 1):.0f}x")
    needs = new * memory_mb
    if needs > cluster_memory_mb:
        reasons.append(f"{new} x {memory_mb} MB needs {_size(needs)}; "
                       f"the cluster has {_size(cluster_memory_mb)}")
    return "; ".join(reasons)


def _size(mb: int) -> str:
    return f"{mb / 1024:,.1f} GB" if mb >= 1024 else f"{mb} MB"


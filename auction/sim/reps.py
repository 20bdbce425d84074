"""The simulated rep: what each cell does with its containers as sim time passes.

Pure, one place for both stores: a claimed instance becomes RUNNING after its app's
start delay (``instances_start``); a started instance may crash at a seeded instant
(``crash_time``, ``instances_crash``); a task completes after its run time
(``tasks_complete``); a draining cell syncs every 10 s and gives up after 600 s
(``evacuation_sync``, bbs.md 6.3); a failed rep's presence lapses 10-15 s after the
failure (``presence_lapses_at``, bbs.md 6.1). Each rule returns a ``ChangeSet``.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import lru_cache
from hashlib import blake2b
from operator import attrgetter
from typing import Any

from auction.bbs import events as ev
from auction.bbs import task_states
from auction.bbs import types as core
from auction.bbs.changes import RowCreate, RowDelete, RowUpdate, TaskUpdate
from auction.bbs.crash import crash
from auction.bbs.errors import BBSError
from auction.bbs.lrp_operations import unclaim
from auction.sim.changes import ChangeSet, Note
from auction.sim.model import SimApp, SimCell, SimTask

PRESENCE_TTL_S = 15.0
PRESENCE_REFRESH_S = 5.0
EVACUATION_SYNC_S = 10.0
EVACUATION_TIMEOUT_S = 600.0
CRASH_REASON = "APP/PROC/WEB: Exited with status 1 (simulated crash)"


def presence_lapses_at(now: float) -> float:
    """A failed rep stops refreshing; its presence lapses 15 s after the last refresh
    (every 5 s), so 10-15 s after the failure (bbs.md 6.1)."""
    last_refresh = math.floor(now / PRESENCE_REFRESH_S) * PRESENCE_REFRESH_S
    return last_refresh + PRESENCE_TTL_S


def instance_address(cell_id: str, index: int) -> str:
    return f"{_cell_prefix(cell_id)}{(index % 250) + 2}"


@lru_cache(maxsize=4096)
def _cell_prefix(cell_id: str) -> str:
    """``10.a.b.`` of a cell's addresses (a hash of its id: one per cell, not per start)."""
    h = zlib.crc32(cell_id.encode())
    return f"10.{h % 250}.{(h >> 8) % 250}."


def crash_time(seed: int, process_guid: str, index: int, tag_index: int, started_at: float,
               crash_probability: float, crash_after_s: float) -> float | None:
    """When a just-started instance will crash, or None: one seeded draw per start.

    The draw depends only on the seed and the instance's identity and tag, not on the
    order events happen in, so two shells (or two strategies) replay the same crashes.
    """
    if crash_probability <= 0:
        return None
    if _draw(f"{seed}:{process_guid}:{index}:{tag_index}") < crash_probability:
        return started_at + crash_after_s
    return None


#: 2**-53: a 53-bit integer times this is a float in [0, 1), every value exact.
_UNIT = 1.0 / (1 << 53)


def _draw(key: str) -> float:
    """A uniform draw in [0, 1) fixed by ``key``: the top 53 bits of its BLAKE2b digest.

    A hash, not a seeded Mersenne Twister: seeding one per start made and twisted its whole
    state for one number, ten times the digest's cost (docs/performance.md); the digest is
    as evenly spread."""
    return (int.from_bytes(blake2b(key.encode(), digest_size=8).digest()) >> 11) * _UNIT


@dataclass(slots=True)
class EvacuationPlan:
    """What one sync of a draining cell's rep does (bbs.md 6.3), row by row.

    Apply in this order: ``delete`` (containers that go), then ``evacuate`` (RUNNING
    ORDINARY rows copied as EVACUATING, which keep serving until the replacement
    runs), then ``unclaim`` (the ORDINARY rows go back to the auction), then one start
    request for ``restart``.
    """

    delete: list[Any] = field(default_factory=list)
    evacuate: list[Any] = field(default_factory=list)
    unclaim: list[Any] = field(default_factory=list)
    restart: list[tuple[str, int]] = field(default_factory=list)
    removed: int = 0


def evacuation_plan(rows: Iterable[Any], ordinary_state: Mapping[tuple[str, int], str],
                    desired: Container[str]) -> EvacuationPlan:
    """Plan one evacuation sync over the rows on the cell (any object with
    ``process_guid``, ``index``, ``presence`` and ``state``: a core row or a model).

    ``ordinary_state`` maps (process_guid, index) to the state of its ORDINARY row, read
    before the sync; ``desired`` holds the process guids still desired.
    """
    plan = EvacuationPlan()
    for row in sorted(rows, key=lambda r: (r.process_guid, r.index, r.presence)):
        key = (row.process_guid, row.index)
        if row.presence == "ORDINARY" and row.state == "CLAIMED":
            plan.unclaim.append(row)
            plan.restart.append(key)
            plan.removed += 1
        elif row.presence == "ORDINARY" and row.state == "RUNNING":
            plan.evacuate.append(row)
            plan.unclaim.append(row)
            plan.restart.append(key)
        elif row.presence == "EVACUATING":
            replacement = ordinary_state.get(key)
            if row.process_guid not in desired or replacement in ("RUNNING", "CRASHED", None):
                plan.delete.append(row)
                plan.removed += 1
        elif row.state == "CLAIMED":  # a starting SUSPECT copy
            plan.delete.append(row)
            plan.removed += 1
    return plan


def evacuation_over(at: float, evacuating_since: float | None, containers_left: bool) -> tuple[bool, bool]:
    """(over, timed out): the rep drops its presence once nothing is left on the cell,
    or when the evacuation timeout passes with copies stranded (bbs.md 6.3)."""
    timed_out = evacuating_since is not None and at - evacuating_since >= EVACUATION_TIMEOUT_S
    return timed_out or not containers_left, timed_out


def host_ports(app: SimApp | None, index: int) -> tuple[tuple[int, int], ...]:
    """The rep maps each container port to a host port (bbs.md 2.1 ``ports``)."""
    if app is None or not app.ports:
        return ()  # most apps: no generator per start
    return tuple((port, 61000 + index) for port in app.ports)


def instances_start(rows: Sequence[core.ActualLRP], copies: Mapping[core.LRPKey, Sequence[core.ActualLRP]],
                    apps: Mapping[str, SimApp], at: float, seed: int) -> ChangeSet:
    """The due CLAIMED instances become RUNNING at ``at`` (bbs.md 2.3 Start).

    ``copies`` holds the EVACUATING and SUSPECT rows of those indices: the start deletes
    them (their events first: they leave an instance RUNNING, bbs.md 8). A start draws
    the instance's crash, if any (``crash_time``).
    """
    change = ChangeSet(at)
    lrp_ops, events, touched = change.lrp_ops, change.events, change.touched
    for row in sorted(rows, key=_instance_order):
        guid, index, tag = row.process_guid, row.index, row.modification_tag_index
        app = apps.get(guid)
        crash_at = None if app is None else crash_time(
            seed, guid, index, tag, at, app.crash_probability, app.crash_after_s)
        after = _started(row, core.RUNNING, at, instance_address(row.cell_id, index),
                         host_ports(app, index), None, crash_at, tag + 1)
        if copies:  # most starts have no other copy to delete
            for copy in copies.get((guid, index), ()):
                lrp_ops.append(RowDelete(copy.key, copy))
                events += ev.removed(copy, group=True)
        lrp_ops.append(RowUpdate(row.key, row, after))
        events += ev.changed(row, after, group=True)
        touched.add(row.cell_id)
    return change


_instance_order = attrgetter("process_guid", "index")
_started = core.evolver("state", "since", "address", "ports", "ready_at", "crash_at",
                        "modification_tag_index")


def crash_report(change: ChangeSet, row: core.ActualLRP, at: float, *,
                 immediate_start: bool = True) -> bool:
    """Add a cell's crash report of ``row`` at ``at`` (bbs.md 3) to ``change``.

    The crash ends the instance's life: its timers go with it. A 1st or 2nd crash is
    re-auctioned at once (one start request in the same call) unless ``immediate_start``
    is off (an evacuating cell's crash, bbs.md 6.3). False when the BBS refuses it.
    """
    outcome = crash(row, at, CRASH_REASON, immediate_start=immediate_start)
    if isinstance(outcome, BBSError):
        return False
    if outcome.after is None:
        change.lrp_ops.append(RowDelete(row.key, row))
    else:
        after = core.evolve(outcome.after, ready_at=None, crash_at=None)
        change.lrp_ops.append(RowUpdate(row.key, row, after))
    change.events += outcome.events
    change.counters["CrashesReported"] += 1
    change.touched.add(row.cell_id)
    if outcome.start:
        change.request_lrps([row.lrp_key], at, "crash")
    return True


def instances_crash(rows: Sequence[core.ActualLRP], at: float) -> ChangeSet:
    """The injected crashes due at ``at`` (rows CLAIMED or RUNNING on a reporting cell)."""
    change = ChangeSet(at)
    for row in sorted(rows, key=lambda r: (r.process_guid, r.index, r.presence)):
        crash_report(change, row, at)
    return change


def tasks_complete(tasks: Sequence[SimTask], at: float) -> ChangeSet:
    """The RUNNING tasks due at ``at`` complete, succeeded (bbs.md 7 Complete)."""
    change = ChangeSet(at)
    for sim_task in sorted(tasks, key=lambda t: t.task_guid):
        task = sim_task.task
        done = task_states.complete(task, at, failed=False, failure_reason="", result="")
        if isinstance(done, BBSError):
            continue
        done.finishes_at = None
        change.task_ops.append(TaskUpdate(task, done))
        change.events.append(ev.Event(ev.TASK_CHANGED, before=task, after=done))
        change.counters[f"TasksSucceeded.{task.cell_id}"] += 1
        change.counters["TasksSucceeded"] += 1
        change.touched.add(task.cell_id)
        if task.callback_url:
            change.callbacks.append(task.task_guid)
    return change


def evacuation_sync(cell: SimCell, rows: Sequence[core.ActualLRP],
                    ordinary_state: Mapping[core.LRPKey, str], desired: Container[str],
                    tasks_left: bool, at: float) -> ChangeSet:
    """One sync of a draining cell's rep (bbs.md 6.3): per container, what the BBS does;
    then, when nothing is left or the timeout passed, the rep drops its presence (the
    copies left count as stranded) and convergence prunes what remains."""
    change = ChangeSet(at)
    plan = evacuation_plan(rows, ordinary_state, desired)
    for row in plan.delete:
        change.lrp_ops.append(RowDelete(row.key, row))
        change.events += ev.removed(row, group=True)
    for row in plan.evacuate:
        # Keep serving from an EVACUATING RUNNING copy until the replacement runs.
        copy = core.evolve(row, presence=core.EVACUATING, state=core.RUNNING, ready_at=None,
                           crash_at=None)
        change.lrp_ops.append(RowCreate(copy))
        change.events += ev.created(copy, group=True)
    for row in plan.unclaim:
        after = unclaim(row, at)
        if isinstance(after, BBSError):
            continue
        change.lrp_ops.append(RowUpdate(row.key, row, after))
        change.events += ev.changed(row, after, group=True)
    change.request_lrps(plan.restart, at, "evacuation")
    evacuated = {id(r) for r in plan.delete} | {id(r) for r in plan.unclaim}
    left = [r for r in rows if id(r) not in evacuated and r.state != core.UNCLAIMED]
    left += [core.evolve(r, presence=core.EVACUATING) for r in plan.evacuate]
    over, timed_out = evacuation_over(at, cell.evacuating_since, bool(left) or tasks_left)
    synced = SimCell(**{**_cell_fields(cell), "evacuation_synced_at": at})
    if timed_out:
        change.counters["StrandedEvacuatingActualLRPs"] += sum(
            1 for r in left if r.presence == core.EVACUATING)
    if over:
        # The rep drops its presence; convergence prunes what is left (step 0b).
        synced.presence_lost_at = at
        change.notes.append(Note("cell_evacuated", cell.cell_id, cell.cell_id))
    change.cells_put.append(synced)
    change.touched.add(cell.cell_id)
    return change


def next_evacuation_sync(cell: SimCell) -> float | None:
    """When a draining cell's rep syncs next: at once, then every 10 s, until it has
    dropped its presence (bbs.md 6.3)."""
    if cell.state != "draining" or cell.presence_lost_at is not None or cell.evacuating_since is None:
        return None
    if cell.evacuation_synced_at is None:
        return cell.evacuating_since
    return cell.evacuation_synced_at + EVACUATION_SYNC_S


def _cell_fields(cell: SimCell) -> dict[str, Any]:
    return {f.name: getattr(cell, f.name) for f in fields(cell)}

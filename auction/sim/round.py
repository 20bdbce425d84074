"""One auction round, as cloudfoundry/auction's ``Schedule`` owns it (auction.md 1 steps 3-8).

From the queue and the cells as they are at one instant: form the batch (carried-over
items first in their previous order, then new ones by arrival; stale items dropped,
duplicates removed), order and schedule it with the engine, let every winning cell
perform its work (auction.md 7), then claim (LRP: CLAIMED on the winner) or start
(task: RUNNING), report each failure (Fail: the instance stays UNCLAIMED with the
error; Reject: the task's rejection count, the 4th fails it) and carry what failed
over into the next batch. The answer is a ``ChangeSet``; the store applies it.

``auctioneer_runs`` is the loop around it: rounds back to back while new work waits,
at most ``MAX_AUCTIONS_PER_RUN`` at a time; carried-over work alone never starts one.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from auction.bbs import events as ev
from auction.bbs import task_states
from auction.bbs import types as core
from auction.bbs.changes import RowUpdate, TaskUpdate
from auction.bbs.errors import BBSError
from auction.engine import (
    AuctionConfig,
    AuctionResult,
    CellState,
    CommitOutcome,
    LRPWork,
    TaskWork,
    apply_commits,
    commit,
    dedupe,
    order_batch,
    schedule,
)
from auction.engine.state import CellColumns, Holders
from auction.sim.changes import ChangeSet, Note
from auction.sim.ids import instance_guid
from auction.sim.loads import answering, cell_state, free_resources
from auction.sim.model import DRAINING, Load, QueuedWork, SimApp, SimCell, SimTask
from auction.sim.quality import AuctionStats, auction_stats
from auction.sim.timers import NEW_WORK

MAX_AUCTIONS_PER_RUN = 100

_cell_id = attrgetter("cell_id")


@dataclass(slots=True)
class RoundInput:
    """What one auction reads, all at the instant ``at``.

    ``unclaimed`` holds the ORDINARY UNCLAIMED rows of the queued instances (others are
    stale); ``tasks`` the queued tasks; ``cached`` the process guids each cell ever ran
    (the ``objective`` strategy's blob cache, auction.md 8.2).
    """

    at: float
    queue: list[QueuedWork]
    cells: list[SimCell]
    loads: Mapping[str, Load]
    apps: Mapping[str, SimApp]
    unclaimed: Mapping[core.LRPKey, core.ActualLRP]
    tasks: Mapping[str, SimTask]
    config: AuctionConfig
    cached: Mapping[str, Iterable[str]] = field(default_factory=dict)
    explain: bool = False
    #: A process guid's CLAIMED/RUNNING instances per cell id, now (what ``loads`` count),
    #: when the store indexes its instances by app (``quality.batch_zone_skew``).
    holders: Holders | None = None
    #: The state fetch's answer when the store keeps one between auctions (``FetchAnswer``);
    #: None: the round fetches (``fetch_states``).
    fetch: FetchAnswer | None = None


@dataclass(slots=True)
class FetchAnswer:
    """What one round's state fetch answers (auction.md 1.3): the cells that answered in
    the fetch's order (``loads.answering``), each one's state in that order, every cell
    by id (the commit reaches the winners), and the engine's columns when the caller
    keeps them between auctions (``CellColumns``, refreshed by the engine for ``states``)."""

    cells: list[SimCell]
    states: list[CellState]
    by_id: Mapping[str, SimCell]
    columns: CellColumns | None = None


def fetch_states(data: RoundInput) -> FetchAnswer:
    """The state fetch made for this round alone, from ``cells``, ``loads`` and ``cached``."""
    fetched = answering(data.cells, data.at)
    objective = data.config.placement_strategy == "objective"
    states = [cell_state(c, data.loads[c.cell_id], data.cached.get(c.cell_id, ()) if objective else ())
              for c in fetched]
    return FetchAnswer(fetched, states, dict(zip(map(_cell_id, data.cells), data.cells, strict=True)))


@dataclass(slots=True)
class RoundRecord:
    """The auction as recorded for replay and metrics (auction.md 9, dashboard.md 2)."""

    at: float
    config: AuctionConfig
    states: list[CellState]
    batch: list[Any]
    result: AuctionResult
    outcomes: dict[str, CommitOutcome]
    unreachable: set[str]
    stats: AuctionStats
    fetch_seconds: float
    wall_seconds: float
    waits: list[float]
    attempts: list[int]


def has_new_work(queue: Iterable[QueuedWork]) -> bool:
    """auction.md 1 step 8: carried-over work does not start an auction by itself."""
    return any(map(NEW_WORK.applies, queue))


def _work_items(data: RoundInput) -> tuple[list[Any], list[QueuedWork]]:
    """Engine work for the items still waiting; the rest leave the queue (1.4)."""
    items: list[Any] = []
    dropped: list[QueuedWork] = []
    for q in sorted(data.queue, key=QueuedWork.batch_key):
        if q.kind == "lrp":
            app = data.apps.get(q.process_guid)
            if app is None or (q.process_guid, q.index) not in data.unclaimed:
                dropped.append(q)
                continue
            items.append(LRPWork(q.process_guid, q.index, app.memory_mb, app.disk_mb, app.rootfs,
                                 tuple(app.volume_drivers), tuple(app.placement_tags),
                                 total_instances=max(app.instances, q.index + 1), ref=q))
            continue
        sim_task = data.tasks.get(q.task_guid)
        if (sim_task is None or sim_task.task.state != core.PENDING
                or sim_task.placement_mode != "diego"):
            dropped.append(q)
            continue
        items.append(TaskWork(q.task_guid, sim_task.memory_mb, sim_task.disk_mb, sim_task.rootfs,
                              tuple(sim_task.volume_drivers), tuple(sim_task.placement_tags),
                              ref=q))
    return items, dropped


def auction_round(data: RoundInput) -> ChangeSet:
    """One auction at ``data.at``; see the module docstring."""
    started = time.perf_counter()
    at = data.at
    change = ChangeSet(at)
    fetch = data.fetch if data.fetch is not None else fetch_states(data)
    states = list(fetch.states)
    fetch_seconds = time.perf_counter() - started
    items, dropped = _work_items(data)
    batch = order_batch(dedupe(items), data.config.go_compat)
    duplicates: list[QueuedWork] = []
    if len(batch) != len(items):  # ``dedupe`` only drops: the same length keeps every item
        kept = {id(item.ref) for item in batch}
        duplicates = [item.ref for item in items if id(item.ref) not in kept]
    result = schedule(states, batch, data.config, explain=data.explain, ordered=True,
                      holders=data.holders, columns=fetch.columns)
    outcomes, unreachable = _commit(result, fetch.by_id, data.loads, at)
    result = apply_commits(result, outcomes)
    # ``order`` names ``items`` (the batch) one for one: no identifier made again per item.
    by_ident = dict(zip(result.order, result.items, strict=True))
    _claim(change, result, by_ident, unreachable, data)
    finished = _report_failures(change, result, by_ident, data)
    _carry_over(change, result, by_ident, finished)
    change.queue_remove += [by_ident[i].ref.seq for i in result.placements]
    change.queue_remove += [q.seq for q in dropped + duplicates]
    _count(change, result, by_ident)
    wall = time.perf_counter() - started
    queue_times = {i: w.ref.queued_at for i, w in by_ident.items()}
    attempts = {i: w.ref.attempts + 1 for i, w in by_ident.items()}
    change.auction = RoundRecord(
        at=at, config=data.config, states=states, batch=batch, result=result,
        outcomes=outcomes, unreachable=unreachable,
        stats=auction_stats(states, result, queue_times, attempts, at, wall_seconds=wall,
                            holders=data.holders, columns=fetch.columns),
        fetch_seconds=fetch_seconds, wall_seconds=wall,
        waits=[at - queue_times[i] for i in result.placements],
        attempts=[attempts[i] for i in result.placements])
    change.gauges["AuctioneerFetchStatesDuration"] = fetch_seconds * 1e9
    change.notes.append(Note("auction_completed", data={
        "items": len(batch), "placed": len(result.placements), "failed": len(result.failures)}))
    change.touched |= {c for c in result.placements.values() if c not in unreachable}
    return change


def _commit(result: AuctionResult, cells: Mapping[str, SimCell], loads: Mapping[str, Load],
            at: float) -> tuple[dict[str, CommitOutcome], set[str]]:
    """Each winning cell performs its work against its real free resources (auction.md 7).

    A cell that stopped answering since the fetch answers nothing: its work counts as
    placed and is not carried over (auction.md 1 step 8).
    """
    outcomes: dict[str, CommitOutcome] = {}
    unreachable: set[str] = set()
    for cell_id, work in result.won.items():
        cell = cells.get(cell_id)
        if cell is None or cell.silent or not cell.has_presence(at):
            unreachable.add(cell_id)
            continue
        outcomes[cell_id] = commit(free_resources(cell, loads[cell_id]), cell.proxy_memory_mb,
                                   work, evacuating=cell.state == DRAINING)
    return outcomes, unreachable


def _claim(change: ChangeSet, result: AuctionResult, by_ident: Mapping[str, Any],
           unreachable: set[str], data: RoundInput) -> None:
    """The winner claims its LRPs (CLAIMED, ready after the app's start delay) and starts
    its tasks (RUNNING, done after their run time). Work on a cell that did not answer
    the commit may be running there: convergence decides (auction.md 1 step 8)."""
    at = data.at
    started_per_cell: dict[str, int] = {}
    unclaimed, apps, lrp_ops, events = data.unclaimed, data.apps, change.lrp_ops, change.events
    for ident, cell_id in result.placements.items():
        if cell_id in unreachable:
            continue
        work = by_ident[ident]
        if type(work) is LRPWork:
            guid, index = work.process_guid, work.index
            before = unclaimed[(guid, index)]
            delay = apps[guid].start_delay_s
            tag = before.modification_tag_index + 1
            after = _claimed(before, core.CLAIMED, cell_id, instance_guid(guid, index, at, tag),
                             "", at, at + delay, None, tag)
            lrp_ops.append(RowUpdate(before.key, before, after))
            events += ev.changed(before, after, group=True)
            continue
        sim_task = data.tasks[ident]
        started = task_states.start(sim_task.task, cell_id, at)
        if isinstance(started, BBSError):
            continue
        started.finishes_at = at + sim_task.duration_s
        change.task_ops.append(TaskUpdate(sim_task.task, started))
        change.events.append(ev.Event(ev.TASK_CHANGED, before=sim_task.task, after=started))
        started_per_cell[cell_id] = started_per_cell.get(cell_id, 0) + 1
    change.counters.update({f"TasksStarted.{c}": n for c, n in started_per_cell.items()})


_claimed = core.evolver("state", "cell_id", "instance_guid", "placement_error", "since", "ready_at",
                        "crash_at", "modification_tag_index")


def _report_failures(change: ChangeSet, result: AuctionResult, by_ident: Mapping[str, Any],
                     data: RoundInput) -> set[str]:
    """Fail (LRP) or Reject (task) each failure (auction.md 1 step 7); returns the tasks
    the 4th rejection failed (they leave the queue)."""
    at = data.at
    finished: set[str] = set()
    for ident, error in result.failures.items():
        work = by_ident[ident]
        if isinstance(work, LRPWork):
            before = data.unclaimed[(work.process_guid, work.index)]
            after = core.evolve(before, placement_error=core.truncate_message(error), since=at,
                                modification_tag_index=before.modification_tag_index + 1)
            change.lrp_ops.append(RowUpdate(before.key, before, after))
            change.events += ev.changed(before, after, group=True)
            continue
        task = data.tasks[ident].task
        rejected = task_states.reject(task, error, at)
        if isinstance(rejected, BBSError):
            continue
        change.task_ops.append(TaskUpdate(task, rejected))
        change.events.append(ev.Event(ev.TASK_CHANGED, before=task, after=rejected))
        if rejected.state != core.PENDING:
            finished.add(ident)
            if rejected.callback_url:
                change.callbacks.append(ident)
    return finished


def _carry_over(change: ChangeSet, result: AuctionResult, by_ident: Mapping[str, Any],
                finished: set[str]) -> None:
    """Failed and rejected items join the next batch first, in this batch's order [project
    rule, auction.md 1 step 8]; a task its last rejection failed leaves the queue."""
    for position, ident in enumerate(result.order):
        if ident not in result.failures:
            continue
        q: QueuedWork = by_ident[ident].ref
        if ident in finished:
            change.queue_remove.append(q.seq)
            continue
        change.queue_put.append(QueuedWork(
            q.seq, q.kind, q.process_guid, q.index, q.task_guid, q.queued_at, q.reason,
            carried=True, batch_position=position, attempts=q.attempts + 1,
            last_error=result.failures[ident]))


def _count(change: ChangeSet, result: AuctionResult, by_ident: Mapping[str, Any]) -> None:
    lrp_placed = sum(1 for i in result.placements if isinstance(by_ident[i], LRPWork))
    lrp_failed = sum(1 for i in result.failures if isinstance(by_ident[i], LRPWork))
    change.counters.update({
        "AuctioneerLRPAuctionsStarted": lrp_placed,
        "AuctioneerLRPAuctionsFailed": lrp_failed,
        "AuctioneerTaskAuctionsStarted": len(result.placements) - lrp_placed,
        "AuctioneerTaskAuctionsFailed": len(result.failures) - lrp_failed,
    })

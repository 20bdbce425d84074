"""The auctioneer: one auction at a time over the durable queue (auction.md 1).

``auctioneer_run`` holds the cluster lock ``auctioneer`` and runs auctions back to back
while new work is queued: no batch interval, no batch cap. Each auction, in one
transaction: fetch cell states, form the batch (carried-over first), schedule with the
engine, commit to each winning cell, claim winners, report failures (Fail / Reject),
carry over what failed or was rejected, record the AuctionRun, and publish after commit.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter as Tally
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import CharField, F, Value
from django.db.models.functions import Cast, Concat

from auction.bbs import task_states
from auction.bbs.errors import BBSError as CoreError
from auction.engine import (
    AuctionConfig,
    CommitOutcome,
    LRPWork,
    TaskWork,
    apply_commits,
    commit,
    dedupe,
    distribution_score,
    final_memory_in_use,
    memory_in_use,
    order_batch,
    schedule,
)
from auction.live.groups import group
from auction.live.publish import publish_after_commit
from auction.models import ActualLRP, AuctionRun, BBSEvent, Cell, DesiredLRP, PendingWork, Task
from auction.selectors.auction_settings import auction_settings_config
from auction.selectors.bbs import TASK_COLUMNS, task_from_values
from auction.selectors.cells import answering_cells, cell_loads, cell_states, free_resources
from auction.selectors.clock import sim_now
from auction.services.callbacks import task_callbacks_request
from auction.services.counters import counters_add
from auction.services.events import event_record, events_store
from auction.services.locks import cluster_lock

# Full decision records for replay only when the auction is small enough to keep them:
# one verdict per (item, cell), at most as many as a 200-item auction over 200 cells, so a
# handful of items over 1,000 cells is still replayable (dashboard.md A8).
EXPLAIN_MAX_VERDICTS = 200 * 200
# The newest auctions keep every verdict; older ones a summary per item (dashboard.md 2).
KEEP_FULL_RECORDS = 20
MAX_AUCTIONS_PER_RUN = 100


@dataclass(slots=True)
class AuctionSummary:
    run_id: int
    placed: int
    failed: int
    items: int


def auctioneer_run(trigger: str = "queue", config: AuctionConfig | None = None) -> list[AuctionSummary]:
    """Run auctions while new work waits; return [] when another auctioneer holds the lock."""
    summaries: list[AuctionSummary] = []
    with cluster_lock("auctioneer") as held:
        if not held:
            return summaries
        for _ in range(MAX_AUCTIONS_PER_RUN):
            # Carried-over work alone does not start an auction (auction.md 1 step 8).
            if not PendingWork.objects.filter(carried=False).exists():
                break
            summary = auction_once(trigger, config)
            if summary is None:
                break
            summaries.append(summary)
            trigger = "queue"
    return summaries


def _work_items(pending: Sequence[PendingWork]) -> tuple[list[Any], list[PendingWork]]:
    """Build engine work for the rows still waiting; the rest are dropped from the queue.

    Only an ORDINARY UNCLAIMED instance or a PENDING Diego task can be auctioned: a
    duplicate request for an instance already claimed is dropped here, so no instance
    is ever placed twice (auction.md 1 step 4).
    """
    lrp_keys = {(p.process_guid, p.index) for p in pending if p.kind == PendingWork.Kind.LRP}
    guids = {g for g, _ in lrp_keys}
    unclaimed = set(ActualLRP.objects.filter(
        desired_id__in=guids, presence=ActualLRP.Presence.ORDINARY, state=ActualLRP.State.UNCLAIMED,
    ).values_list("desired_id", "index"))
    specs = {d.process_guid: d for d in DesiredLRP.objects.filter(process_guid__in=guids)}
    task_guids = {p.task_guid for p in pending if p.kind == PendingWork.Kind.TASK}
    tasks = {t.task_guid: t for t in Task.objects.filter(
        task_guid__in=task_guids, state=Task.State.PENDING, placement_mode=Task.PlacementMode.DIEGO)}
    items: list[Any] = []
    dropped: list[PendingWork] = []
    for row in pending:
        if row.kind == PendingWork.Kind.LRP:
            spec = specs.get(row.process_guid)
            if spec is None or (row.process_guid, row.index) not in unclaimed:
                dropped.append(row)
                continue
            items.append(LRPWork(
                row.process_guid, row.index, spec.memory_mb, spec.disk_mb, spec.rootfs,
                tuple(spec.volume_drivers), tuple(spec.placement_tags),
                total_instances=max(spec.instances, row.index + 1), ref=row,
            ))
        else:
            task = tasks.get(row.task_guid)
            if task is None:
                dropped.append(row)
                continue
            items.append(TaskWork(task.task_guid, task.memory_mb, task.disk_mb, task.rootfs,
                                  tuple(task.volume_drivers), tuple(task.placement_tags), ref=row))
    return items, dropped


def auction_once(trigger: str = "queue", config: AuctionConfig | None = None) -> AuctionSummary | None:
    if config is None:
        config = auction_settings_config()
    wall_start = time.perf_counter()
    wall_epoch = time.time()
    with transaction.atomic():
        now = sim_now()
        pending = list(PendingWork.objects.select_for_update().order_by("-carried", "batch_position", "id"))
        if not pending:
            return None
        fetch_start = time.perf_counter()
        cells = answering_cells(now)
        states = cell_states(cells)
        fetch_ms = (time.perf_counter() - fetch_start) * 1000
        items, dropped = _work_items(pending)
        # De-duplicate keeping the first occurrence: carried rows come first (step 4).
        batch = order_batch(dedupe(items), config.go_compat)
        kept = {id(item.ref) for item in batch}
        duplicates = [item.ref for item in items if id(item.ref) not in kept]
        explain = len(batch) * max(len(states), 1) <= EXPLAIN_MAX_VERDICTS
        result = schedule(states, batch, config, explain=explain, ordered=True)
        outcomes, unreachable = _commit(result.won, now)
        result = apply_commits(result, outcomes)
        placed = dict(result.placements)
        by_ident = {item.identifier: item for item in batch}
        carried_in = {item.identifier: item.ref.attempts for item in batch if item.ref.carried}
        batch_record = _batch_record(batch)
        events = _claim(placed, by_ident, unreachable, now)
        events += _report_failures(result.failures, by_ident, now)
        _carry_over(result.order, result.failures, by_ident)
        done = [by_ident[i].ref.pk for i in placed] + [r.pk for r in dropped] + [r.pk for r in duplicates]
        PendingWork.objects.filter(pk__in=done).delete()
        duration_ms = (time.perf_counter() - wall_start) * 1000
        run = AuctionRun.objects.create(
            started_at=now, wall_started=wall_epoch, duration_ms=duration_ms, fetch_ms=fetch_ms, trigger=trigger,
            strategy=config.placement_strategy, go_compat=config.go_compat, items=len(batch), placed=len(placed),
            failed=len(result.failures),
            cells=[_cell_record(s) for s in states],
            order=result.order, placements=placed, failures=result.failures,
            scores={k: v for k, v in result.scores.items() if k in placed},
            carried_in=carried_in,
            commit={cell: ("unreachable" if cell in unreachable else
                           {"accepted": [w.identifier for w in o.accepted],
                            "rejected": [w.identifier for w in o.rejected]})
                    for cell, o in outcomes.items()} | {cell: "unreachable" for cell in unreachable},
            explanations=[e.to_dict() for e in result.explanations] if result.explanations else None,
            detail="full" if result.explanations else "none", batch=batch_record,
            quality={
                "distribution_initial": distribution_score(memory_in_use(states)),
                "distribution_final": distribution_score(final_memory_in_use(states, result)),
            },
        )
        _count(result, by_ident, placed, fetch_ms)
        _trim_old_records(run.pk)
        events_store(events + [BBSEvent(at=now, type="auction_completed", key=f"auction-{run.pk}",
                                        data={"items": len(batch), "placed": len(placed),
                                              "failed": len(result.failures)})])
        touched = sorted(set(placed.values()))
        publish_after_commit(group("zones"), {"type": "live.cells", "cells": touched})
    return AuctionSummary(run.pk, len(placed), len(result.failures), len(batch))


def _batch_record(batch: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """What the replay's queue strip shows per item (dashboard.md A2, A3).

    An orphan (its instance lost with a failed cell) still has its SUSPECT copy on that
    cell; an evacuation replacement has its EVACUATING copy on the draining one.
    """
    keys = {(w.process_guid, w.index) for w in batch if isinstance(w, LRPWork)}
    copies: dict[tuple[str, int], tuple[str, str]] = {}
    guids = sorted({g for g, _ in keys})
    for start in range(0, len(guids), 500):
        for guid, index, presence, cell_id in ActualLRP.objects.filter(
            desired_id__in=guids[start:start + 500],
            presence__in=(ActualLRP.Presence.SUSPECT, ActualLRP.Presence.EVACUATING),
        ).values_list("desired_id", "index", "presence", "cell_id"):
            if (guid, index) in keys:
                copies[(guid, index)] = (presence, cell_id)
    record: dict[str, dict[str, Any]] = {}
    for work in batch:
        row = work.ref
        entry: dict[str, Any] = {"kind": "lrp" if isinstance(work, LRPWork) else "task",
                                 "memory_mb": work.memory_mb, "disk_mb": work.disk_mb}
        if row.reason:
            entry["reason"] = row.reason
        if row.carried:
            entry["attempts"] = row.attempts
            entry["previous_error"] = row.last_error
        if isinstance(work, LRPWork):
            presence, cell_id = copies.get((work.process_guid, work.index), ("", ""))
            if presence == ActualLRP.Presence.SUSPECT and cell_id:
                entry["from_cell"] = cell_id
            if presence == ActualLRP.Presence.EVACUATING or row.reason == "evacuation":
                entry["evac"] = True
                if cell_id:
                    entry["from_cell"] = cell_id
        record[work.identifier] = entry
    return record


def _trim_old_records(newest_id: int) -> None:
    """Auctions older than the newest KEEP_FULL_RECORDS keep a summary per item."""
    from auction.selectors.auctions import explanation_summary

    kept = list(AuctionRun.objects.filter(pk__lte=newest_id).order_by("-pk")
                .values_list("pk", flat=True)[:KEEP_FULL_RECORDS])
    if len(kept) < KEEP_FULL_RECORDS:
        return
    old = AuctionRun.objects.filter(pk__lt=kept[-1], detail="full").only("pk", "explanations")
    for run in old.iterator(chunk_size=20):
        if run.explanations is None:
            run.detail = "none"
        else:
            run.explanations = [explanation_summary(note) for note in run.explanations]
            run.detail = "summary"
        run.save(update_fields=["explanations", "detail"])


def _commit(won: dict[str, list[Any]], now: float) -> tuple[dict[str, CommitOutcome], set[str]]:
    """Each winning cell performs its work against its real free resources now (auction.md 7).

    A cell that stopped answering since the fetch (failed meanwhile) answers nothing:
    its work counts as placed and is not carried over (auction.md 1 step 8).
    """
    cells = {c.cell_id: c for c in Cell.objects.select_for_update().filter(cell_id__in=list(won))}
    loads = cell_loads(list(won), {cid: c.proxy_memory_mb for cid, c in cells.items()})
    outcomes: dict[str, CommitOutcome] = {}
    unreachable: set[str] = set()
    for cell_id, work in won.items():
        cell = cells.get(cell_id)
        if cell is None or cell.state == Cell.State.FAILED or not cell.has_presence(now):
            unreachable.add(cell_id)
            continue
        free = free_resources(cell, loads[cell_id]) if cell_id in loads else free_resources(cell, _empty())
        outcomes[cell_id] = commit(free, cell.proxy_memory_mb, work,
                                   evacuating=cell.state == Cell.State.DRAINING)
    return outcomes, unreachable


def _empty():  # type: ignore[no-untyped-def]
    from auction.selectors.cells import CellLoad

    return CellLoad()


def _claim(placed: dict[str, str], by_ident: dict[str, Any], unreachable: set[str], now: float) -> list[BBSEvent]:
    """The winning cell claims its LRPs (CLAIMED) and starts its tasks (RUNNING)."""
    events: list[BBSEvent] = []
    delays = dict(DesiredLRP.objects.filter(
        process_guid__in={w.process_guid for w in by_ident.values() if isinstance(w, LRPWork)}
    ).values_list("process_guid", "start_delay_s"))
    task_rows = {t.task_guid: t for t in Task.objects.filter(
        task_guid__in=[i for i, w in by_ident.items() if isinstance(w, TaskWork) and i in placed])}
    started_per_cell: Tally[str] = Tally()
    lrp_wins = {(w.process_guid, w.index): (ident, cell_id) for ident, cell_id in placed.items()
                if cell_id not in unreachable and isinstance(w := by_ident[ident], LRPWork)}
    # One locked read, then one UPDATE per (cell, start delay): the claims of an auction
    # share everything but the cell and the instance guid, which is the auction's token
    # plus the row id (unique), so no per-row statement is needed.
    rows = _unclaimed_rows(lrp_wins)
    token = uuid.uuid4().hex[:16]
    groups: dict[tuple[str, float], list[int]] = {}
    for row in rows:
        ident, cell_id = lrp_wins[(row.desired_id, row.index)]
        groups.setdefault((cell_id, delays.get(row.desired_id, 0.0)), []).append(row.pk)
        events.append(BBSEvent(at=now, type="actual_lrp_instance_changed", key=ident,
                               cell_id=cell_id, data={"after": {"state": "CLAIMED"}}))
    for (cell_id, delay), pks in groups.items():
        ActualLRP.objects.filter(pk__in=pks).update(
            state=ActualLRP.State.CLAIMED, cell_id=cell_id, placement_error="", since=now,
            ready_at=now + delay, modification_tag_index=F("modification_tag_index") + 1,
            instance_guid=Concat(Value(f"{token}-"), Cast("id", output_field=CharField())),
        )
    for ident, cell_id in placed.items():
        work = by_ident[ident]
        if cell_id in unreachable or isinstance(work, LRPWork):
            continue  # an unreachable cell may be running it; convergence decides (auction.md 1.8)
        task = task_rows[ident]
        started = task_states.start(task_from_values(_task_values(task)), cell_id, now)
        if isinstance(started, CoreError):
            continue
        Task.objects.filter(pk=task.pk, state=Task.State.PENDING).update(
            state=Task.State.RUNNING, cell_id=cell_id, updated_at=now,
            finishes_at=now + task.duration_s)
        started_per_cell[cell_id] += 1
        events.append(BBSEvent(at=now, type="task_changed", key=ident, cell_id=cell_id,
                               data={"after": {"state": "RUNNING"}}))
    counters_add({f"TasksStarted.{cell}": n for cell, n in started_per_cell.items()})
    return events


def _unclaimed_rows(keys: dict[tuple[str, int], Any]) -> list[ActualLRP]:
    """The ORDINARY UNCLAIMED rows of ``keys``, locked; a row claimed meanwhile is absent."""
    guids = sorted({guid for guid, _ in keys})
    rows: list[ActualLRP] = []
    for start in range(0, len(guids), 500):
        rows += [
            row for row in ActualLRP.objects.select_for_update().filter(
                desired_id__in=guids[start:start + 500], presence=ActualLRP.Presence.ORDINARY,
                state=ActualLRP.State.UNCLAIMED)
            if (row.desired_id, row.index) in keys
        ]
    return rows


def _task_values(task: Task) -> tuple[Any, ...]:
    return tuple(getattr(task, "pk" if c == "id" else c) for c in TASK_COLUMNS)


def _report_failures(failures: dict[str, str], by_ident: dict[str, Any], now: float) -> list[BBSEvent]:
    """Fail (LRP: stays UNCLAIMED with the error) or Reject (task) (auction.md 1 step 7)."""
    events: list[BBSEvent] = []
    for ident, error in failures.items():
        work = by_ident[ident]
        if isinstance(work, LRPWork):
            ActualLRP.objects.filter(
                desired_id=work.process_guid, index=work.index,
                presence=ActualLRP.Presence.ORDINARY, state=ActualLRP.State.UNCLAIMED,
            ).update(placement_error=error, since=now,
                     modification_tag_index=F("modification_tag_index") + 1)
            events.append(BBSEvent(at=now, type="actual_lrp_instance_changed", key=ident,
                                   data={"after": {"state": "UNCLAIMED", "placement_error": error}}))
            continue
        task = Task.objects.select_for_update().get(task_guid=ident)
        rejected = task_states.reject(task_from_values(_task_values(task)), error, now)
        if isinstance(rejected, CoreError):
            continue
        Task.objects.filter(pk=task.pk).update(
            state=rejected.state, rejection_count=rejected.rejection_count,
            rejection_reason=rejected.rejection_reason, failed=rejected.failed,
            failure_reason=rejected.failure_reason, updated_at=rejected.updated_at,
            first_completed_at=rejected.first_completed_at)
        events.append(BBSEvent(at=now, type="task_changed", key=ident,
                               data={"after": {"state": rejected.state, "rejection_count": rejected.rejection_count}}))
        if rejected.state == Task.State.COMPLETED and task.completion_callback_url:
            task_callbacks_request([ident])
    return events


def _carry_over(order: list[str], failures: dict[str, str], by_ident: dict[str, Any]) -> None:
    """Failed and rejected items go first into the next batch, in this batch's order.

    A task that its 4th rejection failed is no longer PENDING: it leaves the queue.
    """
    failed_tasks = set(Task.objects.filter(
        task_guid__in=[i for i in failures if isinstance(by_ident[i], TaskWork)],
    ).exclude(state=Task.State.PENDING).values_list("task_guid", flat=True))
    carried, finished = [], []
    for position, ident in enumerate(order):
        if ident not in failures:
            continue
        row = by_ident[ident].ref
        if ident in failed_tasks:
            finished.append(row.pk)
            continue
        row.carried, row.batch_position = True, position
        row.attempts += 1
        row.last_error = failures[ident]
        carried.append(row)
    PendingWork.objects.bulk_update(carried, ["carried", "batch_position", "attempts", "last_error"])
    PendingWork.objects.filter(pk__in=finished).delete()


def _count(result: Any, by_ident: dict[str, Any], placed: dict[str, str], fetch_ms: float) -> None:
    lrp_placed = sum(1 for i in placed if isinstance(by_ident[i], LRPWork))
    lrp_failed = sum(1 for i in result.failures if isinstance(by_ident[i], LRPWork))
    counters_add({
        "AuctioneerLRPAuctionsStarted": lrp_placed,
        "AuctioneerLRPAuctionsFailed": lrp_failed,
        "AuctioneerTaskAuctionsStarted": len(placed) - lrp_placed,
        "AuctioneerTaskAuctionsFailed": len(result.failures) - lrp_failed,
    })
    from auction.models import Counter

    Counter.objects.update_or_create(name="AuctioneerFetchStatesDuration",
                                     defaults={"value": int(fetch_ms * 1e6)})


def _cell_record(state: Any) -> dict[str, Any]:
    return {
        "cell_id": state.cell_id, "zone": state.zone, "index": state.index,
        "total": [state.total.memory_mb, state.total.disk_mb, state.total.containers],
        "available": [state.available.memory_mb, state.available.disk_mb, state.available.containers],
        "starting_containers": state.starting_containers,
    }


__all__ = ["auction_once", "auctioneer_run", "event_record"]

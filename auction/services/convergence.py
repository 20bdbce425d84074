"""One convergence pass over the database (bbs.md 4, 7, 9).

Load the snapshot, let the pure core decide, then in one transaction: apply the row
changes (each re-checked against the row the core read), send the stops (the
simulated rep removes the container at once), prune domains, record the metrics and
the pass, then send the pass's single start request, and publish after commit.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from django.db import transaction

from auction.bbs import types as core
from auction.bbs.convergence import ConvergenceResult, converge
from auction.bbs.events import removed
from auction.live.groups import group
from auction.live.publish import publish_after_commit
from auction.models import ActualLRP, Cell, ConvergenceRun, Counter, Domain, Task
from auction.selectors.bbs import bbs_snapshot
from auction.services.callbacks import task_callbacks_request
from auction.services.counters import counters_add
from auction.services.events import event_record, events_record
from auction.services.otto import otto_refeed
from auction.services.rows import apply_row_ops, apply_task_ops
from auction.services.work import work_request_lrps, work_request_tasks


@dataclass(slots=True)
class PassSummary:
    run_id: int
    at: float
    duration_ns: int
    result: ConvergenceResult


def _keys(keys: list[core.LRPKey]) -> list[str]:
    return sorted(core.lrp_id(k) for k in keys)


def convergence_run(now: float) -> PassSummary:
    started = time.perf_counter_ns()
    loaded = bbs_snapshot(now)
    result = converge(loaded.snapshot, epoch=lambda key: uuid.uuid4().hex)
    with transaction.atomic():
        apply_row_ops(result.lrp.ops, loaded.actual_pk)
        apply_task_ops(result.tasks.ops, loaded.task_pk)
        # Step 6: completed tasks whose callback has not happened go back to the worker.
        task_callbacks_request(result.tasks.callbacks)
        events = list(result.events)
        events += _send_stops(result, loaded.actual_pk, now)
        if result.lrp.pruned_domains:
            Domain.objects.filter(name__in=result.lrp.pruned_domains).delete()
        duration_ns = time.perf_counter_ns() - started
        metrics = dict(result.metrics)
        metrics["ConvergenceLRPDuration"] = duration_ns
        metrics["ConvergenceTaskDuration"] = duration_ns
        lrp = result.lrp
        run = ConvergenceRun.objects.create(
            at=now, duration_ns=duration_ns, metrics=metrics,
            lrp={name: _keys(getattr(lrp, name)) for name in (
                "start", "create", "retire", "suspect", "unclaim", "promote", "remove_suspect",
                "remove_evacuating")},
            tasks={"start": sorted(result.tasks.start), "fail": result.tasks.fail,
                   "complete": sorted(result.tasks.complete), "delete": sorted(result.tasks.delete)},
        )
        counters_add({"ConvergenceLRPRuns": 1, "ConvergenceTaskRuns": 1})
        Counter.objects.update_or_create(name="ConvergenceLRPDuration", defaults={"value": duration_ns})
        events_record(events, now)
        event_record("convergence_completed", now, key=f"pass-{run.pk}",
                     **{k: len(v) for k, v in run.lrp.items()}, tasks_failed=len(result.tasks.fail))
        # The start request goes out after the metrics are recorded (bbs.md 4.3).
        work_request_lrps(result.start_request.lrps, now, "converge")
        # Otto tasks go to tasks.for_auction instead, never to Diego (otto.md 7, 9).
        otto_guids = set(Task.objects.filter(task_guid__in=list(result.start_request.tasks),
                                             placement_mode=Task.PlacementMode.OTTO)
                         .values_list("task_guid", flat=True))
        work_request_tasks([g for g in result.start_request.tasks if g not in otto_guids], now, "converge")
        otto_refeed(now)
        touched = sorted({op.before.cell_id for op in result.lrp.ops if hasattr(op, "before")} - {""})
        publish_after_commit(group("zones"), {"type": "live.cells", "cells": touched})
    return PassSummary(run.pk, now, duration_ns, result)


def _send_stops(result: ConvergenceResult, pk_by_key: dict[core.RowKey, int], now: float) -> list:
    """Retiring a CLAIMED/RUNNING instance sends its cell a stop (bbs.md 2.3 Retire).

    The simulated rep answers at once: it removes the container and reports it, so the
    row goes in the same transaction. A failed cell cannot be reached: nothing happens.
    """
    events = []
    reachable = set(Cell.objects.exclude(state=Cell.State.FAILED).values_list("cell_id", flat=True))
    for stop in result.lrp.stops:
        if stop.cell_id not in reachable:
            continue
        pk = pk_by_key.get(stop.key)
        deleted, _ = ActualLRP.objects.filter(
            pk=pk, cell_id=stop.cell_id, instance_guid=stop.instance_guid).delete() if pk else (0, {})
        if deleted:
            row = result.lrp.written.get(stop.key)
            if row is not None:
                events += removed(row, group=True)
    return events



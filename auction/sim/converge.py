"""One convergence pass as the simulated cluster runs it (bbs.md 4, 7, 9).

The pure BBS core decides (``auction.bbs.convergence``); this adds what the cluster around
it does: a retired CLAIMED/RUNNING instance gets a stop, which the simulated rep answers
at once by removing the container, unless its cell is failed and cannot be reached
(bbs.md 2.3 Retire); the pass records its metrics, then sends its single start request
(bbs.md 4.3: after the metrics; Otto tasks go to the open auction instead, otto.md 9);
the next pass is one interval later (timer only, bbs.md 4.1).
"""

from __future__ import annotations

import time
from collections.abc import Container
from dataclasses import dataclass, field, replace
from operator import attrgetter

from auction.bbs import events as ev
from auction.bbs import types as core
from auction.bbs.changes import RowDelete
from auction.bbs.convergence import ConvergenceResult, KeptParts, converge
from auction.sim.changes import ChangeSet, Note, OttoRefeed
from auction.sim.ids import row_epoch

LRP_LISTS = ("start", "create", "retire", "suspect", "unclaim", "promote", "remove_suspect",
             "remove_evacuating")


#: ``ActualLRP.key`` as one C call (a pass orders every row of the cluster).
_row_order = attrgetter("process_guid", "index", "presence")


@dataclass(slots=True)
class PassRecord:
    """What the pass decided, for the /lrps/ page and the metrics header."""

    at: float
    metrics: dict[str, int]
    lrp: dict[str, list[str]]
    tasks: dict[str, object]
    result: ConvergenceResult = field(repr=False)


def convergence_pass(snapshot: core.Snapshot, silent: Container[str], otto_tasks: Container[str],
                     interval: float, kept: KeptParts | None = None) -> ChangeSet:
    """The pass at ``snapshot.now``; ``silent`` are the failed cells (no stop reaches
    them), ``otto_tasks`` the pending tasks the open auction places, ``kept`` what the
    store kept of its last pass (``converge``)."""
    at = snapshot.now
    started = time.perf_counter_ns()
    # One canonical order of the records, whatever order a store read them in, so the
    # pass's actions and events come out in the same order from either store.
    if snapshot.ordered:
        snapshot = replace(snapshot, tasks=sorted(snapshot.tasks, key=lambda t: t.task_guid))
    else:
        snapshot = replace(
            snapshot, actual=sorted(snapshot.actual, key=_row_order),
            tasks=sorted(snapshot.tasks, key=lambda t: t.task_guid),
            desired=sorted(snapshot.desired, key=lambda d: d.process_guid), ordered=True)
    result = converge(snapshot, epoch=lambda key: row_epoch(key, at), kept=kept)
    duration = time.perf_counter_ns() - started
    change = ChangeSet(at)
    change.lrp_ops += result.lrp.ops
    change.task_ops += result.tasks.ops
    change.events += result.events
    change.callbacks += result.tasks.callbacks
    stopped = {stop.key for stop in result.lrp.stops}
    before = {key: row for row in snapshot.actual if (key := _row_order(row)) in stopped} if stopped else {}
    written = result.lrp.written
    for stop in result.lrp.stops:
        row = written[stop.key] if stop.key in written else before.get(stop.key)
        if (row is None or stop.cell_id in silent or row.cell_id != stop.cell_id
                or row.instance_guid != stop.instance_guid):
            continue
        change.lrp_ops.append(RowDelete(row.key, row))
        change.events += ev.removed(row, group=True)
    change.domains_removed += result.lrp.pruned_domains
    lrp = result.lrp
    change.convergence = PassRecord(
        at=at, metrics={**result.metrics, "ConvergenceLRPDuration": duration,
                        "ConvergenceTaskDuration": duration},
        lrp={name: sorted(core.lrp_id(k) for k in getattr(lrp, name)) for name in LRP_LISTS},
        tasks={"start": sorted(result.tasks.start), "fail": dict(result.tasks.fail),
               "complete": sorted(result.tasks.complete), "delete": sorted(result.tasks.delete)},
        result=result)
    change.counters.update({"ConvergenceLRPRuns": 1, "ConvergenceTaskRuns": 1})
    change.gauges["ConvergenceLRPDuration"] = duration
    change.notes.append(Note("convergence_completed", data={
        **{name: len(v) for name, v in change.convergence.lrp.items()},
        "tasks_failed": len(result.tasks.fail)}))
    # The start request goes out after the metrics are recorded (bbs.md 4.3).
    change.request_lrps(list(result.start_request.lrps), at, "converge")
    change.request_tasks([g for g in result.start_request.tasks if g not in otto_tasks], at,
                         "converge")
    change.next_convergence_at = at + interval
    # Otto tasks with no live auction go back to the open auction after every pass.
    change.intents.append(OttoRefeed(at))
    change.touched |= {op.before.cell_id for op in result.lrp.ops
                       if hasattr(op, "before") and op.before.cell_id}
    return change
